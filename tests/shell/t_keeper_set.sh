#!/bin/sh
# shellcheck disable=SC1091,SC2015,SC2086,SC2154  # sourced helpers; A && B || fail is intended; $R is a word list
# test: seconds 22
# `heartbeat A B --every S` keeps a whole set (issue 27, cli.md "Sets",
# protocol.md "Sets"): the library's set keeper (lease_keep_set), with the
# policy, output, exit statuses and signal handling of the single
# `heartbeat --every` (F35, F36): every member renewed under the set's one
# token, a terminating signal with --release-on-exit releases the whole set
# and exits 128 + signal, losing the output reader is not a stop, a member
# broken under the keeper is the set lost (exit 4, the member named), and
# --every is checked against the shortest stored TTL of the members.
. "$(dirname "$0")/lease_lib.sh"
. "$(dirname "$0")/fence_lib.sh"

oid() { git --git-dir="$S" rev-parse "refs/leases/$1"; }
token_of() { git --git-dir="$S" cat-file -p "refs/leases/$1" | sed -n 's/.*"lease_token":"\([0-9a-f]*\)".*/\1/p' | head -n 1; }
released() { [ "$("$R" status "$1" --json | jget status)" = released ]; }
moved() { [ "$(oid "$1")" != "$2" ]; }

# keeper OUT ERR A B [opts]: `heartbeat A B --every 1 --ttl 6` on a fresh set
# of 6 s (SIGINT/SIGQUIT back to their default: a background job of a
# non-interactive shell starts with them ignored); $T the set's token, $HP the
# keeper's pid once its handlers are in
keeper() {
  ko=$1 ke=$2 ka=$3 kb=$4
  shift 4
  T=$("$R" acquire "$ka" "$kb" --ttl 6 --print-token)
  env --default-signal=INT,QUIT $R heartbeat "$ka" "$kb" --lease-token "$T" --every 1 --ttl 6 "$@" \
    >"$ko" 2>"$ke" &
  HP=$!
  wait_until 20 "$ka $kb: the keeper's handlers" catches "$HP" 15
}
HP=""
trap '[ -z "$HP" ] || kill -KILL "$HP" 2>/dev/null || true' EXIT # a failed cell leaves no keeper

# ---- both members renewed, one token, until SIGTERM releases the set: 143
keeper "$TMPDIR/k.out" "$TMPDIR/k.err" a b --release-on-exit
oa=$(oid a) ob=$(oid b)
wait_until 20 "a renewed by the set keeper" moved a "$oa"
wait_until 20 "b renewed by the set keeper" moved b "$ob"
# and again: the keeper goes on (each write moves both tips: one set write)
oa=$(oid a) ob=$(oid b)
wait_until 20 "a renewed twice" moved a "$oa"
wait_until 20 "b renewed twice" moved b "$ob"
alive "$HP" || { wait_rc "$HP"; fail "the set keeper ended (exit $rc): $(cat "$TMPDIR/k.err")"; }
[ "$(token_of a)" = "$T" ] && [ "$(token_of b)" = "$T" ] || fail "the set's token changed: $(token_of a) $(token_of b)"
grep -q '^set of 2: renewed' "$TMPDIR/k.out" || fail "no set write logged: $(cat "$TMPDIR/k.out")"
grep -q '^  b: renewed' "$TMPDIR/k.out" || fail "b's renewal not logged: $(cat "$TMPDIR/k.out")"
! grep -q "$T" "$TMPDIR/k.out" "$TMPDIR/k.err" || fail "the token is in the log: $(cat "$TMPDIR/k.out")"
! grep -q not_due "$TMPDIR/k.out" || fail "a not_due block: $(cat "$TMPDIR/k.out")"
kill -TERM "$HP"
wait_rc "$HP"
[ "$rc" -eq 143 ] || fail "SIGTERM: exit $rc, want 143: $(cat "$TMPDIR/k.err")"
released a && released b || fail "the set not released after SIGTERM"
grep -q '^set of 2: released' "$TMPDIR/k.out" || fail "the release not printed: $(cat "$TMPDIR/k.out")"

# ---- SIGHUP without --release-on-exit: 129, the set stays held (a handoff)
keeper "$TMPDIR/h.out" "$TMPDIR/h.err" c d
catches "$HP" 1 || fail "SIGHUP is not handled"
kill -HUP "$HP"
wait_rc "$HP"
[ "$rc" -eq 129 ] || fail "SIGHUP: exit $rc, want 129: $(cat "$TMPDIR/h.err")"
is_live c && is_live d || fail "the set was released without --release-on-exit"
expect_rc 0 "$R" release c d --lease-token "$T"

# ---- the output reader goes away after the first line: the keeper renews
# on (each write fails with EPIPE), and SIGTERM still releases the set
mkfifo "$TMPDIR/fifo"
head -n 1 <"$TMPDIR/fifo" >"$TMPDIR/first" &
keeper "$TMPDIR/fifo" "$TMPDIR/r.err" e f --release-on-exit
wait_until 20 "the reader's first line" test -s "$TMPDIR/first"
oe=$(oid e)
wait_until 20 "a renewal after the reader left" moved e "$oe"
oe=$(oid e)
wait_until 20 "a second renewal after the reader left" moved e "$oe"
alive "$HP" || { wait_rc "$HP"; fail "the set keeper died (exit $rc) when its reader left"; }
kill -TERM "$HP"
wait_rc "$HP"
[ "$rc" -eq 143 ] || fail "reader gone, SIGTERM: exit $rc, want 143: $(cat "$TMPDIR/r.err")"
released e && released f || fail "reader gone: the set not released"

# ---- a member broken under the keeper: the set is lost, exit 4 naming it;
# the other member is left alone (nothing released for a lost set)
keeper "$TMPDIR/l.out" "$TMPDIR/l.err" g h --release-on-exit
og=$(oid g)
wait_until 20 "g renewed" moved g "$og"
expect_rc 0 "$R" break --force h
wait_until 20 "the keeper ends once h is broken" sh -c "! kill -0 $HP 2>/dev/null || [ \"\$(awk '{print \$3}' /proc/$HP/stat)\" = Z ]"
wait_rc "$HP"
[ "$rc" -eq 4 ] || fail "h broken: exit $rc, want 4: $(cat "$TMPDIR/l.err")"
grep -q '^reflease heartbeat: g h: lease lost: h: ' "$TMPDIR/l.err" || fail "the lost member is not named: $(cat "$TMPDIR/l.err")"
[ "$(grep -c 'lease lost' "$TMPDIR/l.err")" -eq 1 ] || fail "the loss said more than once: $(cat "$TMPDIR/l.err")"
is_live g || fail "g released by a keeper that lost the set"

# the same with --json: the last line is the set's object, blocked_by the member
T=$("$R" acquire i j --ttl 6 --print-token)
$R --json heartbeat i j --lease-token "$T" --every 1 --ttl 6 >"$TMPDIR/j.out" 2>"$TMPDIR/j.err" &
HP=$!
oi=$(oid i)
wait_until 20 "i renewed (json)" moved i "$oi"
expect_rc 0 "$R" break --force j
wait_rc "$HP"
[ "$rc" -eq 4 ] || fail "j broken (json): exit $rc, want 4: $(cat "$TMPDIR/j.err")"
head -n 1 "$TMPDIR/j.out" | jparse
[ "$(jv set)" = true ] && [ "$(jv status)" = renewed ] || fail "a write's object: $(head -n 1 "$TMPDIR/j.out")"
tail -n 1 "$TMPDIR/j.out" | jparse
[ "$(jv set)" = true ] || fail "the lost object is not the set's: $(tail -n 1 "$TMPDIR/j.out")"
[ "$(jv status)" = not_holder ] || fail "lost status: $(jv status)"
[ "$(jv blocked_by)" = j ] || fail "blocked_by: $(jv blocked_by)"

# ---- --every is checked against the shortest stored TTL of the members
# (no --ttl: each keeps its own), before anything is written
T=$("$R" acquire k l --ttl 60 --print-token)
expect_rc 0 "$R" heartbeat l --lease-token "$T" --ttl 6
ok=$(oid k) ol=$(oid l)
err_is 64 "--every: 4 s is above ttl/2 (ttl 6 s)" "$R" heartbeat k l --lease-token "$T" --every 4
[ "$(oid k)" = "$ok" ] && [ "$(oid l)" = "$ol" ] || fail "a refused keeper wrote"
# a remote over git:// cannot write a set: refused before any I/O (the port
# is closed; before the fix the TTL reads retried it for --timeout), exit 78
err_is 78 "cannot write several leases in one atomic write" env REFLEASE_STORE=remote:git://127.0.0.1:9/x.git \
  timeout 30 "$R" heartbeat k l --lease-token "$T" --every 30
# a set named twice, and a usage error before any write
err_is 64 "named twice" "$R" heartbeat k k --lease-token "$T" --every 2

# ---- the docs say so (before: "--every keeps one lease")
root=$(cd "$(dirname "$0")/../.." && pwd)
$R help heartbeat | grep -q 'several NAMEs: the whole set' || fail "help heartbeat omits the set keeper"
hbman=$(sed -n '/^\.BI heartbeat /,/^\.TP/p' "$root/docs/reflease.1")
echo "$hbman" | grep -q 'kept as a whole' || fail "the man page's heartbeat entry omits the set keeper"
grep -q 'heartbeat A B … --every S` keeps the whole set' "$root/docs/cli.md" || fail "cli.md: the set keeper"
! grep -q 'heartbeat --every` keeps one lease' "$root/docs/cli.md" || fail "cli.md still says --every keeps one lease"
echo ok
