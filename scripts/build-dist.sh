#!/bin/sh
# The Action's JavaScript, bundled (issue 25): action/main.mjs and
# action/post.mjs with their dependencies (@actions/core, @actions/cache,
# pinned in package-lock.json) into dist/main.mjs and dist/post.mjs, which
# action.yml runs (runs.main, runs.post) and which are committed: a runner
# executes them as they are, nothing is installed at run time.
#   sh scripts/build-dist.sh            rebuild dist/
#   sh scripts/build-dist.sh --check    rebuild into a temporary directory and
#                                       fail when dist/ differs (make lint-action)
# esbuild is pinned in package.json (devDependencies); npm ci installs it when
# node_modules is missing.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
if [ ! -x node_modules/.bin/esbuild ] || [ ! -d node_modules/@actions/cache ]; then
  npm ci --no-audit --no-fund --loglevel=error
fi
out=dist
if [ "${1:-}" = --check ]; then
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
fi
# ESM (the toolkit's packages are ES modules); `require` for the CommonJS ones inside
banner="import{createRequire as __reflease_cr}from'node:module';const require=__reflease_cr(import.meta.url);"
for f in main post; do
  node_modules/.bin/esbuild "action/$f.mjs" --bundle --platform=node --target=node20 --format=esm \
    --banner:js="$banner" --legal-comments=none --log-level=warning --outfile="$out/$f.mjs"
done
if [ "${1:-}" = --check ]; then
  for f in main post; do
    cmp -s "$out/$f.mjs" "dist/$f.mjs" || {
      echo "build-dist: dist/$f.mjs is not what action/$f.mjs and package-lock.json build: run sh scripts/build-dist.sh and commit dist/" >&2
      exit 1
    }
  done
  echo "build-dist: dist/ is up to date"
fi
