# shellcheck shell=sh disable=SC2034 # sourced: tarball, rel_name and rel_version are the callers'
# Helpers for the release tests (sourced; not a test itself): issue 41.
# root: the source tree; release_build makes the release tarball of this
# tree (make release with plain flags, in build/, whatever flavour make check
# runs: a release is never instrumented) and sets tarball and rel_name.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
fail() { echo "FAIL: $*" >&2; exit 1; }
rel_version=$(sed -n 's/^VERSION *:= *//p' "$root/Makefile")
rel_name="reflease-$rel_version-linux-$(uname -m)"
tarball="$root/build/release/$rel_name.tar.gz"
# The instrumented builds (make check SANITIZE=1, coverage) skip: the release
# is built with plain flags, and the plain make check has checked it.
release_flavoured() {
  case "$(basename "$BUILD")" in build-san | build-cov) return 0 ;; esac
  return 1
}
# make release, one make of build/'s bundle at a time (t_action_bundle.sh
# makes it too): its output in $TMPDIR/release.log; the status of make.
release_build() {
  mkdir -p "$root/build"
  (cd "$root" && MAKEFLAGS='' MAKELEVEL='' flock "$root/build/.bundle.lock" \
    make --no-print-directory SANITIZE= COVERAGE= release) >"$TMPDIR/release.log" 2>&1
}
