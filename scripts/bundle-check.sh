#!/bin/sh
# Check that a bundle (make bundle's DIR, or an unpacked release tarball's
# top directory: bin/reflease + lib/) runs on every supported Linux of its
# architecture (issue 41):
#   bundle-check.sh DIR [MAX]        MAX: the newest glibc allowed, default 2.35
# - every ELF file under DIR/bin and DIR/lib needs no glibc symbol version
#   newer than GLIBC_MAX (its .gnu.version_r, readelf -V): Ubuntu 22.04 has
#   glibc 2.35, the oldest of the supported systems (Ubuntu 22.04 and 24.04,
#   Debian 12 and 13);
# - every library each of them needs (DT_NEEDED) is glibc's own or a file of
#   DIR/lib: nothing else is taken from the host;
# - run from DIR (version, init and status on a scratch local store), the
#   dynamic loader loads no library but glibc's from outside DIR/lib
#   (LD_DEBUG=libs: a library opened at run time, dlopen, counts too).
# Prints one line per problem and exits 1, or one "bundle-check: ok" line.
set -eu
[ $# -eq 1 ] || [ $# -eq 2 ] || { echo "usage: bundle-check.sh DIR [MAX]" >&2; exit 64; }
dir=$(cd "$1" && pwd)
max=${2:-2.35}
glibc='^(linux-vdso|linux-gate|ld-linux[^ ]*|libc|libm|libmvec|libpthread|libdl|librt|libresolv|libutil|libanl|libnss_[a-z]+|libBrokenLocale)\.so'
[ -x "$dir/bin/reflease" ] || { echo "bundle-check: no $dir/bin/reflease" >&2; exit 1; }
command -v readelf >/dev/null 2>&1 || { echo "bundle-check: readelf (binutils) is needed" >&2; exit 1; }
bad=0
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
files=$(find "$dir/bin" "$dir/lib" -type f | sort)
# shellcheck disable=SC2086 # file names without blanks (bin/reflease, sonames)
{ readelf -V --wide $files; readelf -d --wide $files; } 2>/dev/null | awk -v dir="$dir/" -v max="$max" -v glibc="$glibc" '
  # "a.b.c" newer than "x.y"? (numeric, part by part)
  function newer(a, b,   i, n, x, y) {
    n = split(a, x, "."); split(b, y, ".")
    for (i = 1; i <= (n > 3 ? n : 3); i++) if (x[i] + 0 != y[i] + 0) return x[i] + 0 > y[i] + 0
    return 0
  }
  /^File: / { f = substr($0, 7); sub("^" dir, "", f); next }
  /Name: GLIBC_[0-9]/ {
    v = $0; sub(/.*Name: GLIBC_/, "", v); sub(/[^0-9.].*/, "", v)
    if (newest == "" || newer(v, newest)) newest = v
    if (newer(v, max) && !seen[f, v]++) too[f] = too[f] " GLIBC_" v
    next
  }
  /\(NEEDED\)/ {
    so = $0; sub(/.*\[/, "", so); sub(/\].*/, "", so)
    if (so !~ glibc) need[f, so] = 1
  }
  END {
    for (f in too) printf "bundle-check: %s needs%s (newer than GLIBC_%s: it would not run on Ubuntu 22.04; build the release on Debian 12)\n", f, too[f], max
    for (k in need) { split(k, p, SUBSEP); print "NEEDED " p[1] " " p[2] }
    print "NEWEST " (newest == "" ? "none" : newest)
  }' >"$scratch/elf"
newest=$(sed -n 's/^NEWEST //p' "$scratch/elf")
if grep -q '^bundle-check: ' "$scratch/elf"; then
  grep '^bundle-check: ' "$scratch/elf"
  bad=1
fi
# libraries each needs: glibc's, or the bundle's own
while read -r _ f so; do
  [ -n "$so" ] || continue
  [ -f "$dir/lib/$so" ] || { echo "bundle-check: $f needs $so, which is not in lib/: it would come from the host"; bad=1; }
done <<EOF
$(sed -n 's/^NEEDED //p' "$scratch/elf" | sed 's/^/x /')
EOF
# What the loader really loads, dlopen included: glibc's or lib/'s only.
for args in "version" "init $scratch/s.git" "--store local:$scratch/s.git status probe"; do
  # shellcheck disable=SC2086 # the words of $args
  if ! env -u LD_LIBRARY_PATH -u LD_PRELOAD LD_DEBUG=libs LD_DEBUG_OUTPUT="$scratch/ld" \
      "$dir/bin/reflease" $args >/dev/null 2>"$scratch/err"; then
    echo "bundle-check: reflease $args failed: $(cat "$scratch/err")"
    bad=1
  fi
  for lf in "$scratch"/ld.*; do
    [ -f "$lf" ] || continue
    sed -n 's/.*calling init: \(.*\)$/\1/p' "$lf" | while read -r p; do
      case $p in "$dir/lib/"* | "$dir/bin/../lib/"*) continue ;; esac
      printf '%s\n' "${p##*/}" | grep -Eq "$glibc" || echo "bundle-check: reflease $args loaded $p from the host"
    done >>"$scratch/host"
    rm -f "$lf"
  done
done
if [ -s "$scratch/host" ]; then
  sort -u "$scratch/host"
  bad=1
fi
[ "$bad" -eq 0 ] || exit 1
echo "bundle-check: ok: $dir (newest glibc symbol GLIBC_$newest, at most GLIBC_$max; libraries from lib/ or glibc only)"
