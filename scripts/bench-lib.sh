# Helpers of the handoff benches (scripts/bench-handoff.sh,
# scripts/bench-handoff-ab.sh), sourced: BENCH_NAME names the caller in errors.
# now: the wall clock, s.ns
now() { date +%s.%N; }
# wait_for FILE PATTERN: until FILE contains PATTERN, 60 s at most
wait_for() {
  i=0
  until grep -q "$2" "$1" 2>/dev/null; do
    i=$((i + 1)); [ "$i" -le 6000 ] || { echo "${BENCH_NAME:-bench}: no '$2' in $1" >&2; exit 1; }; sleep 0.01
  done
}
