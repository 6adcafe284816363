# Helpers for the Action's shell tests (sourced; not a test itself):
# t_action.sh, t_action_git.sh, t_action_bundle.sh, t_action_post.sh. Plays
# action.yml's stages through tests/action/harness.mjs and reads its result.
#   action_setup      node/npm (SKIP without them), the validators (npm ci),
#                     a clean environment for the action, $root, $log
#   action_dir DIR    DIR laid out as the runner lays out the action, with the
#                     binary under test where the cache restores the bundle
#                     (a cache hit); $ap = DIR
#   act WITH [opts]   run the action's main stage (harness options after WITH);
#                     $st = exit, result in $TMPDIR/r.json, saved state in
#                     ${HARNESS_STATE:-$TMPDIR/state.json} (WITH beside it, .with);
#                     HARNESS_WRAP (JSON) -> --wrap, HARNESS_NODE -> --node
#   post [STATE]      the post stage of the step whose state is STATE (default
#                     as above), with that step's inputs, as the runner runs it
#   q PATH            a field of the last result ("" when absent)
#   action_cleanup [PIDFILE...]  (for a trap) stop the background heartbeats
#                     under RUNNER_TEMP, the processes of the PIDFILEs, fakegh
#   expect N MSG, is PATH V MSG, like PATH RE MSG, unlike PATH RE MSG, hex PATH N MSG
#   action_fakegh TOKEN  the fake GitHub server on $TMPDIR/gh.git (below)
#   status_json NAME  the lease as reflease sees it (outside the action)
#   field KEY         the first string field KEY of the JSON on stdin
#   ref NAME          the oid of refs/leases/NAME in the fake's repository (fails when absent)
#   alive PID         PID runs (not a zombie)
# shellcheck disable=SC2034,SC1091,SC2154 # $ap, $log are the sourcing test's; fakegh_lib.sh sets $base
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$(dirname "$0")/fakegh_lib.sh"

action_setup() {
  if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    echo "$(basename "$0" .sh): SKIP: node/npm are not installed (scripts/install-deps.sh installs them)"
    exit 0
  fi
  # one npm ci at a time: the action tests run in parallel (run.sh), and two
  # npm ci in one tree remove each other's files (the lock: package-lock.json)
  (cd "$root" && flock package-lock.json sh -c \
    '[ -d node_modules/yaml ] || npm ci --no-audit --no-fund --loglevel=error >/dev/null')
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
  # a runner has no make of its own around the action (make check SANITIZE=1 would pass it on)
  unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES 2>/dev/null || true
  # the GitHub token reaches the binary only through the action's token input
  unset GITHUB_TOKEN REFLEASE_GITHUB_TOKEN REFLEASE_GIT_TOKEN REFLEASE_STORE REFLEASE_OWNER \
    REFLEASE_HOST REFLEASE_NAMESPACE REFLEASE_LEASE_TOKEN GITHUB_SERVER_URL 2>/dev/null || true
  export GITHUB_ACTIONS=true GITHUB_REPOSITORY=octo/leases GITHUB_RUN_ID=42 GITHUB_RUN_ATTEMPT=1
  export GITHUB_JOB=deploy RUNNER_NAME=runner-1 RUNNER_TEMP="$TMPDIR/runner-temp"
  export HARNESS_JOB_SUMMARY="$TMPDIR/job-summary.md"
  mkdir -p "$RUNNER_TEMP"
  log="$TMPDIR/all.log"
  : >"$log"
}

action_dir() {
  ap=$1
  mkdir -p "$ap/build/bundle/bin"
  for f in action.yml action scripts Makefile mk lib cmd; do ln -s "$root/$f" "$ap/$f"; done
  # a copy: node resolves a main module's links, and the action's directory is dist/..
  cp -R "$root/dist" "$ap/dist"
  ln -s "$REFLEASE" "$ap/build/bundle/bin/reflease"
}

fail() { echo "FAIL: $*" >&2; echo "--- harness log (tail)" >&2; tail -n 30 "$TMPDIR/h.log" >&2; exit 1; }
harness() {
  st=0
  rm -rf "$TMPDIR/r.q" "$TMPDIR/r.q.tmp"
  node "$root/tests/action/harness.mjs" --action-path "$ap" --result "$TMPDIR/r.json" --fields "$TMPDIR/r.q" \
    --action-cache "$TMPDIR/action-yml.json" \
    --github-token "${CANARY:-}" --wrap "${HARNESS_WRAP:-[]}" --node "${HARNESS_NODE:-$(command -v node)}" \
    "$@" >"$TMPDIR/h.log" 2>&1 || st=$?
  cat "$TMPDIR/h.log" "$TMPDIR/r.json" >>"$log" 2>/dev/null || true
}
act() {
  w=$1
  shift
  sf=${HARNESS_STATE:-$TMPDIR/state.json}
  printf '%s' "$w" >"$sf.with"
  harness --with "$w" --state "$sf" "$@"
}
post() {
  sf=${1:-${HARNESS_STATE:-$TMPDIR/state.json}}
  harness --stage post --state "$sf" --with "$(cat "$sf.with")"
}
q() { # the harness wrote the last result's fields (--fields), one file each
  if [ -f "$TMPDIR/r.q/$1" ]; then cat "$TMPDIR/r.q/$1"; fi
}
expect() { [ "$st" -eq "$1" ] || fail "expected exit $1, got $st: $2"; }
is() { v=$(q "$1"); [ "$v" = "$2" ] || fail "$1 = '$v', expected '$2' ($3)"; }
like() { v=$(q "$1"); printf '%s' "$v" | grep -Eq -- "$2" || fail "$1 = '$v' does not match /$2/ ($3)"; }
unlike() { v=$(q "$1"); ! printf '%s' "$v" | grep -Eq -- "$2" || fail "$1 = '$v' matches /$2/ ($3)"; }
hex() { like "$1" "^[0-9a-f]{$2}\$" "$3"; }

# action_fakegh TOKEN: start the fake GitHub server (repository $TMPDIR/gh.git)
# for the action; sets fpid (the caller's trap kills it) and exports
# GITHUB_API_URL and GITHUB_GRAPHQL_URL.
action_fakegh() {
  fakegh_start --token "$1" --repo "$TMPDIR/gh.git"
  GITHUB_API_URL=$base
  GITHUB_GRAPHQL_URL="$GITHUB_API_URL/graphql"
  export GITHUB_API_URL GITHUB_GRAPHQL_URL
}

status_json() { REFLEASE_GITHUB_TOKEN=${CANARY:-} "$REFLEASE" --json status "$1" 2>>"$log"; }
field() { sed -n "s/.*\"$1\":\"\\([^\"]*\\)\".*/\\1/p" | head -n 1; }
ref() { git --git-dir="$TMPDIR/gh.git" rev-parse "refs/leases/$1"; }
alive() { kill -0 "$1" 2>/dev/null && [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]; }

# action_cleanup [PIDFILE...]: for a test's trap: kill the background
# heartbeats the action left under RUNNER_TEMP, the process of each PIDFILE
# given, and the fake GitHub server ($fpid, when started).
action_cleanup() {
  for p in "$RUNNER_TEMP"/reflease-heartbeat.*.pid "$@"; do
    [ -f "$p" ] && { kill "$(cat "$p")" 2>/dev/null || true; }
  done
  [ -z "${fpid:-}" ] || kill "$fpid" 2>/dev/null || true
}
