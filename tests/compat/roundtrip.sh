#!/bin/sh
# A lease round trip with one reflease binary, for builds that are not put
# through the whole of `make check` (the libgit2 1.8 build from Debian 12
# backports in .ci/run; the Action's bundle): version, then on a local store
# and on a remote one served by `git daemon` on 127.0.0.1: acquire, status
# live, transition, heartbeat (clock moved with faketime when installed),
# release, status released, and the server's history of the ref.
#   roundtrip.sh BIN [EXPECTED_LIBGIT2_PREFIX]
# Needs git (git daemon) and sed; no jq.
set -eu
bin=$1
want=${2:-}
t=$(mktemp -d)
dpid=""
cleanup() {
  [ -z "$dpid" ] || kill "$dpid" 2>/dev/null || true
  rm -rf "$t"
}
trap cleanup EXIT INT TERM
fail() { echo "roundtrip: FAIL: $*" >&2; exit 1; }
# shellcheck disable=SC1091  # git_daemon_start, as the shell tests start it
. "$(dirname "$0")/../shell/gitsrv_lib.sh"
field() { sed -n "s/.*\"$1\":\"\\([^\"]*\\)\".*/\\1/p" | head -n 1; }
export REFLEASE_OWNER=compat REFLEASE_HOST=compat-host XDG_CACHE_HOME="$t/cache"
unset REFLEASE_STORE REFLEASE_GITHUB_TOKEN GITHUB_TOKEN REFLEASE_LEASE_TOKEN 2>/dev/null || true

v=$("$bin" version) || fail "version"
echo "roundtrip: $v"
if [ -n "$want" ]; then
  echo "$v" | grep -q "libgit2 $want" || fail "expected libgit2 $want: $v"
fi

"$bin" init "$t/s.git" >/dev/null || fail "init"
git -C "$t/s.git" config daemon.receivepack true

# one round on STORE; LABEL names it in messages
round() {
  store=$1 label=$2
  R() { "$bin" --store "$store" --verify-timeout 2 "$@"; }
  tok=$(R --json acquire rt --ttl 60 | field lease_token)
  [ ${#tok} -eq 32 ] || fail "$label: acquire gave no token"
  R status rt | grep -q live || fail "$label: status not live"
  R transition rt --lease-token "$tok" --to working >/dev/null || fail "$label: transition"
  if command -v faketime >/dev/null 2>&1; then
    st=$(faketime -f +25s "$bin" --store "$store" --verify-timeout 2 --json heartbeat rt \
      --lease-token "$tok" | field status)
    [ "$st" = renewed ] || fail "$label: due heartbeat: $st"
  else
    R heartbeat rt --lease-token "$tok" >/dev/null || fail "$label: heartbeat"
  fi
  R release rt --lease-token "$tok" >/dev/null || fail "$label: release"
  R status rt | grep -q released || fail "$label: status not released"
  git -C "$t/s.git" log --format=%s refs/leases/rt | awk '{print $2}' | tr '\n' ' ' |
    grep -Eq '^release (heartbeat )?transition acquire $' ||
    fail "$label: history $(git -C "$t/s.git" log --format=%s refs/leases/rt | tr '\n' '|')"
  git -C "$t/s.git" update-ref -d refs/leases/rt
  echo "roundtrip: $label ok"
}

round "local:$t/s.git" local

TMPDIR=$t git_daemon_start "$t" s.git || fail "git daemon did not start"
dpid=$GITD_PID port=$GITD_PORT
round "remote:git://127.0.0.1:$port/s.git" remote
echo "roundtrip: ok"
