#!/bin/sh
# shellcheck disable=SC2016 # backquotes in single quotes are markdown, not expansions
# `make bench-check` (issue 26): how long `make check-run` takes on this tree
# against BASE, in one sitting, each tree built first (not timed). Prints a
# markdown section of docs/benchmarks.md.
#   sh scripts/bench-check.sh BASE
# Three runs, one after the other, each started when the 1-minute load average
# is below 1.5 (or after 5 minutes of waiting, said in the table):
#   BASE               its own `make check-run`;
#   HEAD               this tree's `make check-run` (HEAD's committed files);
#   HEAD, BASE's tests HEAD's harness and code over the tests BASE has: the
#                      shell tests (tests/shell/t_*.sh) that BASE does not
#                      have are removed from the copy; every unit suite is
#                      kept (new suites and new cases in old suites still
#                      run, so this row overstates HEAD's time for BASE's tests).
# Each tree is a `git worktree` under $TMPDIR, removed at the end; the Action's
# validators (node_modules) are copied from this tree when BASE's
# package-lock.json is the same, else installed with `npm ci` before the timing.
# A run that fails is still timed, and the table says it failed.
set -eu
[ $# -eq 1 ] || { echo "usage: bench-check.sh BASE (a commit)" >&2; exit 64; }
top=$(git rev-parse --show-toplevel)
base=$(git -C "$top" rev-parse --short "$1^{commit}") || { echo "bench-check: $1 is not a commit" >&2; exit 64; }
head=$(git -C "$top" rev-parse --short HEAD)
W=$(mktemp -d "${TMPDIR:-/tmp}/bench-check.XXXXXX")
# the trees readable by all: some tests run the binary as another user (nobody)
chmod 755 "$W"
wall_b=0 wall_h=0 wall_s=0
cleanup() {
  for t in base head; do
    [ -d "$W/$t" ] && git -C "$top" worktree remove --force "$W/$t" >/dev/null 2>&1
  done
  rm -rf "$W"
}
trap cleanup EXIT INT TERM

prepare() { # NAME REV: a worktree, built, with the Action's node_modules
  git -C "$top" worktree add --detach "$W/$1" "$2" >/dev/null 2>&1
  if [ -d "$top/node_modules" ] && cmp -s "$top/package-lock.json" "$W/$1/package-lock.json"; then
    cp -a "$top/node_modules" "$W/$1/"
  elif command -v npm >/dev/null 2>&1 && [ -f "$W/$1/package-lock.json" ]; then
    (cd "$W/$1" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  fi
  make -C "$W/$1" -j2 all build/test_runner >"$W/$1.build" 2>&1 ||
    { tail -20 "$W/$1.build" >&2; echo "bench-check: $1 ($2) does not build" >&2; exit 1; }
}
settle() { # wait for an idle machine (at most 300 s); prints the load it started at
  i=0
  while [ "$i" -lt 60 ]; do
    l=$(cut -d' ' -f1 /proc/loadavg)
    awk -v l="$l" 'BEGIN { exit !(l < 1.5) }' && { echo "$l"; return; }
    sleep 5
    i=$((i + 1))
  done
  echo "$(cut -d' ' -f1 /proc/loadavg) (not idle after 300 s)"
}
row() { # LABEL DIR: one timed make check-run, one table row
  load=$(settle)
  if /usr/bin/time -f '%e %U %S' -o "$W/time" make -C "$2" --no-print-directory check-run >"$W/log" 2>&1; then
    ok=passed
  else
    ok="**failed**: $(grep -E '^FAIL ' "$W/log" | cut -d' ' -f2 | tr '\n' ' ')"
  fi
  # (a failed command's time file starts with "Command exited with non-zero status N")
  read -r wall user sys <<EOF
$(tail -n 1 "$W/time")
EOF
  checks=$(grep -E '^[0-9]+%: Checks: [0-9]+' "$W/log" | tail -n 1 | sed 's/.*Checks: \([0-9]*\).*/\1/')
  shell=$(awk '/^shell: [0-9]+ passed, [0-9]+ failed/ { n = $2 + $4 } END { print n }' "$W/log")
  echo "| $1 | $checks | $shell | $wall s | $(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.0f", u + s }') CPU-s | $load | $ok |"
  eval "wall_$3=$wall"
}

prepare base "$base"
prepare head HEAD
echo "### make check against $base ($(date -u +%Y-%m-%d))"
echo
echo "\`sh scripts/bench-check.sh $base\` (\`make bench-check BENCH_CHECK_BASE=$base\`) on $(nproc) CPUs:"
echo "\`/usr/bin/time make check-run\` in each tree, built first, one after the other."
echo
echo "| tree | unit checks | shell tests | wall | CPU (user + sys) | load at start | result |"
echo "|---|---|---|---|---|---|---|"
row "$base" "$W/base" b
row "$head" "$W/head" h
for t in "$W"/head/tests/shell/t_*.sh; do
  [ -e "$W/base/tests/shell/${t##*/}" ] || rm -f "$t"
done
row "$head, $base's shell tests" "$W/head" s
echo
pct() { awk -v a="$1" -v b="$wall_b" 'BEGIN { printf "%.1f", 100 * a / b }'; }
echo "$head / $base: $(pct "$wall_h") % whole, $(pct "$wall_s") % over $base's shell tests."
