#!/bin/sh
# `make release` (issue 41): the release tarball of this architecture and
# SHA256SUMS, in OUT:
#   release.sh VERSION ARCH BUNDLE COMPLETIONS OUT
# BUNDLE is make bundle's directory (bin/reflease + lib/, RPATH $ORIGIN/../lib),
# COMPLETIONS holds reflease.bash, _reflease and reflease.fish.
# OUT/reflease-VERSION-linux-ARCH.tar.gz has one top directory
# reflease-VERSION-linux-ARCH/ with (a fixed layout: the GitHub Action
# downloads it):
#   bin/reflease  lib/  share/man/man1/reflease.1
#   share/bash-completion/completions/reflease  share/zsh/site-functions/_reflease
#   share/fish/vendor_completions.d/reflease.fish  README
# The bundle is checked first (scripts/bundle-check.sh: glibc symbols up to
# GLIBC_2.35, no host library but glibc's): a bundle that would not run on
# Ubuntu 22.04 is never packed. The archive is reproducible (sorted names,
# owner 0, the commit's time or SOURCE_DATE_EPOCH, gzip -n). OUT/SHA256SUMS
# lists every reflease-VERSION-linux-*.tar.gz in OUT (sha256sum's format,
# base names: `sha256sum -c SHA256SUMS` in OUT checks them).
set -eu
[ $# -eq 5 ] || { echo "usage: release.sh VERSION ARCH BUNDLE COMPLETIONS OUT" >&2; exit 64; }
version=$1 arch=$2 bundle=$3 comp=$4 out=$5
here=$(cd "$(dirname "$0")/.." && pwd)
name="reflease-$version-linux-$arch"
sh "$here/scripts/bundle-check.sh" "$bundle" >&2 || {
  echo "release: $bundle cannot be released (above); releases are built on Debian 12" >&2
  exit 1
}
mkdir -p "$out"
stage="$out/.stage"
rm -rf "$stage"
top="$stage/$name"
mkdir -p "$top/share/man/man1" "$top/share/bash-completion/completions" \
  "$top/share/zsh/site-functions" "$top/share/fish/vendor_completions.d"
cp -a "$bundle/bin" "$bundle/lib" "$top/"
install -m 644 "$here/docs/reflease.1" "$top/share/man/man1/reflease.1"
install -m 644 "$comp/reflease.bash" "$top/share/bash-completion/completions/reflease"
install -m 644 "$comp/_reflease" "$top/share/zsh/site-functions/_reflease"
install -m 644 "$comp/reflease.fish" "$top/share/fish/vendor_completions.d/reflease.fish"
sed -e "s/@VERSION@/$version/g" -e "s/@ARCH@/$arch/g" "$here/scripts/release-README.in" >"$top/README"
chmod 644 "$top/README"
epoch=${SOURCE_DATE_EPOCH:-$(git -C "$here" log -1 --format=%ct 2>/dev/null || date +%s)}
rm -f "$out/$name.tar.gz"
(cd "$stage" && tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" \
  -cf - "$name") | gzip -n -9 >"$out/$name.tar.gz.tmp"
mv "$out/$name.tar.gz.tmp" "$out/$name.tar.gz"
rm -rf "$stage"
(cd "$out" && sha256sum "reflease-$version-linux-"*.tar.gz >SHA256SUMS.tmp && mv SHA256SUMS.tmp SHA256SUMS)
echo "release: $out/$name.tar.gz ($(du -h "$out/$name.tar.gz" | cut -f1)), $out/SHA256SUMS"
