#!/bin/sh
# `make deb` (issue 41): the Debian packages reflease, libreflease0 and
# libreflease-dev, built by Debian's tooling from debian/ in a copy of the
# tree (dpkg-buildpackage -us -uc -b: its clean step would empty build/):
#   deb.sh VERSION OUT
# OUT gets the .deb files, the .changes and .buildinfo, and lintian.txt:
# lintian's verdict on the packages, which must hold no error (warnings are
# printed). Needs debhelper, dpkg-dev, lintian and the build dependencies of
# debian/control (scripts/install-deps.sh installs them).
set -eu
[ $# -eq 2 ] || { echo "usage: deb.sh VERSION OUT" >&2; exit 64; }
version=$1 out=$2
here=$(cd "$(dirname "$0")/.." && pwd)
for c in dpkg-buildpackage dh lintian; do
  command -v "$c" >/dev/null 2>&1 || { echo "deb: $c is needed (sh scripts/install-deps.sh)" >&2; exit 1; }
done
mkdir -p "$out"
out=$(cd "$out" && pwd)
src="$out/reflease-$version"
rm -rf "$src" "$out"/*.deb "$out"/*.changes "$out"/*.buildinfo
mkdir -p "$src"
if git -C "$here" rev-parse --git-dir >/dev/null 2>&1; then
  (cd "$here" && git ls-files -co --exclude-standard -z | tar --null -T - -cf -) | tar -C "$src" -xf -
else
  tar -C "$here" --exclude='./build*' --exclude=./node_modules -cf - . | tar -C "$src" -xf -
fi
rm -rf "$src/build" "$src/build-san" "$src/build-cov"
# the package's version is the Makefile's
v=$(sed -n '1s/^reflease (\([^-)]*\).*/\1/p' "$src/debian/changelog")
[ "$v" = "$version" ] || { echo "deb: debian/changelog says $v, the Makefile $version" >&2; exit 1; }
# a build of its own: none of the calling make's variables (BUILD=...)
(cd "$src" && unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES && dpkg-buildpackage -us -uc -b) >"$out/build.log" 2>&1 || {
  tail -n 40 "$out/build.log" >&2
  echo "deb: dpkg-buildpackage failed (log: $out/build.log)" >&2
  exit 1
}
# dpkg-buildpackage writes next to the source directory, i.e. in $out
changes=$(ls "$out"/reflease_"$version"-*_*.changes)
set +e
lintian --fail-on error "$changes" >"$out/lintian.txt" 2>&1
rc=$?
set -e
cat "$out/lintian.txt"
[ "$rc" -eq 0 ] || { echo "deb: lintian found errors (above)" >&2; exit 1; }
rm -rf "$src"
echo "deb: $(cd "$out" && find . -maxdepth 1 -name '*.deb' | sort | tr '\n' ' ')in $out; lintian: $(grep -c '^E:' "$out/lintian.txt" || true) errors, $(grep -c '^W:' "$out/lintian.txt" || true) warnings"
