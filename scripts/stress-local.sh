#!/bin/sh
# Longer runs of tests/shell/t_local_maintenance.sh (issue 14):
#   sh scripts/stress-local.sh BIN BUILD RUNS SECONDS WRITERS [--markdown]
# Each run: WRITERS holders heartbeat for SECONDS next to looping git
# pack-refs --all --prune, gc --auto, gc, maintenance run and prunes through
# the library and the binary; then every acknowledged write is looked up on
# its lease's chain. Prints one line per run (or a markdown section) and
# fails when any run lost a write or failed.
set -eu
BIN=$1
BUILD=$2
RUNS=$3
SECS=$4
WRITERS=$5
MD=${6:-}
here=$(cd "$(dirname "$0")/.." && pwd)
load=$(cut -d' ' -f1-3 /proc/loadavg)
bad=0
rows=""
i=0
while [ "$i" -lt "$RUNS" ]; do
  i=$((i + 1))
  tmp=$(mktemp -d)
  if REFLEASE="$BIN" BUILD="$BUILD" TMPDIR="$tmp" STRESS_SECONDS="$SECS" STRESS_WRITERS="$WRITERS" \
    STRESS_MIN_ACKED=1 sh "$here/tests/shell/t_local_maintenance.sh" >"$tmp/.out" 2>&1; then
    verdict=ok
  else
    verdict=FAILED
    bad=1
  fi
  w=$(sed -n 's/^writes \([0-9]*\) renewed.*failed \([0-9]*\) prunes \([0-9]*\)$/\1 \2 \3/p' "$tmp/.out")
  a=$(sed -n 's/^acknowledged \([0-9]*\) lost \([0-9]*\)$/\1 \2/p' "$tmp/.out")
  g=$(for k in pack-refs gc-auto gc maintenance prune; do
        sed -n "s/^$k runs: \\([0-9]*\\)$/\\1/p" "$tmp/.out"; done | tr '\n' ' ')
  # shellcheck disable=SC2086 # word splitting of the figures is intended
  set -- $w $a $g
  line="| $i | ${2:-?} | ${4:-?} | ${5:-?} | ${1:-?}/${3:-?} | ${6:-?} | ${7:-?} | ${8:-?} | ${9:-?} | ${10:-?} | $verdict |"
  rows="$rows$line
"
  [ -n "$MD" ] || echo "run $i: acknowledged ${4:-?} lost ${5:-?}, failed writes ${2:-?}, library prunes ${3:-?}; git pack-refs ${6:-?}, gc --auto ${7:-?}, gc ${8:-?}, maintenance ${9:-?}, binary prune loops ${10:-?}: $verdict"
  [ "$verdict" = ok ] || tail -20 "$tmp/.out" >&2
  rm -rf "$tmp"
done
if [ -n "$MD" ]; then
  cat <<MD
## Local store next to git maintenance (issue 14)

\`make stress STRESS_RUNS=$RUNS STRESS_SECONDS=$SECS STRESS_WRITERS=$WRITERS\` (scripts/stress-local.sh,
tests/shell/t_local_maintenance.sh): $WRITERS holders heartbeat their own lease (TTL 5 s, an
attempt every 0.3 s, so about one \`renewed\` a second each) for $SECS s while real git processes
loop \`git pack-refs --all --prune\`, \`git gc --auto\` (gc.auto=1), \`git gc\` and
\`git maintenance run\`, one library process and the \`reflease\` binary loop acquire / release /
prune (deletes rewriting packed-refs). Then every acknowledged write (the acquire and each
\`renewed\` heartbeat) must be on its lease's first-parent chain. Load average at the start:
$load.

| run | failed heartbeats | acknowledged | lost | writes / library prunes | pack-refs runs | gc --auto | gc | maintenance | binary prune loops | verdict |
|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|
$(printf '%s' "$rows")
MD
fi
exit "$bad"
