#!/bin/sh
# Assemble docs/benchmarks.md from the outputs of `make bench` (mk/bench.mk):
#   sh scripts/bench-report.sh BENCH_DIR "TARGET..."
# A target whose output starts with '#' wrote markdown; any other output is
# quoted as is under the command that produced it.
set -eu
DIR=$1
TARGETS=$2
cat <<EOF
# reflease benchmarks

Written by \`make bench\` (mk/bench.mk) on $(date -u +%Y-%m-%dT%H:%M:%SZ), commit
$(git rev-parse --short HEAD 2>/dev/null || echo unknown). Each figure is given with the
command that produced it; re-run \`make bench\` to refresh the file. Figures from a
shared or loaded machine vary from run to run; ratios measured within one run are the
ones to compare.

EOF
for t in $TARGETS; do
  out="$DIR/$t.out"
  if [ -f "$DIR/$t.failed" ]; then
    printf '## make %s\n\n**failed** (exit status %s); its stderr ended with:\n\n```\n' "$t" "$(cat "$DIR/$t.failed")"
    tail -20 "$DIR/$t.err"
    printf '```\n\n'
    continue
  fi
  if head -c 1 "$out" | grep -q '#'; then
    cat "$out"
    echo
  else
    case $t in
      bench-github) title="GitHub backend: API requests per operation (fake server)" ;;
      bench-ghlatency) title="GitHub backend: latency at the fake server with an injected round-trip delay" ;;
      bench-reconcile*) title="Reconcile sweep (local store)" ;;
      bench-remote) title="Remote backend (git:// and http:// on 127.0.0.1)" ;;
      *) title="$t" ;;
    esac
    # shellcheck disable=SC2016 # backquotes are markdown
    printf '## %s\n\n`make %s`:\n\n```\n' "$title" "$t"
    cat "$out"
    printf '```\n\n'
  fi
done
