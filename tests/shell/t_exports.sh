#!/bin/sh
# The library exports its documented public API and nothing else (issue 26
# item 1): `nm -D` of libreflease.so.0 lists exactly the functions declared
# in lib/include/reflease/ (sys/ included) — the library is built with
# -fvisibility=hidden and each of those carries REFLEASE_EXTERN — and every
# one of them has a docstring (a /** ... */ comment ending on the line
# before it, style.md §13).
#
# The check is then run on copies of the headers with a planted fault each
# (a docstring removed, a declaration removed, a function declared that the
# library does not export) and must fail on each, naming the function.
# Last, the CLI's objects must link against the shared library and lib/util
# alone (and not without lib/util).
set -eu
export LC_ALL=C
here=$(cd "$(dirname "$0")/../.." && pwd)
so="$BUILD/libreflease.so.0"
[ -f "$so" ] || { echo "FAIL: $so is not built"; exit 1; }

# declared INCDIR OUT: "FILE:LINE NAME" of each function the public headers
# under INCDIR declare (gcc -aux-info: every prototype of the unit, with the
# file and line of its declaration), sorted by name
declared() {
  {
    for h in "$1"/reflease/*.h "$1"/reflease/sys/*.h; do printf '#include "%s"\n' "$h"; done
  } >"$TMPDIR/all.c"
  cc -std=c11 -I"$1" -aux-info "$TMPDIR/aux.txt" -S -o /dev/null "$TMPDIR/all.c"
  # /* /dir/reflease/x.h:12:NC */ extern int lease_f (int, char *);
  awk -v inc="$1/reflease/" '
    index($0, "/* " inc) == 1 {
      loc = substr($2, 1, length($2) - 3)   # FILE:LINE without ":NC"
      decl = $0
      sub(/^[^*]*\*\/ /, "", decl)          # after the comment
      p = index(decl, " (")                 # the name ends before the first " ("
      name = substr(decl, 1, p - 1)
      sub(/.*[ *]/, "", name)
      print loc " " name
    }' "$TMPDIR/aux.txt" | sort -u -k2,2 >"$2"
}

# undocumented FILE:LINE...: those whose line is not right after the end of a
# /** */ comment (/**< member comments do not count)
undocumented() {
  for loc in "$@"; do
    f=${loc%:*} l=${loc##*:}
    awk -v want="$l" -v loc="$loc" '
      NR == want { if (docend != NR - 1) print loc; exit }
      {
        line = $0
        if (!incomment && match(line, /\/\*/)) {
          incomment = 1
          isdoc = substr(line, RSTART, 4) ~ /^\/\*\*[^<]/ || substr(line, RSTART) == "/**"
          line = substr(line, RSTART + 2)
        }
        if (incomment && index(line, "*/")) {
          incomment = 0
          if (isdoc) docend = NR
        }
      }' "$f"
  done
}

# check INCDIR SO: print each mismatch; fail when there is one
check() {
  declared "$1" "$TMPDIR/declared"
  awk '{ print $2 }' "$TMPDIR/declared" >"$TMPDIR/declared.names"
  nm -D --defined-only "$2" | awk '{ print $NF }' | sort -u >"$TMPDIR/exported.names"
  # a --coverage build (make coverage) links gcc's libgcov into the library,
  # which exports its own functions (__gcov_*, mangle_path): not the library's
  if grep -q '^__gcov_' "$TMPDIR/exported.names"; then
    grep -v -e '^__gcov_' -e '^mangle_path$' "$TMPDIR/exported.names" >"$TMPDIR/exported.lib" || true
    mv "$TMPDIR/exported.lib" "$TMPDIR/exported.names"
  fi
  bad=0
  if [ ! -s "$TMPDIR/declared.names" ]; then
    echo "no function declared under $1/reflease (the check found nothing)"; bad=1
  fi
  for f in $(comm -23 "$TMPDIR/declared.names" "$TMPDIR/exported.names"); do
    echo "declared in a public header but not exported: $f (REFLEASE_EXTERN?)"; bad=1
  done
  for f in $(comm -13 "$TMPDIR/declared.names" "$TMPDIR/exported.names"); do
    echo "exported but not declared in lib/include/reflease: $f"; bad=1
  done
  # shellcheck disable=SC2046
  for loc in $(undocumented $(awk '{ print $1 }' "$TMPDIR/declared")); do
    echo "no docstring before the declaration at $loc: $(awk -v l="$loc" '$1 == l { print $2 }' "$TMPDIR/declared")"
    bad=1
  done
  return "$bad"
}

if ! check "$here/lib/include" "$so" >"$TMPDIR/out"; then
  cat "$TMPDIR/out"; echo "FAIL: the exports are not the documented public API"; exit 1
fi
n=$(wc -l <"$TMPDIR/declared.names")
[ "$n" -ge 100 ] || { echo "FAIL: only $n public functions found"; exit 1; }

# plant FAULT EXPECTED SED: a copy of the headers edited by SED (on
# reflease/store.h) must fail the check with a line containing EXPECTED
plant() {
  rm -rf "$TMPDIR/inc" && cp -r "$here/lib/include" "$TMPDIR/inc"
  sed -i "$3" "$TMPDIR/inc/reflease/store.h"
  if check "$TMPDIR/inc" "$so" >"$TMPDIR/out"; then
    echo "FAIL: the check passed headers with $1"; exit 1
  fi
  grep -q "$2" "$TMPDIR/out" || { cat "$TMPDIR/out"; echo "FAIL: $1 not named ($2)"; exit 1; }
}
grep -q '^REFLEASE_EXTERN void lease_store_free(' "$here/lib/include/reflease/store.h" ||
  { echo "FAIL: lease_store_free's declaration moved (update the planted faults)"; exit 1; }
plant "a docstring removed" "no docstring before .*: lease_store_free" \
  '/^\/\*\* Close the store and free everything/d'
plant "a declaration removed" "exported but not declared .*: lease_store_free" \
  '/^REFLEASE_EXTERN void lease_store_free(/d'
# shellcheck disable=SC2016
plant "an unexported function declared" "not exported: lease_planted" \
  '$a /** Planted: declared, never defined. */\nREFLEASE_EXTERN int lease_planted(void);'

# The CLI needs nothing of the library but its exported API and lib/util
# (the tier it compiles in, issue 26 item 1): its objects link against
# libreflease.so.0 and lib/util's objects alone, and not without the latter
# (the clocks and message helpers are no longer exported).
ldflags=
case "$(basename "$BUILD")" in
build-san) ldflags="-fsanitize=address,undefined" ;;
build-cov) ldflags="--coverage" ;;
esac
libs=$(pkg-config --libs libgit2 jansson libcurl)
# shellcheck disable=SC2086
cc -o "$TMPDIR/cli-shared" "$BUILD"/cmd/reflease/*.o "$BUILD"/lib/util/*.o -L"$BUILD" \
  -l:libreflease.so.0 $ldflags $libs 2>"$TMPDIR/ld.err" ||
  { cat "$TMPDIR/ld.err"; echo "FAIL: the CLI reaches beyond the exported API and lib/util"; exit 1; }
v=$(LD_LIBRARY_PATH="$BUILD${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$TMPDIR/cli-shared" --version)
case $v in "reflease "*) ;; *) echo "FAIL: the CLI linked against the shared library said: $v"; exit 1 ;; esac
# shellcheck disable=SC2086
if cc -o "$TMPDIR/cli-shared2" "$BUILD"/cmd/reflease/*.o -L"$BUILD" -l:libreflease.so.0 \
     $ldflags $libs 2>"$TMPDIR/ld.err"; then
  echo "FAIL: the CLI linked without lib/util: the library exports its helpers"; exit 1
fi
grep -q 'undefined reference to .lease__' "$TMPDIR/ld.err" ||
  { cat "$TMPDIR/ld.err"; echo "FAIL: linking the CLI without lib/util failed otherwise"; exit 1; }
echo "ok: libreflease.so.0 exports the $n documented public functions and nothing else;" \
  "the CLI links against it and lib/util alone"
