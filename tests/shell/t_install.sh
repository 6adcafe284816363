#!/bin/sh
# `make install` gives a user everything to build against reflease: the
# headers (reflease.h, reflease/*.h and reflease/sys/*.h), the libraries and
# reflease.pc. A program compiled and linked only with `pkg-config --cflags
# --libs reflease` against that prefix implements its own transport
# (tests/install/tiny_transport.c, reflease/sys/transport.h) and runs an
# acquire and a release over it; --timeout (timeout_s) reaches it through
# set_deadline (vtable version 5, issue 38): an acquire over a store that
# never answers ends in about 1 s, and a version-4 transport still works.
# It also puts down the man page and the
# bash, zsh and fish completions (issue 41: what `reflease completion SHELL`
# prints); `make uninstall` with the same PREFIX then removes every file it
# put down (the prefix holds no file nor link after it).
set -eu
here=$(cd "$(dirname "$0")/../.." && pwd)
prefix="$TMPDIR/prefix"
# The build flavour the tests run on (make check SANITIZE=1 / coverage).
flavour=
cflags=
case "$(basename "$BUILD")" in
build-san) flavour=SANITIZE=1; cflags="-fsanitize=address,undefined" ;;
build-cov) flavour=COVERAGE=1; cflags="--coverage" ;;
esac
# A make of its own: not a part of the caller's jobserver (make check).
# shellcheck disable=SC2086
if ! MAKEFLAGS='' MAKELEVEL='' make -s --no-print-directory -C "$here" $flavour \
    PREFIX="$prefix" install >"$TMPDIR/make.log" 2>&1; then
  cat "$TMPDIR/make.log"; echo "FAIL: make install"; exit 1
fi
for h in "$here"/lib/include/reflease/*.h "$here"/lib/include/reflease/sys/*.h; do
  rel=${h#"$here"/lib/include/}
  cmp "$h" "$prefix/include/$rel" || { echo "FAIL: $rel not installed as is"; exit 1; }
done
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
[ "$(pkg-config --variable=includedir reflease)" = "$prefix/include" ] ||
  { echo "FAIL: reflease.pc names another includedir"; exit 1; }
# Only the installed prefix: compiled from $TMPDIR, no -I into the tree.
cd "$TMPDIR"
cp "$here/tests/install/tiny_transport.c" .
# shellcheck disable=SC2046,SC2086
cc -std=c11 -Wall -Wextra -Werror -Wpedantic $cflags $(pkg-config --cflags reflease) \
  -o tiny tiny_transport.c $(pkg-config --libs reflease) ||
  { echo "FAIL: a transport cannot be built against the installed headers"; exit 1; }
# Each installed header compiles on its own (self-contained), sys/ included.
for h in "$prefix"/include/reflease/*.h "$prefix"/include/reflease/sys/*.h; do
  rel=${h#"$prefix"/include/}
  # (a declaration of its own: a header of macros only is not an empty unit)
  printf '#include <%s>\ntypedef int one_unit;\n' "$rel" >one.c
  # shellcheck disable=SC2046
  cc -std=c11 -Wall -Wextra -Werror -Wpedantic $(pkg-config --cflags reflease) -fsyntax-only one.c ||
    { echo "FAIL: $rel does not compile on its own"; exit 1; }
done
out=$(LD_LIBRARY_PATH="$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ./tiny)
[ "$out" = ok ] || { echo "FAIL: tiny transport program said: $out"; exit 1; }
for f in share/man/man1/reflease.1 share/bash-completion/completions/reflease \
  share/zsh/site-functions/_reflease share/fish/vendor_completions.d/reflease.fish; do
  [ -s "$prefix/$f" ] || { echo "FAIL: make install did not put down $f"; exit 1; }
done
"$prefix/bin/reflease" completion bash | cmp - "$prefix/share/bash-completion/completions/reflease" ||
  { echo "FAIL: the installed bash completion is not reflease completion bash's"; exit 1; }
# shellcheck disable=SC2086
if ! MAKEFLAGS='' MAKELEVEL='' make -s --no-print-directory -C "$here" $flavour \
    PREFIX="$prefix" uninstall >"$TMPDIR/make.log" 2>&1; then
  cat "$TMPDIR/make.log"; echo "FAIL: make uninstall"; exit 1
fi
left=$(find "$prefix" ! -type d)
[ -z "$left" ] || { echo "FAIL: make uninstall left: $left"; exit 1; }
echo "ok: installed headers build a working user transport; make uninstall removes it all"
