#!/bin/sh
# shellcheck disable=SC1091,SC2015  # sourced helper; A && B || fail is intended
# B65 (issue 40; protocol.md "Sets", "A set cut by a crash"): a set acquire
# SIGKILLed between its per-member renames (placed by strace's fault
# injection, as t_local_crash_loop.sh places it) leaves nothing held: the
# member it renamed names a set write its mate does not show, so `status`
# says `expired` (held by no one), `list` shows it `cut` with the member its
# write did not reach (text and --json), `reconcile` reports the anomaly
# cut-set-write, and another owner's acquire takes it at
# once; the mate is free once its dead writer's lock is broken. A whole set
# stays held, and so does a member whose mate moved on after the set write.
. "$(dirname "$0")/lease_lib.sh"
command -v strace >/dev/null || fail "strace is required (Debian: apt-get install strace)"
L="$S/refs/leases"
ST="local:$S"
RENAMES=rename,renameat,renameat2
mkdir -p "$L"

# the set {c, d} killed at d's rename: c published, d's lock left behind
REFLEASE_OWNER=w0 expect_rc 137 strace -f -qq -o /dev/null -P "$L/d.lock" -e trace="$RENAMES" \
  -e inject="$RENAMES:signal=SIGKILL:when=1" "$R" --store "$ST" acquire c d --ttl 300
[ -e "$L/c" ] && [ -e "$L/d.lock" ] && [ ! -e "$L/d" ] ||
  fail "B65: not killed between the set's renames: $(ls -a "$L")"
out=$("$R" --store "$ST" status c) || fail "B65: status c: $out"
case $out in *"c: expired"*"did not reach 'd'"*) ;; *) fail "B65: status of a cut set's member: $out" ;; esac
# list shows the cut member as it is (B65): status cut, with the reason
out=$("$R" --store "$ST" list) || fail "B65: list: $out"
printf '%s\n' "$out" | grep -Eq '^c +claimed +cut ' ||
  fail "B65: list shows a cut set's member not as cut: $out"
case $out in *"its set write did not reach 'd': held by no one"*) ;;
  *) fail "B65: list gives no reason for the cut member: $out" ;; esac
out=$("$R" --store "$ST" --json list) || fail "B65: list --json: $out"
case $out in *'"reason":'*"did not reach 'd'"*'"status":"cut"'* | *'"status":"cut"'*'"reason":'*) ;;
  *) fail "B65: list --json: no cut status and reason: $out" ;; esac
# reconcile reports it: anomaly cut-set-write (a warning), naming the mate
out=$("$R" --store "$ST" reconcile 2>&1)
case $out in *cut-set-write*"did not reach 'd'"*) ;; *) fail "B65: reconcile: no cut-set-write: $out" ;; esac
out=$("$R" --store "$ST" --json reconcile 2>&1)
case $out in *'"cut-set-write"'*) ;; *) fail "B65: reconcile --json: no cut-set-write: $out" ;; esac
REFLEASE_OWNER=x expect_rc 0 "$R" --store "$ST" acquire c --ttl 300 --wait 0
REFLEASE_OWNER=y expect_rc 0 "$R" --store "$ST" acquire d --ttl 300 --wait 0
out=$("$R" --store "$ST" status c)
case $out in *"claimed by x"*) ;; *) fail "B65: c not taken by x: $out" ;; esac

# a whole set stays held, member by member and as a set
REFLEASE_OWNER=w1 expect_rc 0 "$R" --store "$ST" acquire e f --ttl 300
REFLEASE_OWNER=z expect_rc 3 "$R" --store "$ST" acquire e --wait 0
REFLEASE_OWNER=z expect_rc 3 "$R" --store "$ST" acquire f e --wait 0
out=$("$R" --store "$ST" status f)
case $out in *"f: live"*) ;; *) fail "B65: a whole set's member not live: $out" ;; esac
out=$("$R" --store "$ST" list)
printf '%s\n' "$out" | grep -Eq '^f +claimed +live ' ||
  fail "B65: list shows a whole set's member not live: $out"
out=$("$R" --store "$ST" reconcile 2>&1)
case $out in *cut-set-write*) fail "B65: reconcile calls a whole set cut: $out" ;; esac

# a mate that moved on after the set write (broken, then taken alone) does
# not free the other member: it is held by its set's holder still
REFLEASE_OWNER=w2 expect_rc 0 "$R" --store "$ST" acquire g h --ttl 300
expect_rc 0 "$R" --store "$ST" break h --force
REFLEASE_OWNER=v expect_rc 0 "$R" --store "$ST" acquire h --ttl 300
REFLEASE_OWNER=z expect_rc 3 "$R" --store "$ST" acquire g --wait 0
echo "B65 ok"
