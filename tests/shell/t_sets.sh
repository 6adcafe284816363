#!/bin/sh
# shellcheck disable=SC1091  # sourced helpers
# test: seconds 25
# Sets of leases on a local store (issue 27, protocol.md "Sets"): the CLI's
# all-or-nothing answers, then 6 processes each taking random pairs of 4
# names as one set for 15 s (make check runs on 2 cores: half the issue's
# 30 s; SETS_DUR overrides) — never two holders of a name, never a partial
# hold, every process acquires (sets_lib.sh).
. "$(dirname "$0")/lease_lib.sh"
. "$(dirname "$0")/sets_lib.sh"

# all or nothing: a set one member of which is held takes nothing
t=$(tok b --ttl 60)
expect_rc 3 "$R" --json acquire a b c
[ "$(jout status)" = held ] || [ "$(jout status)" = already_held ] || fail "held set: $(jout status)"
[ "$(jout blocked_by)" = b ] || fail "blocked_by: $(jout blocked_by)"
git --git-dir="$S" rev-parse -q --verify refs/leases/a >/dev/null && fail "a written by a set that was not taken"
git --git-dir="$S" rev-parse -q --verify refs/leases/c >/dev/null && fail "c written by a set that was not taken"
expect_rc 0 "$R" release b --lease-token "$t"

# taken together: one token, each member its own payload and generation
expect_rc 0 "$R" --json acquire a b c --ttl 60
[ "$(jout status)" = acquired ] || fail "set acquire: $(jout status)"
st=$(jout lease_token)
[ "$(jout members.lease.lease_token)" = "<absent>" ] || true
for n in a b c; do
  [ "$("$R" --json status "$n" | jget status)" = live ] || fail "$n not live after the set acquire"
done
[ "$(git --git-dir="$S" log -1 --format=%B refs/leases/b | sed -n 's/.*"transitions":\([0-9]*\).*/\1/p')" = 1 ] ||
  fail "b's generation: the set write must continue b's own chain"
# heartbeat, transition and release of the set, with the set's token
expect_rc 0 "$R" --json transition a b c --lease-token "$st" --to working
[ "$(jout status)" = transitioned ] || fail "set transition: $(jout status)"
[ "$("$R" --json status c | jget lease.phase)" = working ] || fail "c not working"
expect_rc 0 "$R" --json heartbeat a b c --lease-token "$st" --ttl 90
[ "$(jout status)" = renewed ] || fail "set heartbeat: $(jout status)"
# a stale token releases nothing
expect_rc 0 "$R" --json release a b c --lease-token 0123456789abcdef0123456789abcdef
[ "$(jout status)" = not_owner ] || fail "stale token: $(jout status)"
[ "$("$R" --json status a | jget status)" = live ] || fail "a released with a stale token"
expect_rc 0 "$R" --json release a b c --lease-token "$st"
[ "$(jout status)" = released ] || fail "set release: $(jout status)"
for n in a b c; do
  [ "$("$R" --json status "$n" | jget status)" = released ] || fail "$n not released"
done
# bad input before any I/O
err_is 64 "named twice" "$R" acquire a b a
err_is 64 "unexpected argument" "$R" reacquire a b --lease-token "$st"

# --wait takes the whole set once its blocker goes, holding nothing before
t=$(tok y --ttl 60)
( REFLEASE_OWNER=bob REFLEASE_LOG=info "$R" acquire x y --wait 60 --ttl 60 >"$TMPDIR/w.out" 2>"$TMPDIR/w.err"; echo $? >"$TMPDIR/w.done" ) &
wait_until 30 "the set waiter waits" grep -q "waiting up to" "$TMPDIR/w.err"
[ "$("$R" --json status x | jget status)" = absent ] || fail "a waiting set holds x"
expect_rc 0 "$R" release y --lease-token "$t"
wait
[ "$(cat "$TMPDIR/w.done")" = 0 ] || { cat "$TMPDIR/w.err" >&2; fail "set waiter: exit $(cat "$TMPDIR/w.done")"; }
[ "$("$R" --json status x | jget holder.owner)" = bob ] || fail "x not bob's"
[ "$("$R" --json status y | jget holder.owner)" = bob ] || fail "y not bob's"

# remote: over git:// (and http(s), ssh) libgit2 cannot ask for an atomic
# push: refused before any I/O (the port is closed), exit 78, never separate
# writes; remote:file:// is a local store and writes sets atomically
err_is 78 "cannot write several leases in one atomic write" env REFLEASE_STORE=remote:git://127.0.0.1:9/x.git "$R" acquire a b
# N2 (issue 40): the refusal's reason on stdout too, beside "error"
grep -q '^set of 2: error — the remote store cannot write several leases in one atomic write' "$TMPDIR/out" ||
  fail "N2: no reason on stdout: $(cat "$TMPDIR/out")"
grep -q '^  a: error — not written' "$TMPDIR/out" || fail "N2: member line: $(cat "$TMPDIR/out")"
expect_rc 78 env REFLEASE_STORE=remote:git://127.0.0.1:9/x.git "$R" --json acquire a b
[ "$(jout error.code)" = configuration ] || fail "N2 --json: $(cat "$TMPDIR/out")"
jout error.message | grep -q "one atomic write" || fail "N2 --json: $(cat "$TMPDIR/out")"
expect_rc 0 env REFLEASE_STORE="remote:file://$S" "$R" --json acquire f1 f2 --ttl 60
[ "$(jout status)" = acquired ] || fail "remote:file:// set: $(jout status)"

# contention: fresh names n0..n3
sets_run 6 "${SETS_DUR:-15}" 30 20
sets_check_history "$S"
echo "t_sets: ok"
