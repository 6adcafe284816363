#!/bin/sh
# shellcheck disable=SC2154,SC2034 # root and log come from action_lib.sh, which reads HARNESS_WRAP
# The Action in a clean Debian root of this host's release (debootstrap
# --variant=minbase: no compiler, no libgit2, jansson or libcurl), shared with
# .ci/run under /var/cache/reflease/roots/<codename>-minbase. Every step of
# action.yml runs inside the root (tests/action/harness.mjs --wrap
# scripts/debroot.sh run); the fake GitHub server and a git http-backend
# server run on the host's 127.0.0.1.
#
# Cache hit: the bundle (make bundle, built on this host) where actions/cache
# restores it; apt-get, apt, cc, gcc, clang, make are shims first on PATH that
# log any call and fail. Checked: no call, no build step, and the bundled
# libraries at work: acquire
# through the API store (libcurl, jansson), status and release through the git
# store (libgit2 over smart HTTP with the token), status through the API again.
# Cache miss (REFLEASE_ACTION_MISS=1, as .ci/run sets it): a throwaway copy of
# the root and a copy of the action's source: the build step installs the
# build packages with apt and builds the bundle, then the command runs.
# Timings of both paths are printed (docs/benchmarks.md). The set-up time on a
# hit (setup, cache, build steps) is a speed target, so it is held to its limit
# only when the benchmark asks (ACTION_HIT_LIMIT_MS, scripts/bench-debroot.sh:
# 2000 ms), not on whatever machine runs `make check`.
#
# SKIP when the root is absent or not running as root, except under .ci/run
# (REFLEASE_CI_ROOTS=1: it made the roots, so this test must run):
#   sh scripts/debroot.sh ensure "$(. /etc/os-release; echo "$VERSION_CODENAME")-minbase" \
#      "$(. /etc/os-release; echo "$VERSION_CODENAME")" minbase
set -eu
# shellcheck disable=SC1091 # sourced helpers
. "$(dirname "$0")/action_lib.sh"
# shellcheck disable=SC1091
. "$(dirname "$0")/gitsrv_lib.sh"
# shellcheck disable=SC1091
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
rname="${codename:-unknown}-minbase"
rdir=$(sh "$root/scripts/debroot.sh" dir "$rname" 2>/dev/null) || rdir=""
if [ -z "$rdir" ] || [ "$(id -u)" -ne 0 ] || ! command -v unshare >/dev/null 2>&1; then
  if [ "${REFLEASE_CI_ROOTS:-}" = 1 ]; then
    echo "FAIL: no clean Debian root $rname (or not root): .ci/run makes it (scripts/debroot.sh)" >&2
    exit 1
  fi
  echo "t_action_bundle: SKIP: no clean Debian root $rname under ${REFLEASE_ROOTS:-/var/cache/reflease/roots}, or not root (sh scripts/debroot.sh ensure $rname $codename minbase)"
  exit 0
fi
action_setup

# the root is clean: no compiler, none of the libraries reflease links
dirty=$(sh "$root/scripts/debroot.sh" run "$rname" -- sh -c '
  for c in cc gcc clang c99 tcc make; do command -v "$c"; done
  ls /usr/lib/*-linux-gnu/ /usr/lib/ 2>/dev/null | grep -E "^lib(git2|jansson|curl)\.so" || true')
[ -z "$dirty" ] || fail "the root $rdir is not clean: $dirty"

# the bundle, built here (plain flags) from this source
(cd "$root" && make --no-print-directory SANITIZE= COVERAGE= bundle >"$TMPDIR/bundle.log" 2>&1) ||
  { cat "$TMPDIR/bundle.log" >&2; fail "make bundle"; }

# the action as the runner lays it out: files, not links (the root sees only $TMPDIR)
copy_action() {
  mkdir -p "$1"
  for f in action.yml action scripts Makefile mk lib cmd migrations; do cp -R "$root/$f" "$1/"; done
}
ap="$TMPDIR/ap"
copy_action "$ap"
mkdir -p "$ap/build"
cp -a "$root/build/bundle" "$ap/build/bundle"

# failing shims: any call is logged
shims="$TMPDIR/shims"
mkdir -p "$shims"
for s in apt-get apt apt-cache aptitude dpkg cc gcc c99 clang make ld; do
  printf '#!/bin/sh\necho "%s $*" >>"%s"\nexit 127\n' "$s" "$TMPDIR/shim-calls" >"$shims/$s"
  chmod 755 "$shims/$s"
done
: >"$TMPDIR/shim-calls"

CANARY="ghs_BUNDLEcanary0123456789abcdefCANARY"
"$BUILD/tools/fakegh" --token "$CANARY" --repo "$TMPDIR/gh.git" --port-file "$TMPDIR/port" \
  >/dev/null 2>"$TMPDIR/fake.err" &
fpid=$!
GITSRV_PID=""
mroot=""
cleanup() {
  kill "$fpid" 2>/dev/null || true
  [ -z "$GITSRV_PID" ] || kill "$GITSRV_PID" 2>/dev/null || true
  [ -z "$mroot" ] || rm -rf "$mroot"
}
trap cleanup EXIT INT TERM
i=0
while [ ! -s "$TMPDIR/port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
port=$(cat "$TMPDIR/port")
# the git store serves the fake GitHub's own repository: both stores see the same refs
mkdir -p "$TMPDIR/srv/octo"
ln -s "$TMPDIR/gh.git" "$TMPDIR/srv/octo/leases"
git -C "$TMPDIR/gh.git" config http.receivepack true
printf 'x-access-token:%s\n' "$CANARY" >"$TMPDIR/users"
git_http_start "$TMPDIR/srv" "$TMPDIR/users"
export GITHUB_API_URL="http://127.0.0.1:$port" GITHUB_GRAPHQL_URL="http://127.0.0.1:$port/graphql"
export GITHUB_SERVER_URL="http://127.0.0.1:$GITSRV_PORT/git"
export XDG_CACHE_HOME="$TMPDIR/cache"

ms() { printf '%.0f' "$(q "steps.$1.ms")"; }
inroot() { HARNESS_WRAP="[\"sh\",\"$root/scripts/debroot.sh\",\"run\",\"$1\",\"--keep-env\",\"--bind\",\"$TMPDIR\",\"--\"]"; }

# ---- cache hit --------------------------------------------------------------------
inroot "$rname"
PATH="$shims:$PATH" act '{"command":"acquire","name":"bundle","ttl":"60"}'
expect 0 "acquire on a cache hit in the clean root"
is steps.1.cache-hit true "cache hit"
is steps.2.outcome skipped "no build step on a hit"
is outputs.status acquired "acquire status"
tok=$(q outputs.lease-token)
oid=$(q outputs.oid)
hit_setup=$(($(ms 0) + $(ms 1) + $(ms 2)))
hit_cmd=$(ms 3)
[ -z "${ACTION_HIT_LIMIT_MS:-}" ] || [ "$hit_setup" -le "$ACTION_HIT_LIMIT_MS" ] ||
  fail "set-up on a cache hit took $hit_setup ms (> $ACTION_HIT_LIMIT_MS)"
PATH="$shims:$PATH" act '{"command":"status","name":"bundle","store":"git"}'
expect 0 "status through the git store"
is outputs.status live "git store: live"
is outputs.oid "$oid" "git store: the API store's commit"
PATH="$shims:$PATH" act "{\"command\":\"release\",\"name\":\"bundle\",\"store\":\"git\",\"lease-token\":\"$tok\"}"
expect 0 "release through the git store"
is outputs.status released "git store: released"
PATH="$shims:$PATH" act '{"command":"status","name":"bundle"}'
expect 0 "status through the API store"
is outputs.status released "API store: released"
[ ! -s "$TMPDIR/shim-calls" ] || fail "a cache hit called: $(cat "$TMPDIR/shim-calls")"
if grep -q "$CANARY" "$log"; then fail "the token was printed"; fi
echo "t_action_bundle: hit in $rname: set-up $hit_setup ms (setup $(ms 0), cache $(ms 1), build skipped), acquire $hit_cmd ms; no apt-get, no compiler"

# ---- cache miss -------------------------------------------------------------------
if [ "${REFLEASE_ACTION_MISS:-}" != 1 ]; then
  echo "t_action_bundle: ok (cache miss not played: REFLEASE_ACTION_MISS=1 plays it)"
  exit 0
fi
mname="$rname-miss-$$"
mroot="${rdir%/*}/$mname"
sh "$root/scripts/debroot.sh" clone "$rname" "$mname"
ap="$TMPDIR/ap-miss"
copy_action "$ap"
inroot "$mname"
act '{"command":"status","name":"bundle"}'
expect 0 "status on a cache miss in a copy of the clean root"
is steps.1.cache-hit false "cache miss"
is steps.2.outcome success "the build step ran"
is outputs.status released "miss: status"
[ -x "$ap/build/bundle/bin/reflease" ] || fail "the build step made no bundle"
miss_setup=$(($(ms 0) + $(ms 1) + $(ms 2)))
echo "t_action_bundle: miss in a copy of $rname: set-up $miss_setup ms (setup $(ms 0), build $(ms 2): apt + make bundle), status $(ms 3) ms"
echo "t_action_bundle: ok"
