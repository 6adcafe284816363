#!/bin/sh
# test: seconds 144
# make lint-action (scripts/lint-action.sh) passes on the repository's action
# and workflows, and fails on each deliberately broken copy: a misspelt key of
# an action input, an undeclared input used in action.yml, an input the
# JavaScript does not read, an undeclared input the JavaScript reads, a shell
# started by the JavaScript, runs.using other than node24, no post-if:
# always(), a runs.post that is not a file, a misspelt runs key, an expression
# pasted into a run: script, a misspelt workflow key, an unknown expression
# context, an undeclared input passed to `uses: ./`, and a finding of the
# shell linter in action/build.sh.
# shellcheck disable=SC2016 # the edits and patterns are literal ${{ }} and $VAR text
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
if ! command -v node >/dev/null 2>&1; then
  echo "t_action_lint: SKIP: node is not installed (scripts/install-deps.sh installs nodejs and npm)"
  exit 0
fi
fresh() {
  rm -rf "$TMPDIR/tree"
  mkdir -p "$TMPDIR/tree/.github"
  cp -R "$root/action.yml" "$root/action" "$root/dist" "$TMPDIR/tree/"
  cp -R "$root/.github/workflows" "$TMPDIR/tree/.github/"
}
lint() { sh "$root/scripts/lint-action.sh" "$TMPDIR/tree" >"$TMPDIR/lint.out" 2>&1; }
must_fail() { # WHAT PATTERN: lint fails and says PATTERN
  if lint; then cat "$TMPDIR/lint.out"; echo "FAIL: lint passed with $1"; exit 1; fi
  grep -q -- "$2" "$TMPDIR/lint.out" || { cat "$TMPDIR/lint.out"; echo "FAIL: $1: no '$2'"; exit 1; }
  echo "ok: $1 is caught"
}
edit() { # FILE SED-SCRIPT: edit, and make sure the edit changed something
  cp "$1" "$TMPDIR/before"
  sed -i "$2" "$1"
  ! cmp -s "$1" "$TMPDIR/before" || { echo "FAIL: edit '$2' changed nothing in $1"; exit 1; }
}

fresh
lint || { cat "$TMPDIR/lint.out"; echo "FAIL: the repository's action and workflows do not pass"; exit 1; }
grep -q 'lint-action: ok' "$TMPDIR/lint.out" || { echo "FAIL: no ok line"; exit 1; }

fresh; edit "$TMPDIR/tree/action.yml" 's/^    required: true/    requried: true/'
must_fail "a misspelt input key in action.yml" "requried"

fresh; edit "$TMPDIR/tree/action.yml" 's/\${{ strategy.job-total }}/${{ inputs.lease_token }}/'
must_fail "an undeclared input used in action.yml" "undeclared input 'lease_token'"

fresh; edit "$TMPDIR/tree/action/lib.mjs" "s/'wait', //"
must_fail "an input the JavaScript does not read" "input 'wait' is read by no stage"

fresh; edit "$TMPDIR/tree/action/main.mjs" "s/^import \* as core from '@actions\/core';/&\nimport { spawn } from 'node:child_process';\nspawn('sh', ['-c', 'true']);/"
must_fail "a shell started by the JavaScript" "the JavaScript runs a shell"


fresh; edit "$TMPDIR/tree/action/post.mjs" "s/core.getState('name')/core.getInput('nam')/"
must_fail "an undeclared input read by the JavaScript" "reads the input 'nam'"

fresh; edit "$TMPDIR/tree/action.yml" 's/^  using: node24$/  using: node20/'
must_fail "runs.using node20 (leaves the runners in 2026)" "using: node24"

fresh; edit "$TMPDIR/tree/action.yml" '/^  post-if: always()$/d'
must_fail "a post stage that a failed job skips" "post-if is not always()"

fresh; edit "$TMPDIR/tree/action.yml" 's/^  post: dist\/post.mjs$/  post: dist\/after.mjs/'
must_fail "a post stage that is not a file" "runs.post 'dist/after.mjs'"

fresh; edit "$TMPDIR/tree/action.yml" 's/^  main: dist\/main.mjs$/  mian: dist\/main.mjs/'
must_fail "a misspelt runs key (action-validator, on node24)" "action-validator"

fresh; edit "$TMPDIR/tree/.github/workflows/ci.yml" '0,/run: test -n "$STATUS"/s//run: test -n "${{ steps.status.outputs.status }}"/'
must_fail "an expression pasted into a run: script" 'contains \${{ }}'

fresh; edit "$TMPDIR/tree/.github/workflows/reconcile.yml" 's/runs-on:/runs-onn:/'
must_fail "a misspelt workflow key" 'runs-onn'

fresh; edit "$TMPDIR/tree/.github/workflows/reconcile.yml" 's/inputs.fail-on ||/input.fail-on ||/'
must_fail "an unknown context in a workflow expression (actionlint)" 'undefined variable "input"'

fresh; edit "$TMPDIR/tree/.github/workflows/migrate.yml" 's/command: migrate/commnd: migrate/'
must_fail "an undeclared input passed to uses: ./" "passes 'commnd'"

fresh; edit "$TMPDIR/tree/action/build.sh" 's/^root=\${GITHUB_ACTION_PATH/root=$(echo $GITHUB_ACTION_PATH)\nunused=${GITHUB_ACTION_PATH/'
must_fail "a shellcheck finding in action/build.sh" "shellcheck: action"
echo "t_action_lint: ok"
