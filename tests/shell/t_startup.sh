#!/bin/sh
# shellcheck disable=SC1091  # sourced helper
# Issue 43: a command loads and initialises only what its store uses, seen
# in the files the process opens (strace -f -e trace=openat):
# - a local: status of a held lease never opens libcurl (dlopen()ed by
#   github: stores only) and initialises libgit2 (whose mbedTLS reads the CA
#   bundle inside git_libgit2_init, Debian 12);
# - version, help and a usage error open neither libcurl nor the CA bundle
#   (libgit2 is mapped, as the binary links it, but not initialised);
# - a github: store opens libcurl and does not initialise libgit2 (no CA
#   bundle read: the URL is refused before any connection);
# - a remote: store (libgit2's own transports) never opens libcurl.
. "$(dirname "$0")/lease_lib.sh"
command -v strace >/dev/null || fail "strace is missing (make deps installs it)"

# opens FILE cmd...: run cmd under strace, the paths it opened into FILE,
# its exit status into $rc
opens() {
  f=$1
  shift
  rc=0
  # LeakSanitizer cannot run under ptrace (SANITIZE=1 builds): leaks are
  # checked by every other test, not under strace
  ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" strace -f -qq -e trace=openat -e signal=none -o "$TMPDIR/trace" "$@" >"$TMPDIR/out" \
    2>"$TMPDIR/err" || rc=$?
  grep -v ENOENT "$TMPDIR/trace" | sed -n 's/.*openat([^"]*"\([^"]*\)".*/\1/p' >"$f"
  [ -s "$f" ] || fail "strace saw no openat of: $*"
}
no_curl() { ! grep -q 'libcurl' "$1" || fail "$2 opened libcurl: $(grep libcurl "$1")"; }
# the CA bundle read at git_libgit2_init (libgit2 on mbedTLS); on a libgit2
# built otherwise (OpenSSL: read at the first TLS connection) nobody reads it
# here, and the checks of an uninitialised libgit2 hold trivially
ca_read() { grep -Eq '^/etc/ssl/certs(/ca-certificates\.crt)?$|\.pem$|\.crt$' "$1"; }
ldd "$R" | grep -q libcurl && fail "the binary links libcurl: $(ldd "$R" | grep libcurl)"

t=$(tok x --ttl 600)
[ -n "$t" ] || fail "no token"
opens "$TMPDIR/status" "$R" status x
[ "$rc" = 0 ] || fail "status of a held lease: exit $rc: $(cat "$TMPDIR/err")"
has_text "held" "$TMPDIR/out" || has_text "live" "$TMPDIR/out" || fail "status: $(cat "$TMPDIR/out")"
no_curl "$TMPDIR/status" "a local: status"
grep -q "$S" "$TMPDIR/status" || fail "the trace of status does not show the store opened"
mbedtls=0
ldd "$(ldd "$R" | awk '$1 ~ /^libgit2/ { print $3 }')" | grep -q libmbedtls && mbedtls=1
if [ "$mbedtls" = 1 ]; then
  ca_read "$TMPDIR/status" || fail "no CA bundle read by a local: status (libgit2 initialised?)"
fi

opens "$TMPDIR/version" "$R" version
[ "$rc" = 0 ] || fail "version: exit $rc"
no_curl "$TMPDIR/version" "version"
! ca_read "$TMPDIR/version" || fail "version initialised libgit2 (read the CA bundle)"
has_text "libcurl" "$TMPDIR/out" || fail "version does not name libcurl: $(cat "$TMPDIR/out")"

opens "$TMPDIR/help" "$R" help status
[ "$rc" = 0 ] || fail "help: exit $rc"
no_curl "$TMPDIR/help" "help"
! ca_read "$TMPDIR/help" || fail "help initialised libgit2"

opens "$TMPDIR/usage" "$R" no-such-command
[ "$rc" = 64 ] || fail "a usage error: exit $rc, not 64"
no_curl "$TMPDIR/usage" "a usage error"
! ca_read "$TMPDIR/usage" || fail "a usage error initialised libgit2"

# github: the URL is checked by libcurl's URL parser, so libcurl is loaded
# first; an ftp:// URL is then refused (78) before anything is sent
GITHUB_TOKEN=t0ken GITHUB_API_URL=ftp://127.0.0.1:9 opens "$TMPDIR/gh" "$R" --store github:o/r status x
[ "$rc" = 78 ] || fail "github: with an ftp:// API URL: exit $rc, not 78: $(cat "$TMPDIR/err")"
has_text "unsupported URL scheme" "$TMPDIR/err" || fail "github: $(cat "$TMPDIR/err")"
grep -q 'libcurl' "$TMPDIR/gh" || fail "a github: store did not load libcurl"
! ca_read "$TMPDIR/gh" || fail "a github: store initialised libgit2 (read the CA bundle)"

# remote: libgit2's transports, never libcurl (the closed port fails at once)
opens "$TMPDIR/remote" "$R" --timeout 1 --store remote:git://127.0.0.1:9/r.git status x
[ "$rc" != 0 ] || fail "remote: on a closed port succeeded"
no_curl "$TMPDIR/remote" "a remote: store"
echo "ok: local: status opens no libcurl; version, help, usage errors initialise nothing;" \
  "github: loads libcurl alone; remote: never libcurl"
