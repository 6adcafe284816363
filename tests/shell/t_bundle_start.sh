#!/bin/sh
# shellcheck disable=SC1091,SC2154  # sourced helpers set fpid, root, tarball
# Issue 43: the bundle's reflease (make bundle: the Action's cache and the
# release tarball) links libgit2 and mbedTLS statically and parses libgit2's
# built-in CA bundle at the first TLS handshake, not in git_libgit2_init
# (cmd/reflease/link/git_ca_defer.c, scripts/static-link.sh):
# - a local: status of a held lease maps no libgit2 or mbedTLS library and
#   opens neither the CA bundle nor libcurl;
# - a remote:https:// store without a CA of its own reads the CA bundle
#   before its handshake, and trusts what it holds: with a test CA mounted
#   over /etc/ssl/certs/ca-certificates.crt in a private mount namespace
#   (as root; skipped otherwise) the handshake passes (exit 77, the fake is
#   no git server), exactly as the shared build's; without, the certificate
#   is refused (78);
# - --ca-bundle replaces the deferred default (never parsed then) and is
#   trusted.
. "$(dirname "$0")/lease_lib.sh"
. "$(dirname "$0")/fakegh_lib.sh"
. "$(dirname "$0")/release_lib.sh"
if release_flavoured; then
  echo "t_bundle_start: SKIP: the bundle is built with plain flags (the plain make check runs this)"
  exit 0
fi
command -v strace >/dev/null || fail "strace is missing (make deps installs it)"
(cd "$root" && mkdir -p build && MAKEFLAGS='' MAKELEVEL='' flock build/.bundle.lock \
  make --no-print-directory SANITIZE= COVERAGE= bundle >"$TMPDIR/bundle.log" 2>&1) ||
  { cat "$TMPDIR/bundle.log" >&2; fail "make bundle"; }
B="$root/build/bundle/bin/reflease"
CA=/etc/ssl/certs/ca-certificates.crt
if ldd "$B" | grep -q 'libgit2'; then
  echo "t_bundle_start: SKIP: no static libgit2 on this system (the bundle links the shared one)"
  exit 0
fi

t=$(tok x --ttl 600)
[ -n "$t" ] || fail "no token"
strace -f -qq -e trace=openat,open -e signal=none -o "$TMPDIR/trace" "$B" status x \
  >"$TMPDIR/out" 2>"$TMPDIR/err" || fail "bundle status: $(cat "$TMPDIR/err")"
has_text "live" "$TMPDIR/out" || fail "bundle status: $(cat "$TMPDIR/out")"
grep -v ENOENT "$TMPDIR/trace" >"$TMPDIR/opened"
! grep -Eq 'libgit2|libmbed|libcurl' "$TMPDIR/opened" ||
  fail "a local: status loaded: $(grep -E 'libgit2|libmbed|libcurl' "$TMPDIR/opened")"
! grep -q "$CA" "$TMPDIR/opened" || fail "a local: status read the CA bundle"

# a TLS server (the fake GitHub, no git server: a passed handshake is 77)
cd "$TMPDIR" || exit 1
mkca good
unset CURL_CA_BUNDLE SSL_CERT_FILE SSL_CERT_DIR REFLEASE_CA_BUNDLE https_proxy HTTPS_PROXY \
  all_proxy ALL_PROXY || true
export NO_PROXY=localhost,127.0.0.1 no_proxy=localhost,127.0.0.1 XDG_CACHE_HOME="$TMPDIR/cache"
trap 'kill "${fpid:-}" 2>/dev/null || true' EXIT INT TERM
fakegh_start --tls-cert good/srv.pem --tls-key good/srv.key
rurl="remote:https://localhost:$(cat port)/x.git"

# the system's bundle, which does not hold the test CA: read, then refused
rc=0
strace -f -qq -e trace=openat,open -e signal=none -o "$TMPDIR/trace" \
  "$B" --store "$rurl" --timeout 5 status x >out 2>err || rc=$?
[ "$rc" = 78 ] || fail "remote:https without the CA: exit $rc, expected 78: $(cat err)"
grep -q 'certificate of localhost' err || fail "remote:https without the CA: $(cat err)"
if [ -f "$CA" ]; then
  grep -v ENOENT "$TMPDIR/trace" | grep -q "$CA" ||
    fail "the handshake ran without reading $CA (the deferred parse was not done)"
fi
# --ca-bundle: trusted (the deferred default is replaced, not parsed)
rc=0
"$B" --store "$rurl" --ca-bundle good/ca.pem --timeout 5 status x >out 2>err || rc=$?
[ "$rc" = 77 ] || fail "remote:https --ca-bundle: exit $rc, expected 77: $(cat err)"

# the built-in location holding the test CA: both builds trust it
if [ "$(id -u)" = 0 ] && [ -f "$CA" ] && unshare --mount true 2>/dev/null; then
  for bin in "$B" "$REFLEASE"; do
    rc=0
    # shellcheck disable=SC2016 # the inner script expands its own arguments
    unshare --mount --propagation private sh -c \
      'mount --bind "$1" "$2" && shift 2 && exec "$@"' sh good/ca.pem "$CA" \
      "$bin" --store "$rurl" --timeout 5 status x >out 2>err || rc=$?
    [ "$rc" = 77 ] ||
      fail "$bin: remote:https with the test CA at $CA: exit $rc, expected 77: $(cat err)"
  done
else
  echo "t_bundle_start: the built-in CA location check needs root and unshare: skipped"
fi
echo "t_bundle_start: ok"
