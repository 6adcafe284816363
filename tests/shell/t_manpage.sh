#!/bin/sh
# The man page renders cleanly and its EXAMPLES run (style.md §17: docs cannot drift).
set -eu
here=$(cd "$(dirname "$0")/../.." && pwd)
page="$here/docs/reflease.1"
out=$(groff -man -ww -z "$page" 2>&1)
[ -z "$out" ] || { echo "groff warnings: $out"; exit 1; }
cd "$TMPDIR"
# Unescape groff's \- and run each "$ reflease ..." line in order.
sed -n '/^\.SH EXAMPLES/,/^\.SH /p' "$page" | grep '^\$ ' | sed -e 's/^\$ //' -e 's/\\-/-/g' |
while IFS= read -r line; do
  echo "+ $line"
  # shellcheck disable=SC2086
  set -- $line
  shift
  "$REFLEASE" "$@" || { echo "example failed: $line"; exit 1; }
done
