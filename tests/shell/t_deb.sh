#!/bin/sh
# shellcheck disable=SC1091,SC2154 # sourced helper: root
# test: seconds 120
# Issue 41: the Debian packages. `make deb` (debian/, debhelper,
# dpkg-buildpackage -us -uc -b) builds reflease, libreflease0 and
# libreflease-dev, and lintian finds no error in them. In a clean Debian 12
# root (bookworm-minbase, through a throwaway overlay: release_lib.sh's
# in_overlay), `apt-get install ./...deb` installs the three with their
# dependencies from Debian's own archive (the root's apt sources);
# `reflease version` runs, a lease round trip works (init, acquire, status,
# release), the man page, the completions (bash's sourced: reflease
# completes with _reflease), the headers, reflease.pc and the shared library
# (every dependency resolved) are where the packages say; then
# `apt-get purge` removes them: no package left in dpkg's database, none of
# their files left on disk.
#
# Runs once per CI: the instrumented make check builds skip; SKIP when the
# root is absent or not running as root, except under .ci/run
# (REFLEASE_CI_ROOTS=1).
. "$(dirname "$0")/release_lib.sh"
cd "$TMPDIR" || exit 1
if release_flavoured; then echo "t_deb: SKIP in $(basename "$BUILD") (run once, in the plain make check)"; exit 0; fi
roots=$(root_dirs bookworm-minbase)
if [ "$(id -u)" -ne 0 ] || ! command -v unshare >/dev/null 2>&1 || [ -z "$roots" ]; then
  [ "${REFLEASE_CI_ROOTS:-}" != 1 ] || fail "no clean Debian root bookworm-minbase (or not root): .ci/run makes it (scripts/debroot.sh)"
  echo "t_deb: SKIP: needs root and the Debian root bookworm-minbase under ${REFLEASE_ROOTS:-/var/cache/reflease/roots}"
  exit 0
fi
# make deb: in its own directory under $TMPDIR (a copy of the tree: nothing of build/ is touched)
(cd "$root" && MAKEFLAGS='' MAKELEVEL='' make --no-print-directory deb BUILD="$TMPDIR/b") >deb.log 2>&1 ||
  { cat deb.log >&2; fail "make deb"; }
grep -q "lintian: 0 errors" deb.log || fail "lintian: $(cat deb.log)"
mkdir debs
for p in reflease libreflease0 libreflease-dev; do
  for f in "$TMPDIR/b/deb/${p}_"*.deb; do
    [ -f "$f" ] || fail "make deb made no $p package"
    cp "$f" debs/
  done
done

cat >inroot.sh <<'INROOT'
set -eu
cd "$1"
apt-get update -qq
apt-get install -y -qq --no-install-recommends ./debs/*.deb >apt.log 2>&1 || { cat apt.log; exit 1; }
reflease version
reflease init /tmp/s.git >/dev/null
export REFLEASE_STORE=local:/tmp/s.git REFLEASE_OWNER=alice REFLEASE_HOST=h1
tok=$(reflease acquire job --ttl 60 --print-token)
reflease status job | grep -q '^job: live — claimed by alice on h1'
reflease release job --lease-token "$tok" >/dev/null
reflease status job | grep -q '^job: released — released by alice on h1'
# libcurl is dlopen()ed (issue 43), so only debian/rules' curl:Depends brings
# it: a github: store must reach the network layer (69: nothing listens on
# 127.0.0.1:9), not fail to load libcurl (78)
rc=0
GITHUB_TOKEN=t GITHUB_API_URL=http://127.0.0.1:9 reflease --store github:o/r --timeout 2 status job >/dev/null 2>gh.err || rc=$?
[ "$rc" = 69 ] || { echo "github: store in the installed package: exit $rc"; cat gh.err; exit 1; }
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -dumpmachine 2>/dev/null || ls -d /usr/lib/*-linux-gnu | head -n 1 | xargs basename)
for f in /usr/share/man/man1/reflease.1.gz /usr/share/bash-completion/completions/reflease \
  /usr/share/zsh/vendor-completions/_reflease /usr/share/fish/vendor_completions.d/reflease.fish \
  /usr/include/reflease.h /usr/include/reflease/sys/transport.h "/usr/lib/$ma/pkgconfig/reflease.pc" \
  "/usr/lib/$ma/libreflease.so" "/usr/lib/$ma/libreflease.so.0" "/usr/lib/$ma/libreflease.a"; do
  [ -e "$f" ] || { echo "missing: $f"; exit 1; }
done
grep -qx "libdir=/usr/lib/$ma" "/usr/lib/$ma/pkgconfig/reflease.pc" || { echo "reflease.pc: $(cat "/usr/lib/$ma/pkgconfig/reflease.pc")"; exit 1; }
if ldd "/usr/lib/$ma/libreflease.so.0" | grep 'not found'; then exit 1; fi
bash -c '. /usr/share/bash-completion/completions/reflease; complete -p reflease' | grep -q -- '-F _reflease reflease'
dpkg -L reflease libreflease0 libreflease-dev | while read -r f; do [ -d "$f" ] || echo "$f"; done >files
[ "$(wc -l <files)" -ge 15 ] || { echo "too few files: $(cat files)"; exit 1; }
apt-get purge -y -qq reflease libreflease0 libreflease-dev >purge.log 2>&1 || { cat purge.log; exit 1; }
for p in reflease libreflease0 libreflease-dev; do
  if dpkg-query -W -f '${Status}\n' "$p" 2>/dev/null | grep -q 'installed\|config-files'; then echo "left in dpkg: $p"; exit 1; fi
done
while read -r f; do [ ! -e "$f" ] || { echo "left on disk: $f"; exit 1; }; done <files
echo "packages installed, ran and purged: $(wc -l <files) files"
INROOT
rdir=${roots#*:}
in_overlay deb "${rdir%% *}" "$TMPDIR/inroot.sh" "$TMPDIR" >inroot.out 2>&1 || { cat inroot.out >&2; fail "the packages in a clean Debian 12"; }
grep -q '^packages installed, ran and purged' inroot.out || { cat inroot.out >&2; fail "no verdict"; }
echo "t_deb: $(grep '^deb: ' deb.log)"
echo "t_deb: $(grep '^reflease ' inroot.out); $(tail -n 1 inroot.out)"
echo "t_deb: ok"
