#!/bin/sh
# shellcheck disable=SC1091,SC2154 # sourced helper: root, tarball, rel_name
# test: seconds 25
# Issue 41: the release tarball works on a machine with nothing installed.
# In a clean Debian 12 root (debootstrap --variant=minbase: bookworm-minbase)
# and a Debian 13 one (trixie), each seen through a throwaway overlay (the
# shared roots are never written: .ci/run uses trixie for its make check),
# with no libgit2, jansson, libcurl nor compiler (checked; a library or
# compiler an earlier CI step installed into trixie is hidden in the
# overlay first: release_lib.sh's in_overlay), the tarball is unpacked and
# runs a lease round trip on a local store: init, acquire, status (live), release, status (released),
# and the completion command. The overlay and its mount live in a private
# mount namespace (unshare -m) and end with the test.
#
# Runs once per CI: the instrumented make check builds skip; SKIP when a root
# is absent or not running as root, except under .ci/run (REFLEASE_CI_ROOTS=1:
# it made the roots, so this test must run).
. "$(dirname "$0")/release_lib.sh"
cd "$TMPDIR" || exit 1
if release_flavoured; then echo "t_release_roots: SKIP in $(basename "$BUILD") (run once, in the plain make check)"; exit 0; fi
roots=$(root_dirs bookworm-minbase trixie)
if [ "$(id -u)" -ne 0 ] || ! command -v unshare >/dev/null 2>&1 || [ "$(echo "$roots" | wc -w)" -ne 2 ]; then
  [ "${REFLEASE_CI_ROOTS:-}" != 1 ] || fail "no clean Debian roots bookworm-minbase and trixie (or not root): .ci/run makes them (scripts/debroot.sh)"
  echo "t_release_roots: SKIP: needs root and the Debian roots bookworm-minbase and trixie under ${REFLEASE_ROOTS:-/var/cache/reflease/roots} (found:${roots:- none})"
  exit 0
fi
release_build || { cat "$TMPDIR/release.log" >&2; fail "make release"; }

# the round trip, run inside each root from the unpacked tarball under $TMPDIR
cat >"$TMPDIR/trip.sh" <<'TRIP'
set -eu
R=$1/bin/reflease
# clean: no compiler, none of the libraries reflease links
for c in cc gcc clang c99 tcc; do ! command -v "$c" >/dev/null 2>&1 || { echo "dirty: $c"; exit 1; }; done
if ls /usr/lib/*-linux-gnu/ /usr/lib/ 2>/dev/null | grep -E '^lib(git2|jansson|curl)\.so'; then echo "dirty: libraries"; exit 1; fi
. /etc/os-release
"$R" version
"$R" init /tmp/s.git >/dev/null
export REFLEASE_STORE=local:/tmp/s.git REFLEASE_OWNER=alice REFLEASE_HOST=h1
tok=$("$R" acquire job --ttl 60 --print-token)
"$R" status job | grep -q '^job: live — claimed by alice on h1' || { "$R" status job; exit 1; }
if "$R" --owner bob acquire job --ttl 60 >/dev/null 2>&1; then echo "bob took a live lease"; exit 1; fi
"$R" release job --lease-token "$tok" >/dev/null
"$R" status job | grep -q '^job: released — released by alice on h1' || { "$R" status job; exit 1; }
"$R" completion bash | grep -q '^complete -o default -F _reflease reflease$'
echo "round trip ok on $PRETTY_NAME"
TRIP
mkdir -p "$TMPDIR/rel"
tar -C "$TMPDIR/rel" -xzf "$tarball"
for rd in $roots; do
  r=${rd%%:*} d=${rd#*:}
  if ! in_overlay "$r" "$d" "$TMPDIR/trip.sh" "$TMPDIR/rel/$rel_name" >"$TMPDIR/trip-$r.out" 2>&1; then
    cat "$TMPDIR/trip-$r.out" >&2
    fail "the release tarball in $r"
  fi
  grep -q '^round trip ok' "$TMPDIR/trip-$r.out" || { cat "$TMPDIR/trip-$r.out" >&2; fail "$r: no round trip"; }
  echo "t_release_roots: $r: $(tail -n 1 "$TMPDIR/trip-$r.out"); $(grep '^reflease ' "$TMPDIR/trip-$r.out")"
done
echo "t_release_roots: ok"
