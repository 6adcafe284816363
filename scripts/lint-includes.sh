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

[ "$bad" = 0 ] || exit 1
