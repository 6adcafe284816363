#!/bin/sh
# Run every tests/shell/t_*.sh against the built binary; print one closing
# line "shell: N passed, N failed" and fail when any failed or none ran.
# Each script gets REFLEASE (the binary), BUILD and a private TMPDIR.
set -u
BIN=$1
BUILD=$2
here=$(cd "$(dirname "$0")" && pwd)
# libfaketime is LD_PRELOADed ahead of ASan's runtime in SANITIZE=1 builds:
# let ASan accept that order for every test (no effect on a plain build).
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
# faketime(1) names its semaphore and shared memory after its pid and fails
# ("sem_open: File exists") when a killed run left them behind for a pid now
# reused: drop those whose faketime process is gone before each test.
faketime_sweep() {
  for f in /dev/shm/sem.faketime_sem_* /dev/shm/faketime_shm_*; do
    [ -e "$f" ] || continue
    p=${f##*_}
    [ "$(cat "/proc/$p/comm" 2>/dev/null)" = faketime ] || rm -f "$f"
  done
}
pass=0
fail=0
for t in "$here"/t_*.sh; do
  [ -e "$t" ] || continue
  faketime_sweep
  tmp=$(mktemp -d)
  if REFLEASE="$BIN" BUILD="$BUILD" TMPDIR="$tmp" sh "$t" >"$tmp/.out" 2>&1; then
    pass=$((pass + 1)); echo "PASS $(basename "$t")"
  else
    fail=$((fail + 1)); echo "FAIL $(basename "$t")"; sed 's/^/    /' "$tmp/.out" | tail -40
  fi
  rm -rf "$tmp"
done
echo "shell: $pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
