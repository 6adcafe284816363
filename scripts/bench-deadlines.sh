#!/bin/sh
# `make bench-deadlines` (part of `make bench`, issue 24 item 3): the wall
# time of one CLI command against the fake GitHub (build/tools/fakegh,
# process mode, 127.0.0.1) with a fault injected through /_fakegh/fault,
# and of a remote: command against a server that accepts and never answers.
# Prints markdown (a table) for docs/benchmarks.md. The bounds themselves are
# held by tests/shell/t_github_deadlines.sh and t_remote_timeout.sh.
#   sh scripts/bench-deadlines.sh BUILD_DIR
set -eu
BUILD=${1:-build}
R="$BUILD/reflease"
T=$(mktemp -d)
cleanup() { kill "$fpid" "$spid" 2>/dev/null || true; rm -rf "$T"; }
fpid=0 spid=0
trap cleanup EXIT INT TERM
"$BUILD/tools/fakegh" --port-file "$T/port" >/dev/null 2>&1 &
fpid=$!
i=0
while [ ! -s "$T/port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
base="http://127.0.0.1:$(cat "$T/port")"
export GITHUB_API_URL="$base" GITHUB_TOKEN=ghp_benchdeadlines REFLEASE_STORE=github:octo/leases
export REFLEASE_HOST=bench XDG_CACHE_HOME="$T/cache"
unset GITHUB_GRAPHQL_URL REFLEASE_GITHUB_TOKEN REFLEASE_GITHUB_TOKEN_FILE GITHUB_ACTIONS || true
fault() { curl -sf -XPOST "$base/_fakegh/fault" -d "$1" >/dev/null; }
reset() { curl -sf -XPOST "$base/_fakegh/reset" -d '{}' >/dev/null; }
row() { # row WHAT FAULT -- reflease args...
  what=$1 fl=$2; shift 3
  st=0
  t0=$(date +%s.%N)
  "$R" "$@" >/dev/null 2>&1 || st=$?
  t1=$(date +%s.%N)
  # shellcheck disable=SC2016 # backquotes are markdown
  printf '| `%s` | %s | %.1f s | %s |\n' "$what" "$fl" "$(echo "$t1 - $t0" | bc)" "$st"
  reset
}
tok=$(REFLEASE_OWNER=alice "$R" acquire held --ttl 120 --print-token)
cat <<'MD'
## Deadlines under injected faults (issue 24)

`make bench-deadlines` (scripts/bench-deadlines.sh): the wall time of one command against
the fake GitHub server with a fault injected, and of a `remote:` command against a server
that accepts the connection and never answers. `--timeout` bounds the whole command and
`--wait` the wait; before issue 24 (efc38ef) the heartbeat took 22 s at `--timeout 4`, the
rate-limited wait 62 s at `--wait 4`, and the silent `remote:` server blocked for ever on
libgit2 1.5.

| command | fault | wall time | exit |
|---|---|---|---|
MD
fault '{"endpoint":"commit-post","kind":"5xx","count":100000}'
REFLEASE_OWNER=alice row "--timeout 10 heartbeat" "every commit POST answered 502" -- \
  --timeout 10 heartbeat held --lease-token "$tok" --ttl 300
fault '{"endpoint":"any","kind":"5xx","count":100000}'
REFLEASE_OWNER=carol row "--timeout 10 acquire" "every request answered 502" -- \
  --timeout 10 acquire other
fault '{"endpoint":"ref-get","kind":"403-retry","count":100000,"arg":30}'
REFLEASE_OWNER=bob row "acquire --wait 15" "held; every poll 403 + retry-after: 30" -- \
  acquire held --wait 15
fault '{"endpoint":"any","kind":"403-retry","count":100000,"arg":30}'
REFLEASE_OWNER=bob row "acquire --wait 15" "held; every request 403 + retry-after: 30" -- \
  acquire held --wait 15
REFLEASE_OWNER=bob row "acquire --wait 15" "held; none" -- acquire held --wait 15
python3 -c '
import socket, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(16); s.settimeout(0.5)
print(s.getsockname()[1], flush=True)
held, end = [], time.time() + 60
while time.time() < end:
    try:
        held.append(s.accept()[0])
    except socket.timeout:
        pass
' >"$T/sport" &
spid=$!
i=0
while [ ! -s "$T/sport" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
REFLEASE_OWNER=alice row "remote: --timeout 5 status" "server accepts, never answers" -- \
  --store "remote:git://127.0.0.1:$(cat "$T/sport")/s.git" --timeout 5 status x
printf '\n(%s)\n' "$("$R" version | head -n 1)"
