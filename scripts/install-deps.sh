#!/bin/sh
# Install the Debian packages reflease builds and tests with, when missing:
# Debian 12 (bookworm), Debian 13 (trixie) and Ubuntu (the GitHub runners; the
# Action's --build list). Idempotent and quick when everything is present (one
# dpkg-query per package).
#   install-deps.sh          everything the build, tests and lint use
#   install-deps.sh --build  only what building the binary needs (the GitHub Action)
set -eu
PKGS="build-essential pkg-config git libgit2-dev libjansson-dev libcurl4-openssl-dev check
      faketime libmicrohttpd-dev openssl gcovr clang-format cppcheck shellcheck groff-base man-db
      spin jq python3 clang CLANG_RT curl hyperfine lighttpd openssh-server
      e2fsprogs util-linux mount etcd-server etcd-client time zsh fish debhelper dpkg-dev
      fakeroot lintian strace"
BUILD_PKGS="build-essential pkg-config libgit2-dev libjansson-dev libcurl4-openssl-dev"
[ "${1:-}" = --build ] && PKGS=$BUILD_PKGS
# Package names that differ by release: clang's sanitizer runtime (make check
# SANITIZE=1 with CC=clang) is in libclang-rt-<clang's major>-dev.
# shellcheck disable=SC1091
codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
case $codename in
bookworm) clang_rt=libclang-rt-14-dev ;;
trixie) clang_rt=libclang-rt-19-dev ;;
noble) clang_rt=libclang-rt-18-dev ;;
*) # another release: the runtime of the clang it installs (apt-cache needs package lists)
  v=$(apt-cache depends clang 2>/dev/null | sed -n 's/.*Depends: clang-\([0-9][0-9]*\)$/\1/p' | head -n 1)
  clang_rt=${v:+libclang-rt-$v-dev} ;;
esac
PKGS=$(echo "$PKGS" | sed "s/CLANG_RT/$clang_rt/")
missing=""
for p in $PKGS; do
  st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  case "$st" in *"install ok installed"*) ;; *) missing="$missing $p" ;; esac
done
# Node.js and npm (offline lint of the Action, replay of GitHub's recorded
# responses): Debian's packages, unless a node/npm is already installed.
if [ "${1:-}" != --build ]; then
  command -v node >/dev/null 2>&1 || missing="$missing nodejs"
  command -v npm >/dev/null 2>&1 || missing="$missing npm"
fi
[ -z "$missing" ] && exit 0
echo "install-deps: installing:$missing" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO=sudo; else
    echo "install-deps: not root and no sudo; install these Debian packages:$missing" >&2
    exit 1
  fi
fi
# apt_update, apt_install: wait while another apt holds apt's locks
# shellcheck source=scripts/apt.sh disable=SC1091 # followed with shellcheck -x
. "$(dirname "$0")/apt.sh"
export APT_SUDO="$SUDO"
apt_update
# shellcheck disable=SC2086
apt_install $missing
