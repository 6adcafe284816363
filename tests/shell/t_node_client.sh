#!/bin/sh
# test: seconds 25
# The Node client (clients/node, issue 42) against the real binary: its
# node:test suite (clients/node/test/client.test.js) on a local store and on
# the fake GitHub server (build/tools/fakegh, a repository of its own); its
# types checked by tsc on a consumer file (clients/node/test/consumer.ts,
# with @ts-expect-error lines that fail when the types accept too much). Its
# npm tarball: t_node_pack.sh.
# shellcheck disable=SC1091,SC2154 # sourced helper; fakegh_lib.sh sets fpid and base
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$(dirname "$0")/fakegh_lib.sh"
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "t_node_client: SKIP: node/npm are not installed (scripts/install-deps.sh installs them)"
  exit 0
fi
fail() { echo "FAIL: $*" >&2; exit 1; }
case "$(basename "$BUILD")" in
build-san)
  # under ASan the AbortSignal-ended wait's process outlives node's event
  # loop (SANITIZE=1 CI, not reproduced outside the harness): the client's
  # subject is its JavaScript, run against the plain and coverage builds
  echo "t_node_client: SKIP in the SANITIZE=1 build"
  exit 0
  ;;
esac
# as the action tests: a SANITIZE build's leak report is not the client's subject
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
pkg="$root/clients/node"
# typescript and @types/node, pinned in its package-lock.json (one npm ci at a time)
(cd "$pkg" && flock package-lock.json sh -c \
  '[ -x node_modules/.bin/tsc ] || npm ci --no-audit --no-fund --loglevel=error >/dev/null')

CANARY="ghs_NODEcanary0123456789abcdefCANARY"
trap '[ -z "${fpid:-}" ] || kill "$fpid" 2>/dev/null || true' EXIT INT TERM
fakegh_start --token "$CANARY" --repo "$TMPDIR/gh.git" --owner infra --name locks
unset GITHUB_TOKEN REFLEASE_GITHUB_TOKEN REFLEASE_STORE REFLEASE_OWNER REFLEASE_LEASE_TOKEN 2>/dev/null || true
GITHUB_API_URL=$base GITHUB_GRAPHQL_URL="$base/graphql" REFLEASE_BIN=$REFLEASE \
  REFLEASE_TEST_GITHUB=infra/locks REFLEASE_TEST_GITHUB_TOKEN=$CANARY \
  node --test --test-reporter=tap "$pkg/test/" >"$TMPDIR/node.out" 2>&1 || { cat "$TMPDIR/node.out"; fail "node --test"; }
grep -q '^# fail 0' "$TMPDIR/node.out" || { cat "$TMPDIR/node.out"; fail "node --test: failures"; }
grep -q '^# skipped 0' "$TMPDIR/node.out" || { cat "$TMPDIR/node.out"; fail "node --test: the github part was skipped"; }
grep -q "$CANARY" "$TMPDIR/node.out" && fail "the GitHub token was printed"
git --git-dir="$TMPDIR/gh.git" rev-parse -q --verify refs/leases/gh >/dev/null || fail "nothing written on the fake"

# the types: a consumer file through tsc (no emit)
(cd "$pkg" && node_modules/.bin/tsc -p test/tsconfig.json) || fail "tsc on test/consumer.ts"

echo "t_node_client: ok"
