#!/bin/sh
# The Action's JavaScript, bundled (issue 25): action/main.mjs,
# action/post.mjs and action/keeper.mjs with their dependencies (the Node
# client clients/node, @actions/core, @actions/cache, pinned in
# package-lock.json) into dist/main.mjs, dist/post.mjs and dist/keeper.mjs,
# which action.yml runs (runs.main, runs.post; the keeper is started by main),
# and dist/cache.mjs, which main imports only where a cache service is announced,
# and which are committed: a runner executes them as they are, nothing is
# installed at run time. dist/VERSION is the Makefile's VERSION: the release
# the action downloads (action/setup.mjs).
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
# dist/cache.mjs (@actions/cache, most of the code) is a file of its own that
# the stages import only where a cache service is announced (action/cache.mjs)
for f in main post keeper cache; do
  node_modules/.bin/esbuild "action/$f.mjs" --bundle --platform=node --target=node20 --format=esm \
    --external:./cache.mjs --banner:js="$banner" --legal-comments=none --log-level=warning --outfile="$out/$f.mjs"
done
# the version whose release the action downloads (action/setup.mjs): the Makefile's
sed -n 's/^VERSION *:*= *//p' Makefile | head -n 1 >"$out/VERSION"
if [ "${1:-}" = --check ]; then
  for f in main.mjs post.mjs keeper.mjs cache.mjs VERSION; do
    cmp -s "$out/$f" "dist/$f" || {
      echo "build-dist: dist/$f is not what action/, clients/node/, the Makefile's VERSION and package-lock.json build: run sh scripts/build-dist.sh and commit dist/" >&2
      exit 1
    }
  done
  echo "build-dist: dist/ is up to date"
fi
