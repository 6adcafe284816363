#!/bin/sh
# shellcheck disable=SC1091,SC2154  # sourced helpers; base set by fakegh_start
# N-slot leases (issue 27) on the github: and remote: backends: 4 real
# processes on `run pool --slots 2` (the fake GitHub server, then a git
# smart-HTTP server) never have more than 2 guarded commands running at once
# — counted by the commands under flock(1), not by reflease — and each gets
# in; another count is exit 78 naming both; status NAME lists the slots and
# reconcile reports a plain lease beside them (slot-count-mismatch) through
# each store's listing. Shorter than t_slots.sh (local).
set -eu
: "${REFLEASE:?}" "${BUILD:?}" "${TMPDIR:?}"
. "$(dirname "$0")/gitsrv_lib.sh"
R=$REFLEASE
export REFLEASE_HOST=h1
unset REFLEASE_LEASE_TOKEN REFLEASE_NAMESPACE GITHUB_ACTIONS GITHUB_GRAPHQL_URL REFLEASE_GITHUB_TOKEN 2>/dev/null || true
unset http_proxy HTTP_PROXY https_proxy HTTPS_PROXY all_proxy ALL_PROXY 2>/dev/null || true
fail() { echo "FAIL: $*" >&2; exit 1; }

fpid="" GITSRV_PID=""
cleanup() {
  [ -z "$fpid" ] || kill "$fpid" 2>/dev/null || true
  [ -z "$GITSRV_PID" ] || kill "$GITSRV_PID" 2>/dev/null || true
}
trap cleanup EXIT INT TERM

. "$(dirname "$0")/slots_lib.sh"

# pool LABEL: 4 processes on --slots 2 against $REFLEASE_STORE, then a count clash
pool() {
  slots_pool "$1" 4 2 60
  # another count is a configuration error naming both
  t=$(REFLEASE_OWNER=alice "$R" acquire cfg --slots 2 --ttl 60 --print-token)
  st=0
  REFLEASE_OWNER=bob "$R" acquire cfg --slots 3 --ttl 60 >/dev/null 2>"$TMPDIR/$1.cfg.err" || st=$?
  [ "$st" -eq 78 ] || fail "$1: another count: exit $st, not 78"
  grep -qF "cfg has 2 slots" "$TMPDIR/$1.cfg.err" || fail "$1: $(cat "$TMPDIR/$1.cfg.err")"
  # status of the slotted name lists its slots (one listing of refs/leases/cfg@)
  REFLEASE_OWNER=bob "$R" --json status cfg >"$TMPDIR/$1.st" || fail "$1: status cfg"
  jq -e '.status == "absent" and .slots.count == 2 and .slots.live == 1 and
    (.slots.refs | length) == 1 and (.slots.refs[0].name | test("^cfg@[12]of2$"))' \
    "$TMPDIR/$1.st" >/dev/null || fail "$1: status cfg: $(cat "$TMPDIR/$1.st")"
  # a plain cfg beside the held slot: reconcile's streamed walk reports it
  pt=$(REFLEASE_OWNER=alice "$R" acquire cfg --ttl 60 --print-token)
  st=0
  REFLEASE_OWNER=alice "$R" --json reconcile >"$TMPDIR/$1.rec" || st=$?
  [ "$st" -eq 1 ] || fail "$1: reconcile of a plain cfg beside its slot: exit $st"
  jq -e '[.leases[] | .name as $n | .anomalies[] | select(.id == "slot-count-mismatch")
    | [($n | test("^cfg@[12]of2$")), .other, .other_slots]] == [[true, "cfg", null]]' \
    "$TMPDIR/$1.rec" >/dev/null || fail "$1: reconcile: $(cat "$TMPDIR/$1.rec")"
  REFLEASE_OWNER=alice "$R" release cfg --lease-token "$pt" >/dev/null
  for s in cfg@1of2 cfg@2of2; do
    REFLEASE_OWNER=alice "$R" release "$s" --lease-token "$t" >/dev/null 2>&1 || true
  done
}

# ---- github: the fake GitHub server
. "$(dirname "$0")/fakegh_lib.sh"
fakegh_start --token ghp_slotsTEST
GITHUB_API_URL="$base" GITHUB_TOKEN=ghp_slotsTEST \
  REFLEASE_STORE=github:octo/leases pool github

# ---- remote: git smart HTTP
mkdir -p "$TMPDIR/srv"
"$R" init "$TMPDIR/srv/s.git" >/dev/null
git -C "$TMPDIR/srv/s.git" config http.receivepack true
git_http_start "$TMPDIR/srv"
[ -n "$GITSRV_PORT" ] || fail "git http server did not start"
XDG_CACHE_HOME="$TMPDIR/cache" REFLEASE_STORE="remote:http://127.0.0.1:$GITSRV_PORT/git/s.git" pool remote
echo ok
