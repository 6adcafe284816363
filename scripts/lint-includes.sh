#!/bin/sh
# The walls between the layers (issue 26 item 1), checked on the #include
# lines rather than on spellings: who may include which header.
#
#   lib/lease       lease/, reflease/ (sys/transport.h for its types), util/,
#                   store/frontend.h; store/handle.h only in primitives.c (the
#                   one door to the transport, issue 17); never a transport's
#                   header (store/backend.h, http.h, gitobj.h, git2compat.h),
#                   libgit2 or libcurl
#   lib/store       store.c alone includes handle.h (the handle's layout);
#                   the transports include backend.h
#   lib/util        reflease/ and util/ only (the tier below the library and
#                   the CLI, as curl's lib/curlx)
#   cmd/            reflease/, util/ and its own headers; never lib/lease or
#                   lib/store ones, never by relative path
#   lib/include     public headers include public headers only; sys/*.h the
#                   lower ones only (common.h, object.h, store.h), never
#                   primitives.h or another header above the transport
#   migrations/     lease/migration.h and reflease/ only (issue 17)
#
# And on the calls (issue 38), so that no call circle crosses the layers:
# lib/store and lib/util call no function lib/lease defines (the public
# headers declare some of them, so the #include lines alone cannot say),
# lib/util none lib/store defines, and lib/lease/policy.c (the pure rules)
# no store call at all.
#
#   lint-includes.sh [ROOT]   check the tree at ROOT (default: this one)
set -eu
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"

# file:line:header of every #include "..." / <...> line of the files given
includes() {
  for f in "$@"; do
    [ -e "$f" ] || continue
    sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*\(["<][^">]*[">]\).*/\1/p;' "$f" |
      sed "s|^|$f:|"
  done
}

bad=0
# report VIOLATIONS REASON: one "lint: FILE:HEADER: REASON" line per violation
report() {
  [ -n "$1" ] || return 0
  printf '%s\n' "$1" | while IFS= read -r l; do echo "lint: $l: $2"; done
  bad=1
}

# shellcheck disable=SC2046
v=$(includes $(ls lib/lease/*.c lib/lease/*.h 2>/dev/null) | awk -F: '
  $2 ~ /^"(lease|reflease|util)\/[a-z0-9_\/]+\.h"$/ { next }
  $2 == "\"reflease.h\"" || $2 == "\"store/frontend.h\"" { next }
  $2 == "\"store/handle.h\"" && $1 == "lib/lease/primitives.c" { next }
  $2 ~ /^"/ { print; next }
  $2 ~ /^<(git2|curl)[\/.>]/ { print }')
report "$v" "lib/lease includes store/frontend.h and public or lease/ headers only (store/handle.h: primitives.c alone; a transport header never)"

# shellcheck disable=SC2046
v=$(includes $(ls lib/store/*.c lib/store/*.h 2>/dev/null) | awk -F: '
  ($2 == "\"handle.h\"" || $2 == "\"store/handle.h\"") && $1 != "lib/store/store.c" { print; next }
  $2 ~ /^"(lease|\.\.)\// { print }')
report "$v" "in lib/store only store.c includes handle.h, and nothing includes lib/lease"

# shellcheck disable=SC2046
v=$(includes $(ls lib/util/*.c lib/util/*.h 2>/dev/null) | awk -F: '
  $2 ~ /^"(reflease|util)\/[a-z0-9_\/]+\.h"$/ { next }
  $2 ~ /^"/ { print }')
report "$v" "lib/util includes reflease/ and util/ headers only (the tier below the library and the CLI)"

# shellcheck disable=SC2046
v=$(includes $(ls cmd/reflease/*.c cmd/reflease/*.h 2>/dev/null) | awk -F: '
  $2 ~ /^"(reflease|util)\/[a-z0-9_\/]+\.h"$/ { next }
  $2 == "\"reflease.h\"" || $2 ~ /^"[a-z0-9_]+\.h"$/ { next }
  $2 ~ /^"/ { print }')
report "$v" "cmd/ includes reflease/, util/ and its own headers only"

# shellcheck disable=SC2046
v=$(includes $(ls lib/include/reflease.h lib/include/reflease/*.h 2>/dev/null) | awk -F: '
  $2 ~ /^"(reflease\/)?[a-z0-9_]+\.h"$/ { next }
  $2 ~ /^"/ { print }')
report "$v" "a public header includes another public header only"

# shellcheck disable=SC2046
v=$(includes $(ls lib/include/reflease/sys/*.h 2>/dev/null) | awk -F: '
  $2 == "\"../common.h\"" || $2 == "\"../object.h\"" || $2 == "\"../store.h\"" { next }
  $2 ~ /^"/ { print }')
report "$v" "reflease/sys/ headers include the lower public headers only (common.h, object.h, store.h)"

# shellcheck disable=SC2046
v=$(includes $(ls lib/*/*.c lib/*/*.h lib/include/reflease/*.h cmd/reflease/*.c cmd/reflease/*.h 2>/dev/null) |
  awk -F: '$2 ~ /migrations\// { print }')
report "$v" "lib/ or cmd/ includes from migrations/ (the step interface is lib/lease/migration.h)"

# shellcheck disable=SC2046
v=$(includes $(ls migrations/*.c 2>/dev/null) | awk -F: '
  $2 == "\"lease/migration.h\"" || $2 ~ /^"reflease\// { next }
  $1 == "migrations/registry.c" && $2 == "\"registry.inc\"" { next }
  $2 ~ /^"/ { print }')
report "$v" "a migration includes more than lease/migration.h and reflease/ headers"

# lease_* functions defined in the files given: a definition's first line
# begins at column 0 with its type and does not end in ';'
defined() {
  for f in "$@"; do
    [ -e "$f" ] || continue
    sed -n 's/^[a-z][a-z0-9_ ]*[ *]\(lease_[a-z0-9_]*\)(.*[^;]$/\1/p
             s/^[a-z][a-z0-9_ ]*[ *]\(lease_[a-z0-9_]*\)($/\1/p' "$f"
  done | sort -u
}
# file:line:name of every use in the files given ($2...) of a name listed in
# the file $1, comments left out (a one-line /* ... */, and the lines of a
# block comment that begin with '/*' or '*')
uses_of() {
  list=$1; shift
  for f in "$@"; do
    [ -e "$f" ] || continue
    sed -e 's|/\*.*\*/||g' -e 's|^[[:space:]]*/\*.*||' -e 's|^[[:space:]]*\*.*||' \
        -e 's|//.*||' "$f" | grep -ownE 'lease_[a-z0-9_]+' | sed "s|^|$f:|"
  done | awk -F: 'NR == FNR { d[$1] = 1; next } ($3 in d) { print }' "$list" -
}
names=$(mktemp)
trap 'rm -f "$names"' EXIT
# shellcheck disable=SC2046
defined $(ls lib/lease/*.c 2>/dev/null) >"$names"
# shellcheck disable=SC2046
v=$(uses_of "$names" $(ls lib/store/*.c lib/store/*.h lib/util/*.c lib/util/*.h 2>/dev/null))
report "$v" "lib/store and lib/util call nothing lib/lease defines (the layers call downward only; a rule both need lives in lib/util)"
# shellcheck disable=SC2046
defined $(ls lib/store/*.c 2>/dev/null) >"$names"
# shellcheck disable=SC2046
v=$(uses_of "$names" $(ls lib/util/*.c lib/util/*.h 2>/dev/null))
report "$v" "lib/util calls nothing lib/store defines"
v=$(sed -e 's|/\*.*\*/||g' -e 's|^[[:space:]]*\*.*||' lib/lease/policy.c 2>/dev/null |
  grep -nE 'lease_store_|lease__store_|#[[:space:]]*include[[:space:]]*"store/' | sed 's|^|lib/lease/policy.c:|')
report "$v" "policy.c is pure: what it needs of a store is passed in"

[ "$bad" = 0 ] || exit 1
