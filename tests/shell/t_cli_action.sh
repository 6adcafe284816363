#!/bin/sh
# Issue 19: the action's command input accepts break and list, passed like
# every other input (environment variables and separate argv words, nothing
# evaluated): action/run.sh run as the action's command step against a local
# store. scripts/action-check.mjs keeps run.sh's command list, action.yml's and
# the README's in step (a copy with `list` dropped from the README fails).
# shellcheck disable=SC2016,SC2015 # $(...) and backquotes are literal input text; A && B || fail is intended
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
command -v bash >/dev/null 2>&1 || { echo "t_cli_action: SKIP: no bash"; exit 0; }
cd "$TMPDIR" || exit 1
fail() { echo "FAIL: $*" >&2; for f in o.txt e.txt outputs; do [ -f "$f" ] && { echo "--- $f"; cat "$f"; }; done >&2; exit 1; }

ap="$TMPDIR/ap"
mkdir -p "$ap/build/bundle/bin" rt
ln -s "$root/action" "$ap/action"
ln -s "$REFLEASE" "$ap/build/bundle/bin/reflease" # where the cache restores the bundle
"$REFLEASE" init "$TMPDIR/s" >/dev/null
unset REFLEASE_OWNER REFLEASE_HOST REFLEASE_NAMESPACE REFLEASE_LEASE_TOKEN GITHUB_TOKEN 2>/dev/null || true
export REFLEASE_STORE="local:$TMPDIR/s" GITHUB_ACTION_PATH="$ap" RUNNER_TEMP="$TMPDIR/rt"
export GITHUB_ACTIONS=true GITHUB_REPOSITORY=octo/leases GITHUB_RUN_ID=7 GITHUB_RUN_ATTEMPT=1 GITHUB_JOB=j
export GITHUB_OUTPUT="$TMPDIR/outputs" GITHUB_STEP_SUMMARY="$TMPDIR/summary.md"

# step WANT_EXIT COMMAND NAME [ARGS]: one action step; its outputs in $TMPDIR/outputs
step() {
  : >"$GITHUB_OUTPUT"
  set +e
  INPUT_COMMAND=$2 INPUT_NAME=$3 INPUT_ARGS=${4:-} INPUT_TTL=60 INPUT_PHASE='' INPUT_WAIT='' \
    INPUT_LEASE_TOKEN='' INPUT_NAMESPACE='' INPUT_HEARTBEAT=false \
    bash "$root/action/run.sh" >o.txt 2>e.txt
  got=$?
  set -e
  [ "$got" -eq "$1" ] || fail "step $2 '$3' '${4:-}': exit $got, want $1"
}
out() { sed -n "s/^$1=//p" "$GITHUB_OUTPUT" | tail -n 1; }

step 0 acquire deploy
[ "$(out status)" = acquired ] || fail "acquire status $(out status)"
step 3 break deploy
[ "$(out status)" = held ] || fail "break of a live lease: status $(out status)"
grep -q '^::error title=reflease break deploy::' o.txt || fail "no error annotation for break"
step 0 break deploy --force
[ "$(out status)" = broken ] || fail "break --force: status $(out status)"
grep -q '\*\*reflease break\*\* `deploy`: broken' summary.md || fail "no summary line for break"
step 0 list ''
[ "$(out status)" = ok ] || fail "list status $(out status)"
grep -q "^NAME  *PHASE" o.txt && grep -q "^deploy  *released" o.txt || fail "list output"
step 0 list '' '--json'
grep -q '"namespace":"leases"' o.txt || fail "list --json through args"
step 64 break ''
grep -q "command break needs the name input" o.txt e.txt || fail "break without a name"

# nothing an input says is ever run
step 64 break 'x;touch pwned1'
step 64 break deploy '--force $(touch pwned2) `touch pwned3`'
step 64 list '' '; touch pwned4 && $(touch pwned5)'
step 64 frobnicate deploy
grep -q "unknown command 'frobnicate' (acquire, heartbeat, transition, release, break, run, status, list, reconcile, migrate, gc)" o.txt e.txt ||
  fail "unknown command message"
for f in pwned1 pwned2 pwned3 pwned4 pwned5; do
  [ ! -e "$f" ] && [ ! -e "$ap/$f" ] || fail "an input was executed ($f)"
done

# one list of commands, checked by action-check
if command -v node >/dev/null 2>&1 && [ -d "$root/node_modules/yaml" ]; then
  mkdir -p tree/.github
  cp -R "$root/action.yml" "$root/action" "$root/dist" "$root/README.md" tree/
  cp -R "$root/.github/workflows" tree/.github/
  node "$root/scripts/action-check.mjs" tree scripts-out >check.out 2>&1 || { cat check.out; fail "action-check on the repository's files"; }
  sed -i '/^| `command` |/s/ `list`,//' tree/README.md
  if node "$root/scripts/action-check.mjs" tree scripts-out >check.out 2>&1; then fail "a README without list passed"; fi
  grep -q "the command input row names" check.out || fail "action-check: $(cat check.out)"
  cp "$root/README.md" tree/
  sed -i 's/transition, release, break, run,/transition, release, run,/' tree/action.yml
  if node "$root/scripts/action-check.mjs" tree scripts-out >check.out 2>&1; then fail "an action.yml without break passed"; fi
  grep -q "the command input's description omits 'break'" check.out || fail "action-check: $(cat check.out)"
else
  echo "t_cli_action: action-check part skipped (node or node_modules missing)"
fi
# the fair input (issue 28): only with wait, only true/false, and passed as --fair:
# a free lease with an older live ticket (written here) is not taken by a fair waiter
fstep() {
  set +e
  INPUT_COMMAND=acquire INPUT_NAME=$2 INPUT_ARGS='' INPUT_TTL=60 INPUT_PHASE='' INPUT_WAIT=$3 \
    INPUT_FAIR=$4 INPUT_LEASE_TOKEN='' INPUT_NAMESPACE='' INPUT_HEARTBEAT=false \
    bash "$root/action/run.sh" >o.txt 2>e.txt
  got=$?
  set -e
  [ "$got" -eq "$1" ] || fail "fair step '$2' wait '$3' fair '$4': exit $got, want $1: $(cat e.txt)"
}
fstep 64 fq '' true
grep -q "fair: true needs the wait input" e.txt || fail "fair without wait: $(cat e.txt)"
fstep 64 fq 1 maybe
G="git --git-dir=$TMPDIR/s"
exp=$(date -u -d '+60 seconds' +%Y-%m-%dT%H:%M:%SZ)
ghost=$(printf 'queue fq: ticket\n\n{"expires_at":"%s","host":"h9","id":"00000000000000bb","key":"0000000000000001","name":"fq","owner":"ghost","schema":"reflease-ticket/1","since":"%s","ttl_seconds":60}\n' "$exp" "$exp" |
  $G commit-tree "$($G hash-object -t tree -w /dev/null)")
$G update-ref refs/leases-queue/fq/00000000000000bb "$ghost"
fstep 3 fq 1 true
$G rev-parse -q --verify refs/leases/fq >/dev/null && fail "fair: the action took the lease past a live ticket"
fstep 0 fq 1 false
echo "t_cli_action: ok"
