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

# root_dirs NAME...: "NAME:DIR" of each scripts/debroot.sh root present
root_dirs() {
  for rn in "$@"; do
    rd=$(sh "$root/scripts/debroot.sh" dir "$rn" 2>/dev/null) || continue
    printf '%s:%s ' "$rn" "$rd"
  done
}
# in_overlay NAME DIR SCRIPT ARG...: sh SCRIPT ARG... as root of the Debian
# root DIR seen through a throwaway overlay (its writes go to
# $TMPDIR/ov-NAME), in a private mount namespace that ends with it: the
# shared root is never written. $TMPDIR is bound at the same path inside. A
# compiler or one of the libraries reflease links that an earlier CI step
# installed into the root is hidden in the overlay first.
in_overlay() {
  ov_n=$1 ov_d=$2
  shift 2
  mkdir -p "$TMPDIR/ov-$ov_n/upper" "$TMPDIR/ov-$ov_n/work" "$TMPDIR/roots/scratch-$ov_n"
  # shellcheck disable=SC2016 # the inner script expands its own arguments
  unshare --mount --propagation private sh -c '
    set -eu
    lower=$1 ov=$2 roots=$3 n=$4 src=$5 tmp=$6
    shift 6
    m="$roots/scratch-$n"
    mount -t overlay overlay -o "lowerdir=$lower,upperdir=$ov/upper,workdir=$ov/work" "$m"
    touch "$m/.reflease-root"
    rm -f "$m"/usr/bin/cc "$m"/usr/bin/gcc* "$m"/usr/bin/clang* "$m"/usr/bin/c99 "$m"/usr/bin/tcc \
      "$m"/usr/lib/*-linux-gnu/libgit2.so* "$m"/usr/lib/*-linux-gnu/libjansson.so* \
      "$m"/usr/lib/*-linux-gnu/libcurl*.so*
    REFLEASE_ROOTS=$roots exec sh "$src/scripts/debroot.sh" run "scratch-$n" --bind "$tmp" \
      DEBIAN_FRONTEND=noninteractive -- sh "$@"' \
    in_overlay "$ov_d" "$TMPDIR/ov-$ov_n" "$TMPDIR/roots" "$ov_n" "$root" "$TMPDIR" "$@"
}
