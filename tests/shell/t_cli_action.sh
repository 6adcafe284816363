#!/bin/sh
# Issue 19: the action's command input accepts break and list, passed like
# every other input (environment variables and separate argv words, nothing
# evaluated): the action's main stage (dist/main.mjs through
# tests/action/harness.mjs) against a local store. scripts/action-check.mjs
# keeps the action's command list (action/lib.mjs COMMANDS), action.yml's
# and the README's in step (a copy with `list` dropped from the README fails).
# shellcheck disable=SC2016,SC2015,SC2154 # $(...) and backquotes are literal input text; A && B || fail is intended; root comes from action_lib.sh
set -eu
# shellcheck disable=SC1091 # sourced helper
. "$(dirname "$0")/action_lib.sh"
action_setup
action_dir "$TMPDIR/ap"
cd "$TMPDIR" || exit 1
"$REFLEASE" init "$TMPDIR/s" >/dev/null
export REFLEASE_STORE="local:$TMPDIR/s" GITHUB_RUN_ID=7 GITHUB_JOB=j

# step WANT_EXIT COMMAND NAME [ARGS]: one action step
step() {
  act "{\"command\":\"$2\",\"name\":\"$3\",\"args\":\"${4:-}\",\"ttl\":\"60\"}"
  [ "$st" -eq "$1" ] || fail "step $2 '$3' '${4:-}': exit $st, want $1"
}

step 0 acquire deploy
is outputs.status acquired "acquire status"
is outputs.acquired true "acquire: acquired"
step 3 break deploy
is outputs.status held "break of a live lease"
is annotations.0.title "reflease break deploy" "an error annotation for break"
step 0 break deploy --force
is outputs.status broken "break --force"
like summary '\*\*reflease break\*\* `deploy`: broken' "a summary line for break"
step 0 list ''
is outputs.status ok "list status"
like stdout '(^|\n)NAME +PHASE' "list: the header"
like stdout '(^|\n)deploy +released' "list: the lease"
step 0 list '' '--json'
like stdout '(^|\n)deploy +released' "list --json through args"
step 64 break ''
like annotations.0.message "command break needs the name input" "break without a name"

# nothing an input says is ever run
step 64 break 'x;touch pwned1'
step 64 break deploy '--force $(touch pwned2) `touch pwned3`'
step 64 list '' '; touch pwned4 && $(touch pwned5)'
step 64 frobnicate deploy
like annotations.0.message "unknown command 'frobnicate' \(acquire, heartbeat, transition, release, break, run, status, list, reconcile, migrate, gc\)" \
  "unknown command message"
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
  act "{\"command\":\"acquire\",\"name\":\"$2\",\"ttl\":\"60\",\"wait\":\"$3\",\"fair\":\"$4\"}"
  [ "$st" -eq "$1" ] || fail "fair step '$2' wait '$3' fair '$4': exit $st, want $1: $(q stderr)"
}
fstep 64 fq '' true
like stderr "fair: true needs the wait input" "fair without wait"
fstep 64 fq 1 maybe
G="git --git-dir=$TMPDIR/s"
exp=$(date -u -d '+60 seconds' +%Y-%m-%dT%H:%M:%SZ)
ghost=$(printf 'queue fq: ticket\n\n{"expires_at":"%s","host":"h9","id":"00000000000000bb","key":"0000000000000001","name":"fq","owner":"ghost","schema":"reflease-ticket/1","since":"%s","ttl_seconds":60}\n' "$exp" "$exp" |
  $G commit-tree "$($G hash-object -t tree -w /dev/null)")
$G update-ref refs/leases-queue/fq/00000000000000bb "$ghost"
fstep 3 fq 1 true
is outputs.acquired false "a fair waiter behind a ticket: acquired false"
$G rev-parse -q --verify refs/leases/fq >/dev/null && fail "fair: the action took the lease past a live ticket"
fstep 0 fq 1 false
echo "t_cli_action: ok"
