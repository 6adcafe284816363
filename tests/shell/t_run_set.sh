#!/bin/sh
# shellcheck disable=SC1091,SC2015,SC2016,SC2154  # sourced helpers (wait_rc sets rc); A && B || fail is intended; CMD scripts in single quotes
# test: seconds 25
# `run A B … -- CMD` (issue 27 item 1, protocol.md "Sets", cli.md "run"): the
# whole set is taken in one atomic acquire and held for CMD's life with one
# token; released as a set when CMD ends, on SIGTERM, and by the guard after
# a SIGKILLed run; a second set run waiting on a shared member gets in only
# after the first ends (counted independently of reflease, under flock);
# a member broken or shortened under run makes the set lost in time (F21).
. "$(dirname "$0")/lease_lib.sh"

released() { [ "$("$R" status "$1" --json 2>/dev/null | jget status)" = released ]; }
both_released() { released "$1" && released "$2"; }
# the token stored in NAME's payload (the set's one token)
stored_token() { git --git-dir="$S" log -1 --format=%b "refs/leases/$1" | jget lease_token; }

# ---- usage: a set is no --slots and no --fair (exit 64, naming both)
expect_rc 64 "$R" run a b --slots 2 -- true
grep -q -- "--slots takes one NAME (2 given)" "$TMPDIR/err" || fail "slots: $(cat "$TMPDIR/err")"
expect_rc 64 "$R" run a b --wait 5 --fair -- true
grep -q -- "--fair queues for one lease: not with a set of NAMEs" "$TMPDIR/err" || fail "fair: $(cat "$TMPDIR/err")"
expect_rc 64 "$R" run a a -- true
grep -q "named twice" "$TMPDIR/err" || fail "twice: $(cat "$TMPDIR/err")"
git --git-dir="$S" rev-parse -q --verify refs/leases/a >/dev/null && fail "a usage error wrote a"
# remote over git:// cannot write a set atomically: refused with 78 before
# any I/O (the port is closed), CMD never started
err_is 78 "cannot write several leases in one atomic write" env REFLEASE_STORE=remote:git://127.0.0.1:9/x.git "$R" run a b -- sh -c ': >"$0"' "$TMPDIR/started"
[ ! -e "$TMPDIR/started" ] || fail "remote: CMD started without the set"
# one NAME without `--` keeps its meaning: CMD starts at the first word
expect_rc 0 "$R" run one sh -c 'test "$REFLEASE_LEASE_NAMES" = one'
# N1 (issue 40): a set written without `--` is refused, never run as CMD
# under a lease set the user did not mean: `prod` is not run
mkdir -p "$TMPDIR/bin"
printf '#!/bin/sh\n: >"%s/prod-ran"\n' "$TMPDIR" >"$TMPDIR/bin/prod"
chmod +x "$TMPDIR/bin/prod"
err_is 64 "'prod' would be the command, but run's own option --ttl follows it" env PATH="$TMPDIR/bin:$PATH" "$R" run db prod --ttl 12 sh -c 'echo hi'
grep -q "run db prod ... --ttl ... -- CMD" "$TMPDIR/err" && grep -q "run db -- prod" "$TMPDIR/err" || fail "N1: no way out named: $(cat "$TMPDIR/err")"
err_is 64 "'prod' would be the command" env PATH="$TMPDIR/bin:$PATH" "$R" run db prod stage --wait=3 sh
[ ! -e "$TMPDIR/prod-ran" ] || fail "N1: prod ran"
git --git-dir="$S" rev-parse -q --verify refs/leases/db >/dev/null && fail "N1: db was acquired"
# both ways of writing it do what they say
expect_rc 0 env PATH="$TMPDIR/bin:$PATH" "$R" run db prod --ttl 12 -- sh -c 'echo "$REFLEASE_LEASE_NAMES"'
[ "$(cat "$TMPDIR/out")" = "db prod" ] || fail "N1: the set: $(cat "$TMPDIR/out")"
expect_rc 0 env PATH="$TMPDIR/bin:$PATH" "$R" run db -- prod --ttl 12
[ -e "$TMPDIR/prod-ran" ] || fail "N1: prod did not run after --"

# ---- held for CMD's life with one token; others are refused; CMD's status
# shellcheck disable=SC2154  # R, TMPDIR exported below for CMD
cat >"$TMPDIR/hold.sh" <<'EOF'
set -e
[ "$REFLEASE_LEASE_NAME" = a ] && [ "$REFLEASE_LEASE_NAMES" = "a b" ] || { echo "env: $REFLEASE_LEASE_NAME / $REFLEASE_LEASE_NAMES"; exit 90; }
for n in a b; do
  "$R" status "$n" | grep -q ": live" || { echo "$n not live"; exit 91; }
  t=$(git --git-dir="$S" log -1 --format=%b "refs/leases/$n" | sed -n 's/.*"lease_token":"\([0-9a-f]*\)".*/\1/p')
  [ "$t" = "$REFLEASE_LEASE_TOKEN" ] || { echo "$n token $t"; exit 92; }
done
st=0; REFLEASE_OWNER=bob "$R" acquire a >/dev/null 2>&1 || st=$?
[ "$st" -eq 3 ] || { echo "acquire a: $st"; exit 93; }
st=0; REFLEASE_OWNER=bob "$R" acquire b c >/dev/null 2>&1 || st=$?
[ "$st" -eq 3 ] || { echo "acquire b c: $st"; exit 94; }
! git --git-dir="$S" rev-parse -q --verify refs/leases/c >/dev/null || { echo "c written"; exit 95; }
# the set's token heartbeats the set
"$R" heartbeat a b --lease-token "$REFLEASE_LEASE_TOKEN" >/dev/null || exit 96
exit 7
EOF
export R S TMPDIR
expect_rc 7 "$R" run a b --ttl 30 -- sh "$TMPDIR/hold.sh"
released a && released b || fail "a, b not released after CMD"
expect_rc 0 "$R" --json acquire b c --ttl 30
ct=$(jout lease_token)
expect_rc 0 "$R" release b c --lease-token "$ct"

# ---- --json-file: the set's outcome and each member's
expect_rc 0 "$R" run j1 j2 --json-file "$TMPDIR/run.json" -- true
jparse <"$TMPDIR/run.json"
[ "$(jv set)" = true ] && [ "$(jv status)" = released ] && [ "$(jv reason)" = exited ] ||
  fail "json-file: $(cat "$TMPDIR/run.json")"
python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["names"] == ["j1", "j2"] and [m["status"] for m in d["members"]] == ["released"] * 2
' "$TMPDIR/run.json" || fail "json-file members: $(cat "$TMPDIR/run.json")"
rm -f "$TMPDIR/flat"

# ---- a second set run waiting on a shared member gets in after the first
# ends, never while it runs (a counter on the shared member under flock)
echo 0 >"$TMPDIR/c.m"
: >"$TMPDIR/violations"
COUNT_IN='flock "$TMPDIR/c.lock" sh -c '\''v=$(($(cat "$TMPDIR/c.m") + 1)); echo $v >"$TMPDIR/c.m"; [ $v -eq 1 ] || echo "two holders: $v" >>"$TMPDIR/violations"'\'''
COUNT_OUT='flock "$TMPDIR/c.lock" sh -c '\''echo $(($(cat "$TMPDIR/c.m") - 1)) >"$TMPDIR/c.m"'\'''
"$R" run w1 m --ttl 30 -- sh -c "$COUNT_IN; : >\"\$TMPDIR/first.in\"; while [ ! -e \"\$TMPDIR/go\" ]; do sleep 0.05; done; $COUNT_OUT; date +%s%3N >\"\$TMPDIR/first.out\"" \
  >"$TMPDIR/w1.out" 2>"$TMPDIR/w1.err" &
P1=$!
wait_until 30 "first run holds w1 m" test -e "$TMPDIR/first.in"
"$R" run m w2 --ttl 30 --wait 60 -- sh -c "date +%s%3N >\"\$TMPDIR/second.in\"; $COUNT_IN; sleep 0.2; $COUNT_OUT" \
  >"$TMPDIR/w2.out" 2>"$TMPDIR/w2.err" &
P2=$!
# the second is waiting (w2 is free, m is not: it takes no part of the set)
sleep 1
[ ! -e "$TMPDIR/second.in" ] || fail "the second run got in while the first held m"
git --git-dir="$S" rev-parse -q --verify refs/leases/w2 >/dev/null && fail "the waiting set took w2 alone (a partial hold)"
: >"$TMPDIR/go"
wait_rc "$P1"
[ "$rc" -eq 0 ] || { cat "$TMPDIR/w1.err"; fail "first run: exit $rc"; }
wait_rc "$P2"
[ "$rc" -eq 0 ] || { cat "$TMPDIR/w2.err"; fail "second run: exit $rc"; }
[ ! -s "$TMPDIR/violations" ] || fail "$(cat "$TMPDIR/violations")"
[ "$(cat "$TMPDIR/second.in")" -ge "$(cat "$TMPDIR/first.out")" ] ||
  fail "the second run started at $(cat "$TMPDIR/second.in") ms, before the first ended at $(cat "$TMPDIR/first.out") ms"
released m && released w1 && released w2 || fail "w1 m w2 not released"

# ---- break --force of one member during run: CMD stopped, run exits 4 (lost)
# within the re-read pace (1 s on a local store) plus kill_grace (2 s, ttl 12).
# TTL 12, not 6: at TTL 6 the first heartbeat has 1 s to land before the lost
# deadline, and in the SANITIZE build on a loaded machine it once did not (the
# watchdog's "no heartbeat landed" came before the break was seen, .ci/run)
"$R" --json run k1 k2 --ttl 12 -- sh -c ': >"$TMPDIR/k.in"; exec sleep 100' >"$TMPDIR/k.out" 2>"$TMPDIR/k.err" &
P=$!
wait_until 30 "k: CMD started" test -e "$TMPDIR/k.in"
lost_by_break k2 "$P" "$TMPDIR/k.err"
grep -q "reflease run: k1 k2: lease lost (not_holder)" "$TMPDIR/k.err" || fail "lost message: $(cat "$TMPDIR/k.err")"
tail -n 1 "$TMPDIR/k.err" >"$TMPDIR/last"
jparse <"$TMPDIR/last"
[ "$(jv reason)" = lost ] && [ "$(jv exit_status)" = 4 ] && [ "$(jv set)" = true ] || fail "lost json: $(cat "$TMPDIR/last")"
[ "$(jv blocked_by)" = k2 ] || fail "lost json blocked_by: $(cat "$TMPDIR/last")"
rm -f "$TMPDIR/flat"
is_live k1 || fail "k1: a lost run wrote k1 (it stays as the set left it until it expires)"

# ---- CMD heartbeats one member with a shorter TTL, then the store refuses
# writes to it: the lost deadline follows that member's stored expiry (6 s),
# not the run's 60 s, and SIGKILL follows SIGTERM after that TTL's kill_grace
# (1 s), not the run's (10 s) — CMD, ignoring SIGTERM, is dead before it. The
# same for one lease (before the fix CMD outlived the expiry by 6 s).
cat >"$TMPDIR/short.sh" <<'EOF'
"$R" heartbeat "$1" --lease-token "$REFLEASE_LEASE_TOKEN" --ttl 6 >/dev/null || exit 90
: >"$S/refs/leases/$1.lock"
trap '' TERM
exec "$BUILD/tools/stamp" "$TMPDIR/stamp" 50
EOF
short_case() { # short_case MEMBER NAME...: run NAME... with CMD shortening MEMBER
  m=$1; shift
  rm -f "$TMPDIR/stamp"
  "$R" run "$@" --ttl 60 -- sh "$TMPDIR/short.sh" "$m" >"$TMPDIR/s.out" 2>"$TMPDIR/s.err" &
  P=$!
  wait_until 30 "$m: CMD started" test -s "$TMPDIR/stamp"
  exp=$(git --git-dir="$S" log -1 --format=%b "refs/leases/$m" | jget expires_at)
  wait_rc "$P"
  rm -f "$S/refs/leases/$m.lock"
  [ "$rc" -eq 4 ] || { cat "$TMPDIR/s.err"; fail "short $m: run exit $rc, want 4"; }
  exp_ms=$(($(date -u -d "$exp" +%s) * 1000))
  last=$(cat "$TMPDIR/stamp")
  [ "$last" -lt "$exp_ms" ] || fail "short $m: CMD ran until $last ms, $m expired at $exp_ms ms"
  echo "short $m ($*): CMD stopped $((exp_ms - last)) ms before its expires_at"
}
short_case s2 s1 s2
short_case s0 s0

# ---- the same with reflease stopped (SIGSTOP) after it saw the shortened
# member: the guard's own watchdog stops the tree, SIGKILL after the short
# TTL's kill_grace (1 s) too — before the fix the guard waited run's 10 s
cat >"$TMPDIR/gshort.sh" <<'EOF'
"$R" heartbeat "$1" --lease-token "$REFLEASE_LEASE_TOKEN" --ttl 6 >/dev/null || exit 90
: >"$S/refs/leases/$1.lock" # no heartbeat restores run's TTL
trap '' TERM
sleep 1.6 # the keeper re-reads every 1 s, the main thread passes it on within 0.2 s
: >"$TMPDIR/gshort.seen"
exec "$BUILD/tools/stamp" "$TMPDIR/stamp" 50
EOF
rm -f "$TMPDIR/stamp"
"$R" run gs1 gs2 --ttl 60 -- sh "$TMPDIR/gshort.sh" gs2 >"$TMPDIR/gs.out" 2>"$TMPDIR/gs.err" &
P=$!
wait_until 30 "gs: CMD saw the keeper" test -e "$TMPDIR/gshort.seen"
kill -STOP "$P"
exp=$(git --git-dir="$S" log -1 --format=%b refs/leases/gs2 | jget expires_at)
exp_ms=$(($(date -u -d "$exp" +%s) * 1000))
stamp_stops() { [ -s "$TMPDIR/stamp" ] && l=$(cat "$TMPDIR/stamp") && sleep 0.3 && [ "$(cat "$TMPDIR/stamp")" = "$l" ]; }
wait_until 30 "gs: the guard stopped CMD" stamp_stops
last=$(cat "$TMPDIR/stamp")
kill -CONT "$P"
wait_rc "$P"
rm -f "$S/refs/leases/gs2.lock"
[ "$rc" -eq 4 ] || { cat "$TMPDIR/gs.err"; fail "guard short: run exit $rc, want 4"; }
[ "$last" -lt "$exp_ms" ] || fail "guard short: CMD ran until $last ms, gs2 expired at $exp_ms ms"
echo "guard short: CMD stopped $((exp_ms - last)) ms before gs2's expires_at"

# ---- SIGTERM to run: forwarded, then the set released; exit 143
"$R" run t1 t2 --ttl 30 -- sh -c ': >"$TMPDIR/t.in"; exec sleep 100' >"$TMPDIR/t.out" 2>"$TMPDIR/t.err" &
P=$!
wait_until 30 "t: CMD started" test -e "$TMPDIR/t.in"
kill -TERM "$P"
wait_rc "$P"
[ "$rc" -eq 143 ] || { cat "$TMPDIR/t.err"; fail "SIGTERM: run exit $rc, want 143"; }
released t1 && released t2 || fail "SIGTERM: t1 t2 not released"

# ---- SIGKILL to run: the guard stops CMD, then releases the set by its token
"$R" run g1 g2 --ttl 60 -- sh -c ': >"$TMPDIR/g.in"; exec sleep 100' >"$TMPDIR/g.out" 2>"$TMPDIR/g.err" &
P=$!
wait_until 30 "g: CMD started" test -e "$TMPDIR/g.in"
gt=$(stored_token g1)
kill -KILL "$P"
wait_rc "$P"
wait_until 20 "g1 g2 released by the guard after SIGKILL (not a TTL later)" both_released g1 g2
for n in g1 g2; do
  git --git-dir="$S" log -1 --format=%b "refs/leases/$n^" | grep -q "\"lease_token\":\"$gt\"" ||
    fail "$n: not released from the set's token"
done
echo ok
