#!/bin/sh
# The libraries of `make bundle`'s reflease (the Action's cache, `make
# release`'s tarball), on one line for the link (issue 43):
#   static-link.sh [DEFER_OBJ]
# libgit2 and jansson, and what they need, from their static archives where
# the system has them (Debian 12 and 13 ship libgit2.a, mbedTLS, libssh2,
# OpenSSL's libcrypto, http-parser, pcre2, zlib, jansson as .a; not GSSAPI,
# which stays a shared library, as glibc's do): no dynamic loading or symbol
# look-up of about fifteen libraries at every start. Where libgit2.a is
# missing, the shared libraries as `make` links them (pkg-config --libs).
# When libgit2 is on mbedTLS and both are static, DEFER_OBJ (the compiled
# cmd/reflease/link/git_ca_defer.c) and ld's --wrap flags for it are added:
# the CA bundle is parsed at the first TLS handshake, not inside
# git_libgit2_init. Prints the flags; says what it chose on stderr.
set -eu
defer=${1:-}
libdir=$(pkg-config --variable=libdir libgit2)
multi=$(cc -print-multiarch 2>/dev/null || true)
if [ ! -f "$libdir/libgit2.a" ]; then
  echo "static-link: no $libdir/libgit2.a: linking the shared libgit2" >&2
  pkg-config --libs libgit2 jansson
  exit 0
fi
# -lNAME of the static link, and the libraries libgit2.so needs that its .pc
# leaves out (Debian 12's names no GSSAPI)
names=$(
  {
    pkg-config --static --libs libgit2 libssh2 jansson | tr ' ' '\n' | sed -n 's/^-l//p'
    [ -e "$libdir/libgit2.so" ] && objdump -p "$libdir/libgit2.so" | awk '$1 == "NEEDED" { print $2 }'
  } | awk '{ n = $0; sub(/^lib/, "", n); sub(/\.so.*/, "", n) }
           !seen[n]++ { print ($0 ~ /\.so/ ? n ":" $0 : n) }'
)
out=""
static=""
for entry in $names; do
  n=${entry%%:*}   # NAME, or NAME:SONAME for a library only libgit2.so's NEEDED names
  so=${entry#*:}
  case $n in
  c | m | dl | rt | pthread | resolv) continue ;; # glibc's: shared, added below
  esac
  a=""
  shared=""
  for d in "$libdir" "/usr/lib/$multi" "/lib/$multi" /usr/lib /usr/local/lib; do
    if [ -z "$a" ] && [ -f "$d/lib$n.a" ]; then a="$d/lib$n.a"; fi
    if [ -e "$d/lib$n.so" ]; then shared=1; fi
  done
  if [ -n "$a" ]; then
    out="$out $a"
    static="$static $n"
  elif [ "$so" != "$entry" ]; then
    out="$out -l:$so" # no development link needed (libkrb5-dev is not)
  elif [ -n "$shared" ]; then
    out="$out -l$n"
  else
    # named by a .pc's Libs.private but not installed in any form (Debian
    # 13's libssh2.pc names gpg-error, which its OpenSSL build never uses):
    # a library really needed would fail the link loudly, by its symbols
    echo "static-link: lib$n is not installed: left out" >&2
  fi
done
# archives refer to each other in any order: let ld go round them
out="-Wl,--start-group$out -Wl,--end-group -ldl -pthread"
case " $static " in
*" git2 "*" mbedx509 "* | *" mbedx509 "*" git2 "*)
  if [ -n "$defer" ]; then
    out="$defer $out -Wl,--wrap=git_libgit2_init,--wrap=mbedtls_x509_crt_parse_file"
    out="$out -Wl,--wrap=mbedtls_x509_crt_parse_path,--wrap=mbedtls_x509_crt_free"
    out="$out -Wl,--wrap=mbedtls_ssl_setup"
  fi
  ;;
esac
echo "static-link: static:$static" >&2
echo "$out"
