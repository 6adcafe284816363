#!/bin/sh
# Run every tests/shell/t_*.sh against the built binary; print one closing
# line "shell: N passed, N failed" and fail when any failed or none ran.
# Each script gets REFLEASE (the binary), BUILD and a private TMPDIR.
#
# The tests run JOBS at a time (REFLEASE_TEST_JOBS, default 3: most of a
# test's time is spent waiting on real processes, clocks and servers, not on
# a CPU). A test whose first 15 lines say "# test: serial" (contention runs
# that count on the CPUs, measurements) runs alone after the others. Each
# result line names the test and its wall time; a failure prints the last
# 40 lines of its output.
#
#   run.sh BIN BUILD            all tests
#   run.sh --one BIN BUILD RESULTS T   one test (the parallel part's unit)
set -u
here=$(cd "$(dirname "$0")" && pwd)
# libfaketime is LD_PRELOADed ahead of ASan's runtime in SANITIZE=1 builds:
# let ASan accept that order for every test (no effect on a plain build).
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"

if [ "${1:-}" = --one ]; then
  BIN=$2 BUILD=$3 res=$4 t=$5
  name=$(basename "$t")
  tmp=$(mktemp -d)
  t0=$(date +%s)
  if REFLEASE="$BIN" BUILD="$BUILD" TMPDIR="$tmp" sh "$t" >"$tmp/.out" 2>&1; then
    line="PASS $name ($(($(date +%s) - t0)) s)"
    echo pass >"$res/$name"
  else
    line="FAIL $name ($(($(date +%s) - t0)) s)"
    echo fail >"$res/$name"
    sed 's/^/    /' "$tmp/.out" | tail -40 >"$res/$name.out"
  fi
  # one writer at a time: a failure's lines stay together
  {
    flock 9
    echo "$line"
    [ ! -e "$res/$name.out" ] || cat "$res/$name.out"
  } 9>"$res/.print"
  rm -rf "$tmp"
  exit 0
fi

BIN=$1
BUILD=$2
jobs=${REFLEASE_TEST_JOBS:-3}
case $jobs in '' | *[!0-9]* | 0) echo "run.sh: REFLEASE_TEST_JOBS must be a positive number" >&2; exit 64 ;; esac
# faketime(1) names its semaphore and shared memory after its pid and fails
# ("sem_open: File exists") when a killed run left them behind for a pid now
# reused: drop those whose faketime process is gone, once before the tests
# (not between them: a parallel test's faketime may be starting).
for f in /dev/shm/sem.faketime_sem_* /dev/shm/faketime_shm_*; do
  [ -e "$f" ] || continue
  p=${f##*_}
  [ "$(cat "/proc/$p/comm" 2>/dev/null)" = faketime ] || rm -f "$f"
done
res=$(mktemp -d)
: >"$res/.parallel"
: >"$res/.serial"
for t in "$here"/t_*.sh; do
  [ -e "$t" ] || continue
  if head -n 15 "$t" | grep -q '^# test: serial'; then
    echo "$t" >>"$res/.serial"
  else
    echo "$t" >>"$res/.parallel"
  fi
done
t0=$(date +%s)
xargs -P "$jobs" -n 1 sh "$here/run.sh" --one "$BIN" "$BUILD" "$res" <"$res/.parallel"
while read -r t; do
  sh "$here/run.sh" --one "$BIN" "$BUILD" "$res" "$t" </dev/null
done <"$res/.serial"
pass=$(grep -l '^pass$' "$res"/t_*.sh 2>/dev/null | wc -l)
fail=$(grep -l '^fail$' "$res"/t_*.sh 2>/dev/null | wc -l)
ran=$((pass + fail))
all=$(cat "$res/.parallel" "$res/.serial" | wc -l)
[ "$ran" -eq "$all" ] || { echo "run.sh: $((all - ran)) of $all tests gave no result" >&2; fail=$((fail + all - ran)); }
echo "shell: $pass passed, $fail failed ($jobs at a time, $(($(date +%s) - t0)) s)"
rm -rf "$res"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
