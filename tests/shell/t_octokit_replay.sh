#!/bin/sh
# test: seconds 21
# Issue 6 item 6: GitHub's real recorded responses (@octokit/fixtures, pinned
# in tests/octokit/package-lock.json) replayed to reflease's GitHub transport
# through @octokit/fixtures-server; build/tools/ghreplay asserts each answer
# parsed as GitHub meant it, then every recorded answer must be consumed.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
dir="$here/octokit"
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "t_octokit_replay: node/npm not installed; install nodejs and npm" >&2
  exit 1
fi
if [ ! -d "$dir/node_modules/@octokit/fixtures-server" ]; then
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
fi
node "$dir/make-scenario.mjs" > "$TMPDIR/reflease-git-refs.json"

# fixtures-server needs a fixed port: pick a free-looking one, retry on clash.
try=0
while :; do
  port=$(( ($$ + try * 7919) % 20000 + 30000 ))
  node "$dir/node_modules/@octokit/fixtures-server/bin/server.js" --port "$port" \
    --fixtures "$TMPDIR/reflease-git-refs.json" --log-level error \
    >"$TMPDIR/server.log" 2>&1 &
  pid=$!
  i=0
  while [ $i -lt 50 ] && ! curl -sf "http://127.0.0.1:$port/ping" >/dev/null 2>&1; do
    sleep 0.1; i=$((i + 1))
  done
  if kill -0 "$pid" 2>/dev/null && curl -sf "http://127.0.0.1:$port/ping" >/dev/null; then
    break
  fi
  kill "$pid" 2>/dev/null || true
  try=$((try + 1))
  [ $try -lt 5 ] || { cat "$TMPDIR/server.log"; exit 1; }
done
trap 'kill "$pid" 2>/dev/null || true' EXIT INT TERM

answer=$(curl -sf -XPOST -H 'Content-Type: application/json' \
  "http://127.0.0.1:$port/fixtures" -d '{"scenario":"reflease-git-refs"}')
url=$(printf '%s' "$answer" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).url))')
url=$(printf '%s' "$url" | sed 's#//localhost:#//127.0.0.1:#')

GITHUB_API_URL="$url" GITHUB_GRAPHQL_URL="$url/graphql" \
  GITHUB_TOKEN=0000000000000000000000000000000000000001 "$BUILD/tools/ghreplay"

# every recorded answer was asked for (the fixture is gone once consumed)
left=$(curl -s -H 'Accept: application/vnd.github+json' "$url/repos/x/y")
case "$left" in
  *"not found"*) echo "t_octokit_replay: all recorded answers consumed" ;;
  *) echo "t_octokit_replay: fixtures left unconsumed: $left" >&2; exit 1 ;;
esac
