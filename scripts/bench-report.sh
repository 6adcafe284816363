#!/bin/sh
# shellcheck disable=SC2016 # backquotes in single quotes are markdown, not expansions
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
      bench-github-ops) title="GitHub backend: API requests per operation (fake server)" ;;
      bench-ghlatency) title="GitHub backend: latency at the fake server with an injected round-trip delay" ;;
      bench-reconcile*) title="Reconcile sweep (local store)" ;;
      bench-remote) title="Remote backend (git:// and http:// on 127.0.0.1)" ;;
      *) title="$t" ;;
    esac
    case $t in
      bench-remote) intro='`build/tools/remotebench` starts `git daemon --enable=receive-pack` and
`git http-backend` behind lighttpd on 127.0.0.1, then times `lease_acquire` on fresh names
(ls-remote read, commit into the cache, negotiated push, verifying ls-remote) and due
`lease_heartbeat`s on one lease (an injected clock 10 s further on each time), next to the
git CLI doing only the verified write of a prepared commit
(`git push --force-with-lease=<ref>:<old>` + `git ls-remote`). ssh:// is not benchmarked
(the test sshd takes ~0.8 s per connection on this machine).' ;;
      bench-github-ops) intro='`build/tools/ghbench` counts the API requests each operation spends at
the fake GitHub server (tests/support/fakegh.c), against the budget of issue 6.' ;;
      bench-ghlatency) intro='`build/tools/bench_ghlatency RUNS 0 50 100`: every request to the fake
server is delayed by the given round trip (ms); one line per operation and delay with the
median, min and max over RUNS invocations (each a new store handle, as one `reflease`
process) and the median request count. A due heartbeat is planted before each heartbeat.' ;;
      *) intro="" ;;
    esac
    printf '## %s\n\n' "$title"
    [ -z "$intro" ] || printf '%s\n\n' "$intro"
    printf '`make %s`:\n\n```\n' "$t"
    cat "$out"
    printf '```\n\n'
  fi
done
