#!/bin/sh
# shellcheck disable=SC1091,SC2154 # sourced helper: root, tarball, rel_name, rel_version
# test: seconds 20
# Issue 41: `make release` and the bundle check.
# - build/release/reflease-VERSION-linux-ARCH.tar.gz has the fixed layout
#   (one top directory: bin/reflease, lib/, the man page, the bash, zsh and
#   fish completions, README; nothing else) and SHA256SUMS, which
#   `sha256sum -c` accepts (and refuses once the tarball changes);
# - the unpacked tree passes scripts/bundle-check.sh (no glibc symbol newer
#   than GLIBC_2.35: Ubuntu 22.04's; no library from the host but glibc's)
#   and runs from wherever it is moved;
# - the check fails, naming the file and the version, for a library needing
#   GLIBC_2.36 (arc4random, new in glibc 2.36), for a bundle missing one of
#   its libraries (it would come from the host), and for a program that
#   opens a host library at run time (dlopen: libz);
# - on a host whose glibc makes newer symbols (Debian 13: 2.41), make release
#   refuses with that message instead of packing a tarball Ubuntu 22.04
#   cannot run.
# The instrumented make check builds skip (the release is built plain).
. "$(dirname "$0")/release_lib.sh"
cd "$TMPDIR" || exit 1
if release_flavoured; then echo "t_release: SKIP in $(basename "$BUILD") (the plain make check checks the release)"; exit 0; fi

# the checker on a bundle made bad on purpose (cc: make check's build tools)
neg() {
  mkdir -p neg
  printf '#include <stdlib.h>\nunsigned int newest(void);\nunsigned int newest(void) { return arc4random(); }\n' >neg/new.c
  cc -shared -fPIC -o neg/libnewest.so neg/new.c || fail "cc: a library calling arc4random"
  if readelf -V --wide neg/libnewest.so | grep -q 'GLIBC_2.36'; then
    cp -a "$1" neg/b1
    cp neg/libnewest.so neg/b1/lib/libnewest.so
    if sh "$root/scripts/bundle-check.sh" neg/b1 >neg/out1 2>&1; then fail "a library needing GLIBC_2.36 passed the check"; fi
    grep -q 'lib/libnewest.so needs GLIBC_2.36 (newer than GLIBC_2.35' neg/out1 || fail "check said: $(cat neg/out1)"
  else
    fail "arc4random without GLIBC_2.36: $(readelf -V --wide neg/libnewest.so | grep GLIBC_ | head -n 3)"
  fi
  cp -a "$1" neg/b2
  # a library of lib/ that bin/reflease needs (GSSAPI where libgit2 is linked
  # in from its archive, libgit2 itself where not)
  so=$(readelf -d "$1/bin/reflease" | sed -n 's/.*(NEEDED).*\[\(lib[^]]*\)\]/\1/p' |
    while read -r n; do if [ -f "$1/lib/$n" ]; then echo "$n"; fi; done | head -n 1)
  [ -n "$so" ] || fail "bin/reflease needs no library of lib/: $(readelf -d "$1/bin/reflease" | grep NEEDED)"
  rm "neg/b2/lib/$so"
  if sh "$root/scripts/bundle-check.sh" neg/b2 >neg/out2 2>&1; then fail "a bundle without $so passed the check"; fi
  grep -q "bin/reflease needs $so, which is not in lib/" neg/out2 || fail "check said: $(cat neg/out2)"
  # a library opened at run time (dlopen, as a libcurl loaded on demand would
  # be) from the host: no DT_NEEDED names it, the loader's own log does
  mkdir -p neg/b3/bin neg/b3/lib
  printf '#include <dlfcn.h>\nint main(void) { return dlopen("libz.so.1", RTLD_NOW) ? 0 : 1; }\n' >neg/dl.c
  cc -o neg/b3/bin/reflease neg/dl.c -ldl || fail "cc: a program opening libz at run time"
  neg/b3/bin/reflease || fail "this host has no libz.so.1 to open"
  if sh "$root/scripts/bundle-check.sh" neg/b3 >neg/out3 2>&1; then fail "a library opened at run time from the host passed the check"; fi
  grep -q 'reflease version loaded /.*/libz\.so\.1 from the host' neg/out3 || fail "check said: $(cat neg/out3)"
}

touch "$TMPDIR/neg-start"
host_glibc=$(ldd --version 2>/dev/null | sed -n '1s/.* \([0-9][0-9]*\.[0-9][0-9]*\)$/\1/p')
if ! release_build; then
  # only a host whose glibc is newer than the release's may fail, and only so
  if grep -q 'newer than GLIBC_2.35: it would not run on Ubuntu 22.04; build the release on Debian 12' "$TMPDIR/release.log" &&
    [ "$(printf '%s\n2.36\n' "$host_glibc" | sort -V | tail -n 1)" != 2.36 ]; then
    [ -z "$(find "$root/build/release" -name "$rel_name.tar.gz" -newer "$TMPDIR/neg-start" 2>/dev/null)" ] ||
      fail "a refused release wrote $tarball"
    neg "$root/build/bundle"
    echo "t_release: ok (glibc $host_glibc: make release refuses, as it must: releases are built on Debian 12)"
    exit 0
  fi
  cat "$TMPDIR/release.log" >&2
  fail "make release"
fi
grep -q '^bundle-check: ok' "$TMPDIR/release.log" || fail "make release did not run the bundle check"
[ -f "$tarball" ] || fail "no $tarball"
# layout: exactly these entries besides lib/'s libraries
tar -tzf "$tarball" | grep -v "^$rel_name/lib/." | sort >layout
cat >want <<LAYOUT
$rel_name/
$rel_name/README
$rel_name/bin/
$rel_name/bin/reflease
$rel_name/lib/
$rel_name/share/
$rel_name/share/bash-completion/
$rel_name/share/bash-completion/completions/
$rel_name/share/bash-completion/completions/reflease
$rel_name/share/fish/
$rel_name/share/fish/vendor_completions.d/
$rel_name/share/fish/vendor_completions.d/reflease.fish
$rel_name/share/man/
$rel_name/share/man/man1/
$rel_name/share/man/man1/reflease.1
$rel_name/share/zsh/
$rel_name/share/zsh/site-functions/
$rel_name/share/zsh/site-functions/_reflease
LAYOUT
sort want | diff - layout >layout.diff || fail "tarball layout differs: $(cat layout.diff)"
(cd "$root/build/release" && sha256sum -c SHA256SUMS) >sums.out 2>&1 || fail "sha256sum -c: $(cat sums.out)"
grep -qx "$rel_name.tar.gz: OK" sums.out || fail "SHA256SUMS does not list $rel_name.tar.gz: $(cat sums.out)"
# a changed tarball fails the check
mkdir sums
cp "$root/build/release/SHA256SUMS" "$tarball" sums/
printf 'x' >>"sums/$rel_name.tar.gz"
if (cd sums && sha256sum -c SHA256SUMS) >/dev/null 2>&1; then fail "sha256sum -c accepted a changed tarball"; fi
# unpacked and moved: checked, and it runs
tar -xzf "$tarball"
mv "$rel_name" moved
grep -q 'sha256sum --ignore-missing -c SHA256SUMS' moved/README || fail "README: no checksum step"
sh "$root/scripts/bundle-check.sh" moved >check.out 2>&1 || fail "bundle check of the tarball: $(cat check.out)"
moved/bin/reflease version | grep -q "^reflease $rel_version " || fail "the unpacked reflease: $(moved/bin/reflease version 2>&1)"
moved/bin/reflease completion bash | cmp -s - moved/share/bash-completion/completions/reflease ||
  fail "the tarball's bash completion is not its reflease's"
neg moved
echo "t_release: ok: $(cat check.out)"
