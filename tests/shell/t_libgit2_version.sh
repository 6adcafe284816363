#!/bin/sh
# Issue 41: a build that cannot work says so. Against a libgit2 older than
# 1.5 (Ubuntu 22.04's libgit2-dev is 1.1.0; reflease needs GIT_EOWNER and
# more of 1.5) the Makefile stops at once, before any compiler runs, with one
# line naming the version found, the version needed and the prebuilt release.
# A fake pkg-config directory stands in for the old libgit2 (its libgit2.pc
# says 1.1.0; PKG_CONFIG_PATH is searched first), so no old headers are
# needed. 1.5.0 and this host's own libgit2 pass; the goals that compile
# nothing (clean) are not stopped.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$TMPDIR" || exit 1
fail() { echo "FAIL: $*" >&2; exit 1; }
pc() {
  mkdir -p "pc-$1"
  printf 'prefix=/usr\nName: libgit2\nDescription: libgit2 (fake, t_libgit2_version)\nVersion: %s\nLibs: -lgit2\nCflags:\n' "$1" >"pc-$1/libgit2.pc"
}
mk() { MAKEFLAGS='' MAKELEVEL='' make --no-print-directory -C "$root" "$@"; }
pc 1.1.0
for goal in all bundle release; do
  set +e
  PKG_CONFIG_PATH="$TMPDIR/pc-1.1.0" mk -n "$goal" >out 2>err
  rc=$?
  set -e
  [ "$rc" -ne 0 ] || fail "make $goal went on with libgit2 1.1.0"
  [ ! -s out ] || fail "make $goal with libgit2 1.1.0 would run: $(head -n 3 out)"
  [ "$(wc -l <err)" -eq 1 ] || fail "make $goal: not one line: $(cat err)"
  grep -q 'libgit2 1.1.0 found, reflease needs libgit2 1.5 or newer: .*prebuilt release reflease-[0-9.]*-linux-[a-z0-9_]*\.tar\.gz' err ||
    fail "make $goal said: $(cat err)"
done
msg=$(cat err)
PKG_CONFIG_PATH="$TMPDIR/pc-1.1.0" mk -n clean >/dev/null 2>err || fail "make clean stopped: $(cat err)"
pc 1.5.0
PKG_CONFIG_PATH="$TMPDIR/pc-1.5.0" mk -n all >/dev/null 2>err || fail "make with libgit2 1.5.0 stopped: $(cat err)"
mk -n all >/dev/null 2>err || fail "make with this host's libgit2 $(pkg-config --modversion libgit2) stopped: $(cat err)"
echo "t_libgit2_version: ok: $msg"
