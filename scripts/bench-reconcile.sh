#!/bin/sh
# `make bench-reconcile-report` (part of `make bench`, issue 8): the reconcile
# sweep of 10,000 and 100,000 leases, medians of repeated runs of
# tests/tools/bench_reconcile.c, as a markdown section of docs/benchmarks.md.
#   sh scripts/bench-reconcile.sh TOOL "N..." RUNS DIR_PREFIX
set -eu
TOOL=$1
SIZES=$2
RUNS=$3
PREFIX=$4
med() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
cat <<EOF
## Reconcile sweep (local store)

\`build/tools/bench_reconcile N DIR\`, $RUNS runs per size after the store was built (the
first call builds \`DIR\` with \`git fast-import\`; later runs reuse it). One run =
\`lease_store_open\` + \`lease_reconcile\` (one \`lease_fetch_namespace\`, every lease read
with its parent commit and classified; no actions) in a fresh process; peak RSS from
\`getrusage\`. The store clock is pinned to the build time, so each run classifies the same
mix (clean heartbeating leases, every 50th above the heartbeat floor, every 20th expired,
every 10th released). Load average at the start: $(cut -d' ' -f1-3 /proc/loadavg).

| leases | sweep wall, median (min–max) | process CPU, median | peak RSS, median | target |
|---:|---:|---:|---:|---|
EOF
for n in $SIZES; do
  dir="$PREFIX-$n"
  "$TOOL" "$n" "$dir" >/dev/null # build or reuse
  : >"$dir.runs"
  i=0
  while [ "$i" -lt "$RUNS" ]; do
    "$TOOL" "$n" "$dir" |
      sed -n 's/^sweep: [0-9]* leases in \([0-9.]*\) s wall (process CPU \([0-9.]*\) s.*peak RSS \([0-9.]*\) MiB.*/\1 \2 \3/p' >>"$dir.runs"
    i=$((i + 1))
  done
  [ "$(wc -l <"$dir.runs")" -eq "$RUNS" ] || { echo "bench-reconcile: unexpected output" >&2; exit 1; }
  w=$(cut -d' ' -f1 "$dir.runs" | med)
  wlo=$(cut -d' ' -f1 "$dir.runs" | sort -n | head -1)
  whi=$(cut -d' ' -f1 "$dir.runs" | sort -n | tail -1)
  c=$(cut -d' ' -f2 "$dir.runs" | med)
  m=$(cut -d' ' -f3 "$dir.runs" | med)
  if [ "$n" -eq 10000 ]; then
    t=$(awk -v w="$w" -v m="$m" 'BEGIN { print (w < 2 && m < 64) ? "< 2 s, < 64 MiB: met" : "< 2 s, < 64 MiB: NOT met" }')
  else
    t="recorded"
  fi
  printf '| %s | %s s (%s–%s) | %s s | %s MiB | %s |\n' "$n" "$w" "$wlo" "$whi" "$c" "$m" "$t"
  rm -f "$dir.runs"
done
cat <<'EOF'

Notes (from the reconcile work, issue 4): the 100,000-lease profile is flat — zlib inflate
of loose objects, the kernel's path lookups for loose refs, payload parsing (jansson, UTF-8
checks) and malloc. Commit objects are not cached by libgit2
(`GIT_OPT_SET_CACHE_OBJECT_LIMIT` for commits = 0, set by the local backend): each commit is
read once per operation, and the cache held about 20 MiB of a 10,000-lease sweep. Memory
grows linearly with the namespace (about 3.4 KiB per lease: the listing, each lease's state
and commit messages, the report); a streaming `lease_fetch_namespace` (a callback per
lease) would bound it regardless of N.
EOF
