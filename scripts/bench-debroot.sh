#!/bin/sh
# shellcheck disable=SC2016 # backquotes in single quotes are markdown, not expansions
# Issue 16's figures as markdown sections of docs/benchmarks.md (make bench):
#   bench-debroot.sh debian13 BUILD   a cold Debian 13 `make check`, as a new CI machine
#                                     pays it: debootstrap --variant=minbase trixie into a
#                                     scratch root, scripts/install-deps.sh inside, then
#                                     make check on a copy of this tree; the root is removed
#   bench-debroot.sh action BUILD     the Action on a cache hit and on a miss in a clean
#                                     Debian root (tests/shell/t_action_bundle.sh with
#                                     REFLEASE_ACTION_MISS=1; needs the cached root)
# Needs root and the network to the Debian mirror.
set -eu
what=$1
build=$2
here=$(cd "$(dirname "$0")/.." && pwd)
case $what in
debian13)
  name="trixie-bench-$$"
  dir=$(dirname "$(sh "$here/scripts/debroot.sh" dir trixie 2>/dev/null || echo /var/cache/reflease/roots/x)")/$name
  trap 'rm -rf "$dir" "$dir.tmp" "$dir.log"' EXIT INT TERM
  t0=$(date +%s)
  sh "$here/scripts/debroot.sh" ensure "$name" trixie minbase 2>/dev/null
  t1=$(date +%s)
  sh "$here/scripts/debroot.sh" copy "$name" "$here" /src
  sh "$here/scripts/debroot.sh" run "$name" DEBIAN_FRONTEND=noninteractive -- \
    sh -c 'cd /src && sh scripts/install-deps.sh' >/dev/null 2>&1
  t2=$(date +%s)
  log=$(mktemp)
  rc=0
  sh "$here/scripts/debroot.sh" run "$name" -- sh -c 'cd /src && make check' >"$log" 2>&1 || rc=$?
  t3=$(date +%s)
  echo '## Debian 13: a cold `make check` (debootstrap, packages, tests)'
  echo
  echo 'What `.ci/run` pays on a machine without the cached root: `sh scripts/debroot.sh ensure'
  echo 'NAME trixie minbase` (from the mirror apt uses on the host), `scripts/install-deps.sh`'
  echo 'inside, then `make check` on a copy of the tree. With the root cached'
  echo '(`/var/cache/reflease/roots/trixie`) only the refresh (apt-get update + upgrade) and'
  echo 'the `make check` are paid again. `sh scripts/bench-debroot.sh debian13 build`:'
  echo
  echo '| part | seconds |'
  echo '|---|---|'
  echo "| debootstrap --variant=minbase trixie | $((t1 - t0)) |"
  echo "| scripts/install-deps.sh in the root | $((t2 - t1)) |"
  echo "| make check in the root (exit $rc) | $((t3 - t2)) |"
  echo "| total | $((t3 - t0)) |"
  echo
  echo '```'
  grep -E '^[0-9]+%: Checks:|^shell: ' "$log" || tail -n 5 "$log"
  echo '```'
  rm -f "$log"
  ;;
action)
  log=$(mktemp)
  t=$(mktemp -d)
  ACTION_HIT_LIMIT_MS=2000 ACTION_RELEASE_LIMIT_MS=2000 REFLEASE_ACTION_MISS=1 REFLEASE_ACTION_RELEASE_RUNS=5 REFLEASE="$here/$build/reflease" BUILD="$here/$build" TMPDIR="$t" \
    sh "$here/tests/shell/t_action_bundle.sh" >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
  rm -rf "$t"
  echo '## GitHub Action: set-up on a cache hit and on a miss (clean Debian root)'
  echo
  echo '`tests/shell/t_action_bundle.sh` with `REFLEASE_ACTION_MISS=1`: each stage of'
  echo '`action.yml` (a node24 JavaScript action: main, post) in a `debootstrap --variant=minbase`'
  echo 'root of the host'"'"'s release (no compiler, no libgit2, jansson or libcurl, no nodejs: the'
  echo 'stage runs on its own node, as on a runner). Set-up = the main stage from node'"'"'s start'
  echo 'until the command starts (loading dist/main.mjs, the cache key, no cache service: the'
  echo 'bundle present is a hit). Hit: the bundle where the cache restores it, `apt-get`, `cc`,'
  echo '`make` … failing shims on PATH, limit 2000 ms; the download of the cached bundle on'
  echo 'GitHub (about 8.5 MB compressed) is not included. Miss: a copy of the root; the main stage'
  echo 'installs the build packages with apt from the mirror and runs `make bundle`. Release: the'
  echo 'action'"'"'s release tarball and SHA256SUMS from a loopback server, downloaded, checked,'
  echo 'unpacked and used for an acquire, limit 2000 ms for the whole main stage. The main'
  echo 'stage'"'"'s time includes entering the root (unshare + chroot, tens of ms) and the command.'
  echo '`sh scripts/bench-debroot.sh action build`:'
  echo
  echo '```'
  grep -E '^t_action_(bundle|release run)' "$log"
  echo '```'
  rm -f "$log"
  ;;
*) echo "usage: bench-debroot.sh debian13|action BUILD" >&2; exit 64 ;;
esac
