#!/bin/sh
# Make a self-contained reflease for the GitHub Action's cache (`make bundle`):
#   bundle.sh BIN DIR [LIB...]
# BIN is reflease linked with RPATH $ORIGIN/../lib (DT_RPATH, which also
# applies to the libraries' own dependencies). DIR/bin/reflease is BIN
# stripped, DIR/lib/ holds every shared library ldd resolves for it except
# glibc's own (libc, libm, ld-linux, ...: every Linux has them, and the cache
# key names the distribution release): Kerberos' GSSAPI and its libraries, and
# libgit2, jansson, mbedTLS, libssh2 ... where BIN links them shared (make
# bundle links them from their static archives where it can: static-link.sh).
# The copy is checked: ldd of DIR/bin/reflease must resolve every library from
# DIR/lib (or glibc), and DIR/bin/reflease version must run.
# Each LIB (a path) is a library BIN dlopen()s, so not in its ldd: libcurl,
# loaded by the first github: store (issue 43). It is copied under its soname
# with every library ldd resolves for it, and checked the same way (ldd of
# DIR/lib/LIB with DIR/lib first in the search, as BIN's DT_RPATH puts it).
set -eu
[ $# -ge 2 ] || { echo "usage: bundle.sh BIN DIR [LIB...]" >&2; exit 64; }
bin=$1
mkdir -p "$(dirname "$2")"
dir=$(cd "$(dirname "$2")" && pwd)/$(basename "$2") # absolute, as ldd prints it
shift 2
glibc='^(linux-vdso|linux-gate|ld-linux[^ ]*|libc|libm|libmvec|libpthread|libdl|librt|libresolv|libutil|libanl|libnss_[a-z]+|libBrokenLocale)\.so'
rm -rf "$dir.tmp"
mkdir -p "$dir.tmp/bin" "$dir.tmp/lib"
cp "$bin" "$dir.tmp/bin/reflease"
strip --strip-unneeded "$dir.tmp/bin/reflease" 2>/dev/null || true
soname() { objdump -p "$1" | awk '$1 == "SONAME" { print $2 }'; }
# "name => /path (addr)": copy each library under its soname (the file, not a link)
{
  ldd "$bin"
  for lib in "$@"; do echo "$(soname "$lib") => $lib (dlopen)"; ldd "$lib"; done
} | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' | sort -u | while read -r so path; do
  if printf '%s\n' "$so" | grep -Eq "$glibc"; then continue; fi
  cp -L "$path" "$dir.tmp/lib/$so"
  chmod 644 "$dir.tmp/lib/$so"
done
# every library found in the bundle, none from the system but glibc's
bad=$({
  ldd "$dir.tmp/bin/reflease"
  for lib in "$@"; do
    so=$(soname "$lib")
    [ -f "$dir.tmp/lib/$so" ] || echo "$so => not copied"
    LD_LIBRARY_PATH="$dir.tmp/lib" ldd "$dir.tmp/lib/$so"
  done
} | awk '$2 == "=>" { print $1, $3 }' | while read -r so path; do
  case $path in "$dir.tmp/bin/../lib/"* | "$dir.tmp/lib/"*) continue ;; esac
  printf '%s\n' "$so" | grep -Eq "$glibc" || echo "$so => $path"
done)
if [ -n "$bad" ]; then
  echo "bundle: not resolved from $dir/lib:" >&2
  echo "$bad" >&2
  exit 1
fi
"$dir.tmp/bin/reflease" version >/dev/null
rm -rf "$dir"
mv "$dir.tmp" "$dir"
echo "bundle: $dir: reflease and $(find "$dir/lib" -type f | wc -l) libraries, $(du -sh "$dir" | cut -f1)"
