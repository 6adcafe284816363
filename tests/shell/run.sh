#!/bin/sh
# Run every tests/shell/t_*.sh against the built binary; print one closing
# line "shell: N passed, N failed" and fail when any failed or none ran.
# Each script gets REFLEASE (the binary), BUILD and a private TMPDIR.
#
# The tests run JOBS at a time (REFLEASE_TEST_JOBS, default 3; make check
# passes 4, 3 in the instrumented builds: most of a
# test's time is spent waiting on real processes, clocks and servers, not on
# a CPU), the longest first: "# test: seconds N" in a test's first 15 lines is
# its wall time in make check on the 2-core machine (the result lines give
# it; label a test that takes 20 s or more). A test whose first 15 lines say
# "# test: quiet" (a claim about real time tight enough that a loaded CPU
# could break it, made by a test that itself uses under one CPU: the CPU-s of
# its result line under half its seconds) runs after the parallel part, beside
# at most REFLEASE_QUIET_JOBS - 1 other quiet tests (default 1: alone; make
# check passes 2, and 1 in the instrumented builds, where a test's CPU time
# doubles or more). A test whose first 15 lines say "# test: serial" (a
# CPU-heavy stress run) runs alone after those. Each
# result line names the test and its wall time; a failure prints its FAIL
# line, then the last 40 lines of its output.
#
#   run.sh BIN BUILD            all tests
#   run.sh --one BIN BUILD RESULTS T   one test (the parallel part's unit)
set -u
here=$(cd "$(dirname "$0")" && pwd)
# libfaketime is LD_PRELOADed ahead of ASan's runtime in SANITIZE=1 builds:
# let ASan accept that order for every test (no effect on a plain build).
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"

# faketime(1) and every process started with libfaketime preloaded name a
# semaphore and shared memory after their pid (their children attach to them
# by name: FAKETIME_SHARED), leave them behind when they end (on a SIGKILL, and
# on a plain exit too here), and fail ("sem_open: File exists",
# "ft_shm_create(), shm_open failed: File exists") when started on a pid whose
# names are still there. pid_max is 32768 on the 2-core machine and CI's, so
# pids wrap within minutes of make check (CI's SANITIZE run lost
# t_run_fence_remote's bob that way). The names of a pid with no process are
# dropped before each test and, while the tests run, every second; a live
# process keeps its names (its children may still attach).
faketime_sweep() {
  for f in /dev/shm/sem.faketime_sem_* /dev/shm/faketime_shm_*; do
    [ -e "$f" ] || continue
    [ -d "/proc/${f##*_}" ] || rm -f "$f"
  done
}

if [ "${1:-}" = --one ]; then
  BIN=$2 BUILD=$3 res=$4 t=$5
  faketime_sweep
  name=$(basename "$t")
  tmp=$(mktemp -d)
  t0=$(date +%s)
  # the CPU time of the test and the processes it waited for (GNU time, when
  # installed): what a test costs the other tests running beside it
  timer=""
  [ -x /usr/bin/time ] && timer="/usr/bin/time -q -f %U+%S -o $tmp/.cpu"
  if REFLEASE="$BIN" BUILD="$BUILD" TMPDIR="$tmp" $timer sh "$t" >"$tmp/.out" 2>&1; then
    verdict=PASS
    echo pass >"$res/$name"
  else
    verdict=FAIL
    echo fail >"$res/$name"
    # the test's last 40 lines, led by its FAIL line when that is earlier
    # (a log viewer that cuts the middle of a long log keeps it)
    tail -40 "$tmp/.out" >"$tmp/.tail"
    { grep -q '^FAIL:' "$tmp/.tail" || grep -m 1 '^FAIL:' "$tmp/.out"; cat "$tmp/.tail"; } |
      sed 's/^/    /' >"$res/$name.out"
  fi
  cpu=$(tail -n 1 "$tmp/.cpu" 2>/dev/null | awk -F+ 'NF == 2 { printf ", %.0f CPU-s", $1 + $2 }')
  line="$verdict $name ($(($(date +%s) - t0)) s$cpu)"
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
quiet_jobs=${REFLEASE_QUIET_JOBS:-1}
case $quiet_jobs in '' | *[!0-9]* | 0) echo "run.sh: REFLEASE_QUIET_JOBS must be a positive number" >&2; exit 64 ;; esac
# The Action's tests (action_lib.sh, t_action_lint.sh through
# scripts/lint-action.sh, t_cli_action.sh) share the tree's node_modules, which
# each installs when missing: installed once here, before they run side by
# side (two npm ci in one tree remove each other's files).
root=$(cd "$here/../.." && pwd)
if command -v npm >/dev/null 2>&1 && [ ! -d "$root/node_modules/yaml" ]; then
  (cd "$root" && flock package-lock.json sh -c \
    '[ -d node_modules/yaml ] || npm ci --no-audit --no-fund --loglevel=error >/dev/null') ||
    echo "run.sh: npm ci failed; the Action's tests will say why" >&2
fi
res=$(mktemp -d)
# python3 resolved once: a version manager's shim (pyenv) runs a few shells
# per call (0.3 CPU-s each on the 2-core machine, the interpreter alone
# 0.03 s), and the tests call python3 hundreds of times side by side; they
# get the interpreter the shim resolves to, first on their PATH, started
# without the site module (-S): the tests use only the standard library, and
# a site directory's .pth files cost 50 ms a start here (pyenv's 3.11: 67 ms
# with site, 19 ms without; Debian's: 26 and 22)
if py=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) && [ -x "$py" ]; then
  mkdir -p "$res/bin" && printf '#!/bin/sh\nexec "%s" -S "$@"\n' "$py" >"$res/bin/python3" &&
    chmod 755 "$res/bin/python3" && PATH="$res/bin:$PATH" && export PATH
fi
: >"$res/.parallel"
: >"$res/.quiet"
: >"$res/.serial"
# longest first (no long test starts last and runs on alone); unlabelled
# tests follow in name order
for t in "$here"/t_*.sh; do
  [ -e "$t" ] || continue
  secs=$(head -n 15 "$t" | sed -n 's/^# test: seconds \([0-9][0-9]*\).*/\1/p' | head -n 1)
  if head -n 15 "$t" | grep -q '^# test: serial'; then
    echo "${secs:-0} $t" >>"$res/.serial"
  elif head -n 15 "$t" | grep -q '^# test: quiet'; then
    echo "${secs:-0} $t" >>"$res/.quiet"
  else
    echo "${secs:-0} $t" >>"$res/.parallel"
  fi
done
for f in .parallel .quiet .serial; do
  sort -k1,1nr -s "$res/$f" | cut -d' ' -f2- >"$res/$f.sorted"
  mv "$res/$f.sorted" "$res/$f"
done
t0=$(date +%s)
(
  trap 'exit 0' TERM
  while :; do faketime_sweep; sleep 1; done
) </dev/null >/dev/null 2>&1 &
sweeper=$!
xargs -P "$jobs" -n 1 sh "$here/run.sh" --one "$BIN" "$BUILD" "$res" <"$res/.parallel"
[ ! -s "$res/.quiet" ] || xargs -P "$quiet_jobs" -n 1 sh "$here/run.sh" --one "$BIN" "$BUILD" "$res" <"$res/.quiet"
while read -r t; do
  sh "$here/run.sh" --one "$BIN" "$BUILD" "$res" "$t" </dev/null
done <"$res/.serial"
kill "$sweeper" 2>/dev/null || true
pass=$(grep -l '^pass$' "$res"/t_*.sh 2>/dev/null | wc -l)
fail=$(grep -l '^fail$' "$res"/t_*.sh 2>/dev/null | wc -l)
ran=$((pass + fail))
all=$(cat "$res/.parallel" "$res/.quiet" "$res/.serial" | wc -l)
[ "$ran" -eq "$all" ] || { echo "run.sh: $((all - ran)) of $all tests gave no result" >&2; fail=$((fail + all - ran)); }
echo "shell: $pass passed, $fail failed ($jobs at a time, quiet ones $quiet_jobs, $(($(date +%s) - t0)) s)"
rm -rf "$res"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
