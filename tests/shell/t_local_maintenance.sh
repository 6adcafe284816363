#!/bin/sh
# shellcheck disable=SC1091,SC2015  # sourced helper; A && B || fail is intended
# test: seconds 31
# test: serial (run alone by run.sh: its timing or contention counts on the CPUs)
# Issue 14 item 1: no acknowledged write is lost to concurrent git
# maintenance (protocol.md §9). STRESS_WRITERS (default 16) holders heartbeat
# their own lease (TTL 5 s) through the library while, at the same time, real
# git processes loop over `git pack-refs --all --prune`, `git gc --auto` (with
# gc.auto=1 so it runs), `git gc` and `git maintenance run`, one library
# process churns acquire/release/prune of other leases, and the real binary
# loops acquire/release/`reconcile --prune-released 0` (deletes that rewrite
# packed-refs), and `reflease gc --grace 20` prunes what replaced heartbeats
# left unreachable (issue 29). Afterwards every acknowledged oid must still be
# on its lease's chain or replaced by a later heartbeat of its tenure there, at least STRESS_MIN_ACKED (300) writes were acknowledged, and git
# fsck is clean. Runs STRESS_SECONDS (default 30), on a loaded machine on
# until STRESS_MIN_ACKED writes, at most twice as long; then the check.
. "$(dirname "$0")/lease_lib.sh"

TOOL="$BUILD/tools/maint_stress"
[ -x "$TOOL" ] || fail "no $TOOL"
WRITERS=${STRESS_WRITERS:-16}
SECS=${STRESS_SECONDS:-30}
MIN_ACKED=${STRESS_MIN_ACKED:-300}
[ "$WRITERS" -ge 8 ] || fail "STRESS_WRITERS must be at least 8"
G() { git --git-dir="$S" "$@"; }
STOP="$TMPDIR/stop"
OUT="$TMPDIR/acked"
mkdir -p "$OUT"
: >"$TMPDIR/git-runs"
# the loops stop at $STOP, when this script exits however it exits, or at
# their own deadline
trap 'touch "$STOP"' EXIT INT TERM
END=$(($(date +%s) + 2 * SECS + 120))
going() { [ ! -e "$STOP" ] && [ "$(date +%s)" -lt "$END" ]; }

# git maintenance, real processes, until $STOP exists
(
  while going; do
    G pack-refs --all --prune >/dev/null 2>&1 || true
    echo pack-refs >>"$TMPDIR/git-runs"
  done
) &
p1=$!
(
  while going; do
    G -c gc.auto=1 -c gc.autoPackLimit=1 gc --auto --quiet >/dev/null 2>&1 || true
    echo gc-auto >>"$TMPDIR/git-runs"
    G gc --quiet >/dev/null 2>&1 || true
    echo gc >>"$TMPDIR/git-runs"
    G maintenance run --quiet >/dev/null 2>&1 || true
    echo maintenance >>"$TMPDIR/git-runs"
    # issue 29: reflease's own maintenance, pruning what a replacing
    # heartbeat left unreachable after a short grace (20 s: the writes'
    # commits become unreachable within milliseconds)
    # (git refuses a second gc while one runs, e.g. the detached gc --auto
    # above: "gc is already running"; that is git's lock doing its job)
    if "$R" gc --grace 20 >/dev/null 2>"$TMPDIR/gc.err"; then
      echo reflease-gc >>"$TMPDIR/git-runs"
    elif ! grep -q 'gc is already running' "$TMPDIR/gc.err"; then
      cat "$TMPDIR/gc.err" >>"$TMPDIR/gc-failed"
    fi
  done
) &
p2=$!
# deletes through the real binary: acquire, release, prune
(
  i=0
  while going; do
    i=$((i + 1))
    n="q$((i % 10))"
    t=$("$R" --json acquire "$n" --ttl 5 2>/dev/null | jget lease.lease_token 2>/dev/null) || t=""
    [ -n "$t" ] && "$R" release "$n" --lease-token "$t" >/dev/null 2>&1 || true
    "$R" reconcile --prune-released 0 >/dev/null 2>&1 || true
    echo prune >>"$TMPDIR/git-runs"
  done
) &
p3=$!

"$TOOL" run "$S" "$WRITERS" "$SECS" "$OUT" "$MIN_ACKED" >"$TMPDIR/run" 2>"$TMPDIR/run.err"
rc=$?
touch "$STOP"
wait "$p1" "$p2" "$p3" || true
cat "$TMPDIR/run"
[ "$rc" -eq 0 ] || { tail -20 "$TMPDIR/run.err"; fail "writers failed ($rc)"; }
# a failed reflease gc fails the test after the write check and fsck have
# said whether anything was lost (what a CI log needs to tell the two apart)
if [ -e "$TMPDIR/gc-failed" ]; then
  cat "$TMPDIR/gc-failed"
  "$TOOL" check "$S" "$WRITERS" "$OUT" 2>&1 || true
  G fsck --strict --no-dangling 2>&1 | tail -n 5 || true
  fail "reflease gc failed"
fi
for k in pack-refs gc-auto gc maintenance reflease-gc prune; do
  c=$(grep -c "^$k\$" "$TMPDIR/git-runs" || true)
  echo "$k runs: $c"
  [ "$c" -ge 1 ] || fail "no $k run during the stress"
done
"$TOOL" check "$S" "$WRITERS" "$OUT" >"$TMPDIR/check" 2>&1 || {
  cat "$TMPDIR/check"; fail "acknowledged writes lost"; }
cat "$TMPDIR/check"
acked=$(sed -n 's/^acknowledged \([0-9]*\) lost 0 .*/\1/p' "$TMPDIR/check")
[ -n "$acked" ] || fail "no check summary"
[ "$acked" -ge "$MIN_ACKED" ] || fail "only $acked acknowledged writes (want >= $MIN_ACKED)"
G fsck --strict --no-dangling >"$TMPDIR/fsck" 2>&1 || { cat "$TMPDIR/fsck"; fail "git fsck"; }
echo ok
