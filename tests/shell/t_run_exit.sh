#!/bin/sh
# shellcheck disable=SC1091,SC2015,SC2016  # sourced helper; A && B || fail is intended; CMD scripts in single quotes
# `run NAME -- CMD`: CMD's environment, its exit status propagated, the lease
# released when it ends (F08), stdout left to CMD, the JSON object as the last
# line of stderr or in --json-file, held → 3 without running CMD, --wait.
. "$(dirname "$0")/lease_lib.sh"

# CMD sees the token, the fencing generation and the name; stdout is CMD's
expect_rc 0 "$R" run job --ttl 10 -- sh -c 'echo "T=$REFLEASE_LEASE_TOKEN G=$REFLEASE_TRANSITIONS N=$REFLEASE_LEASE_NAME"'
grep -Eq '^T=[0-9a-f]{32} G=0 N=job$' "$TMPDIR/out" || fail "CMD environment: $(cat "$TMPDIR/out")"
[ "$(wc -l <"$TMPDIR/out")" -eq 1 ] || fail "run wrote to stdout"
expect_rc 0 "$R" status job --json
[ "$(jout status)" = released ] || fail "not released after CMD"

# the token CMD saw is the one released; generation grows with each tenure
expect_rc 0 "$R" run job -- sh -c 'echo "$REFLEASE_LEASE_TOKEN $REFLEASE_TRANSITIONS"'
read -r tok1 gen1 <"$TMPDIR/out"
set -- "$tok1" "$gen1"
[ "$2" = 1 ] || fail "second tenure generation $2"
[ "$(git --git-dir="$S" log -1 --format=%b refs/leases/job | head -n 1 | jget lease_token)" = "$1" ] ||
  fail "released payload keeps another token"

# a non-zero exit propagates, and the lease is still released
expect_rc 7 "$R" run job -- sh -c 'exit 7'
expect_rc 0 "$R" status job --json
[ "$(jout status)" = released ] || fail "not released after a failing CMD"
# killed by a signal: 128 + signal
expect_rc 137 "$R" run job -- sh -c 'kill -KILL $$'
# CMD not found: 127, lease released
expect_rc 127 "$R" run job -- /nonexistent/cmd
expect_rc 0 "$R" status job --json
[ "$(jout status)" = released ] || fail "not released after exec failure"

# --json: the run object is the last line of stderr; CMD's stderr comes first
expect_rc 3 "$R" --json run job -- sh -c 'echo to-stderr >&2; exit 3'
[ "$(head -n 1 "$TMPDIR/err")" = to-stderr ] || fail "CMD stderr"
tail -n 1 "$TMPDIR/err" >"$TMPDIR/last"
jparse <"$TMPDIR/last"
[ "$(jv status)" = released ] || fail "run json status"
[ "$(jv reason)" = exited ] || fail "run json reason"
[ "$(jv exit_status)" = 3 ] && [ "$(jv command.exit_code)" = 3 ] || fail "run json exit"
[ "$(jv lease.lease_token)" = "<absent>" ] || fail "run json shows a released token"
[ ! -s "$TMPDIR/out" ] || fail "run --json wrote to stdout"
# --json-file F
expect_rc 0 "$R" run job --json-file "$TMPDIR/run.json" -- true
jparse <"$TMPDIR/run.json"
[ "$(jv status)" = released ] && [ "$(jv exit_status)" = 0 ] || fail "--json-file"

# --json-file is checked before the lease is taken (F08): exit 78 (an output
# file that cannot be written, as --summary; issue 23), CMD never runs,
# nothing written; a directory is refused too
expect_rc 78 "$R" run jf --json-file "$TMPDIR/nonexistent/dir/f" -- sh -c 'echo RAN'
grep -q RAN "$TMPDIR/out" && fail "CMD ran with an unwritable --json-file"
grep -q 'nonexistent/dir/f' "$TMPDIR/err" || fail "--json-file: message does not name the file"
expect_rc 78 "$R" run jf --json-file "$TMPDIR" -- true
refs | grep -q 'leases/jf$' && fail "--json-file: the lease was written"
# --json keeps stdout for CMD: a usage error's object is the last line of stderr
expect_rc 64 "$R" --json run job --ttl 0 -- true
[ ! -s "$TMPDIR/out" ] || fail "run --json: usage error on stdout"
tail -n 1 "$TMPDIR/err" | jget error.code | grep -qx usage || fail "run --json: usage error object"
expect_rc 64 "$R" run job --json --ttl 0 -- true
[ ! -s "$TMPDIR/out" ] || fail "run ... --json: usage error on stdout"

# --conflict-exit-code N (issue 19, like flock -E): reflease's 3 becomes N;
# CMD's own 3 stays 3 (the lost case, 4 → N: t_run_lost.sh)
expect_rc 0 env REFLEASE_OWNER=bob "$R" acquire cx --ttl 30
expect_rc 99 "$R" run cx --conflict-exit-code 99 -- sh -c 'echo RAN'
grep -q RAN "$TMPDIR/out" && fail "--conflict-exit-code: CMD ran"
expect_rc 0 env REFLEASE_OWNER=admin "$R" break cx --force
expect_rc 3 "$R" run cx --conflict-exit-code 99 -- sh -c 'exit 3'
expect_rc 64 "$R" run cx --conflict-exit-code 0 -- true
expect_rc 64 "$R" run cx --conflict-exit-code 256 -- true

# held by another: exit 3, CMD never runs, nothing released
expect_rc 0 env REFLEASE_OWNER=bob "$R" acquire job --ttl 5
expect_rc 3 "$R" --json run job -- sh -c 'echo RAN'
grep -q RAN "$TMPDIR/out" && fail "CMD ran without the lease"
tail -n 1 "$TMPDIR/err" | jget status | grep -q '^held$' || fail "run held status"
# --wait outlasts bob's lease (expires after 5 s): takeover, CMD runs
expect_rc 0 "$R" run job --wait 10 -- sh -c 'echo RAN'
grep -q RAN "$TMPDIR/out" || fail "CMD did not run after --wait"

# options after NAME, CMD's own options untouched, `--` optional
expect_rc 0 "$R" run job --ttl 20 sh -c 'echo "$0 $1"' --ttl x
[ "$(cat "$TMPDIR/out")" = "--ttl x" ] || fail "CMD args: $(cat "$TMPDIR/out")"
# on a terminal, CMD's process group gets the terminal (reads work, and the
# keyboard's signals reach CMD), and reflease takes it back afterwards
if command -v script >/dev/null 2>&1; then
  echo hello | script -qec "'$R' run tty -- sh -c 'read x; echo \"got \$x\"; ps -o pgid=,tpgid= -p \$\$; exit 5'" \
    /dev/null >"$TMPDIR/tty.out" 2>&1 && rc=0 || rc=$?
  [ "$rc" -eq 5 ] || { cat "$TMPDIR/tty.out"; fail "tty: exit $rc"; }
  grep -q 'got hello' "$TMPDIR/tty.out" || { cat "$TMPDIR/tty.out"; fail "tty: CMD could not read the terminal"; }
  # shellcheck disable=SC2046
  set -- $(grep -E '^ *[0-9]+ +[0-9]+ *.?$' "$TMPDIR/tty.out" | tr -d '\r')
  [ "$1" = "$2" ] || fail "tty: CMD's group ($1) is not the terminal's foreground ($2)"
fi
echo ok
