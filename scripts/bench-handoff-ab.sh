#!/bin/sh
# Handoffs of several builds side by side (issue 43 item 3: a cut measured
# before and after in one run): for each build in turn, RUNS times, a
# separate-process release (holder `reflease release`, waiter `reflease
# acquire --wait`) and a `run` -> `run --wait` handoff, timed as
# scripts/bench-handoff.sh times them; prints each build's medians in ms.
#   sh scripts/bench-handoff-ab.sh RUNS HOLD_SECONDS REFLEASE_BIN...
set -eu
RUNS=$1
HOLD=$2
shift 2
W=$(mktemp -d "${TMPDIR:-/tmp}/reflease-ab.XXXXXX")
trap 'rm -rf "$W"' EXIT
export BENCH_NAME=bench-handoff-ab
# shellcheck source=scripts/bench-lib.sh disable=SC1091 # followed with shellcheck -x
. "$(dirname "$0")/bench-lib.sh"
ms() { python3 -c "print('%.1f' % (($1 - $2) * 1000))"; }
token() { python3 -c 'import json, sys; print(json.load(sys.stdin)["lease"]["lease_token"])'; }
release_once() {
  tok=$(REFLEASE_OWNER=holder "$1" --json acquire x --ttl 600 | token)
  rm -f "$W/w.err" "$W/w.done"
  ( REFLEASE_OWNER=waiter REFLEASE_LOG=info "$1" --json acquire x --wait 600 --ttl 600 \
      >"$W/w.out" 2>"$W/w.err"; echo "$? $(now)" >"$W/w.done" ) &
  wpid=$!
  wait_for "$W/w.err" "waiting up to"
  sleep "$HOLD"
  t0=$(now)
  REFLEASE_OWNER=holder "$1" release x --lease-token "$tok" >/dev/null
  wait "$wpid"
  read -r rc t1 <"$W/w.done"
  [ "$rc" -eq 0 ] || { echo "bench-handoff-ab: waiter exit $rc" >&2; exit 1; }
  REFLEASE_OWNER=waiter "$1" release x --lease-token "$(token <"$W/w.out")" >/dev/null
  ms "$t1" "$t0"
}
run_once() {
  rm -f "$W/held" "$W/rel" "$W/acq"
  REFLEASE_OWNER=holder "$1" run x --ttl 600 -- \
    sh -c "touch '$W/held'; sleep $HOLD; date +%s.%N >'$W/rel'" >/dev/null 2>&1 &
  hpid=$!
  wait_for_file=0
  until [ -e "$W/held" ]; do
    wait_for_file=$((wait_for_file + 1)); [ "$wait_for_file" -le 6000 ] || exit 1; sleep 0.01
  done
  REFLEASE_OWNER=waiter "$1" run x --wait 600 --ttl 600 -- sh -c "date +%s.%N >'$W/acq'" \
    >/dev/null 2>&1
  wait "$hpid"
  ms "$(cat "$W/acq")" "$(cat "$W/rel")"
}
med() { sort -n "$1" | awk '{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.1f", m }'; }

"$1" init "$W/s" >/dev/null
export REFLEASE_STORE="local:$W/s" REFLEASE_HOST=bench
n=0
while [ "$n" -lt "$RUNS" ]; do
  k=0 # not i: wait_for (bench-lib.sh) counts in i
  for b in "$@"; do
    k=$((k + 1))
    release_once "$b" >>"$W/p$k"
    run_once "$b" >>"$W/r$k"
  done
  n=$((n + 1))
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
k=0
for b in "$@"; do
  k=$((k + 1))
  echo "$b: separate-process release $(med "$W/p$k") ms, run -> run --wait $(med "$W/r$k") ms (medians of $RUNS, alternated)"
done
