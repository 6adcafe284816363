#!/bin/sh
# The Node client's npm tarball in CI (issue 42 item 1: "npm pack makes its
# tarball in CI"; publishing is the release workflow's, on a tag):
# scripts/node-pack-check.sh packs clients/node and checks the tarball — the
# package's files only (no tests), an ES module entry with its declarations
# (exports "." types and default), the Makefile's VERSION, importable from a
# scratch project, and a TypeScript consumer checked by tsc against the packed
# declarations. The release workflow runs the same script before npm publish.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "t_node_pack: SKIP: node/npm are not installed (scripts/install-deps.sh installs them)"
  exit 0
fi
pkg="$root/clients/node"
# typescript and @types/node, pinned in its package-lock.json (one npm ci at a time)
(cd "$pkg" && flock package-lock.json sh -c \
  '[ -x node_modules/.bin/tsc ] || npm ci --no-audit --no-fund --loglevel=error >/dev/null')
TSC="$pkg/node_modules/.bin/tsc" sh "$root/scripts/node-pack-check.sh" "$TMPDIR/pack"
# the check fails on a tarball with more than the package's files
mkdir -p "$TMPDIR/bad"
cp -R "$pkg/index.js" "$pkg/index.d.ts" "$pkg/README.md" "$pkg/test" "$TMPDIR/bad/"
node -e 'const fs = require("fs"); const p = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
  p.files.push("test/"); fs.writeFileSync(process.argv[2], JSON.stringify(p))' "$pkg/package.json" "$TMPDIR/bad/package.json"
mkdir -p "$TMPDIR/bad-root/clients" "$TMPDIR/bad-root/scripts"
mv "$TMPDIR/bad" "$TMPDIR/bad-root/clients/node"
cp "$root/scripts/node-pack-check.sh" "$TMPDIR/bad-root/scripts/"
cp "$root/Makefile" "$TMPDIR/bad-root/"
if sh "$TMPDIR/bad-root/scripts/node-pack-check.sh" "$TMPDIR/badpack" 2>"$TMPDIR/bad.err"; then
  echo "FAIL: a tarball with the tests passed the check" >&2
  exit 1
fi
grep -q 'package/test/' "$TMPDIR/bad.err" || { echo "FAIL: the refusal does not name the test files: $(cat "$TMPDIR/bad.err")" >&2; exit 1; }
echo "t_node_pack: ok"
