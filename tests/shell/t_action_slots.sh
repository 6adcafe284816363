#!/bin/sh
# test: seconds 20
# The Action's slots input (issue 27) through tests/action/harness.mjs against
# the fake GitHub server: acquire with slots 2 and heartbeat true holds a slot
# (output lease-name NAME@iof2, the background heartbeat keeps that slot), a
# second job gets the other slot, a third is held (exit 3); the post stage
# releases the slot by its name and token; run with slots holds a slot while
# the command runs (REFLEASE_LEASE_NAME); slots on another command is a usage
# error; another count is exit 78.
# shellcheck disable=SC2154 # root and log come from action_lib.sh
set -eu
# shellcheck disable=SC1091 # sourced helper
. "$(dirname "$0")/action_lib.sh"
action_setup
action_dir "$TMPDIR/action-path"

CANARY="ghs_SLOTScanary0123456789abcdefCANARY"
trap 'action_cleanup' EXIT INT TERM
action_fakegh "$CANARY"
status_of() { REFLEASE_GITHUB_TOKEN=$CANARY "$REFLEASE" --json status "$1" 2>>"$log" | field status; }

# 1. two jobs each hold one of 2 slots, a third is held
GITHUB_RUN_ID=1 HARNESS_STATE=$TMPDIR/s1.json act '{"command":"acquire","name":"pool","slots":"2","ttl":"60","heartbeat":"true"}'
expect 0 "acquire slot 1"
is outputs.status acquired "first job"
like outputs.lease-name '^pool@[12]of2$' "the slot held is an output"
s1=$(q outputs.lease-name)
is state.name "$s1" "the slot's name saved for the post stage"
[ -f "$RUNNER_TEMP/reflease-heartbeat.leases.$s1.pid" ] || fail "no background heartbeat for $s1"
GITHUB_RUN_ID=2 HARNESS_STATE=$TMPDIR/s2.json act '{"command":"acquire","name":"pool","slots":"2","ttl":"60"}'
expect 0 "acquire slot 2"
s2=$(q outputs.lease-name)
[ "$s2" != "$s1" ] || fail "both jobs got $s1"
GITHUB_RUN_ID=3 HARNESS_STATE=$TMPDIR/s3.json act '{"command":"acquire","name":"pool","slots":"2","ttl":"60"}'
expect 3 "all slots held"
is outputs.status held "third job"
# 2. another count is a configuration error
GITHUB_RUN_ID=4 HARNESS_STATE=$TMPDIR/s4.json act '{"command":"acquire","name":"pool","slots":"3","ttl":"60"}'
expect 78 "another count"
# 3. the post stage releases each job's slot by its name and token
post "$TMPDIR/s1.json"
expect 0 "post of job 1"
[ "$(status_of "$s1")" = released ] || fail "$s1 not released by the post stage"
[ ! -f "$RUNNER_TEMP/reflease-heartbeat.leases.$s1.pid" ] || fail "the heartbeat of $s1 still runs"
post "$TMPDIR/s2.json"
expect 0 "post of job 2"
[ "$(status_of "$s2")" = released ] || fail "$s2 not released by the post stage"
# 4. run with slots
# shellcheck disable=SC2016 # expanded by the command, not here
printf 'echo "in:$REFLEASE_LEASE_NAME"\n' >"$TMPDIR/show.sh"
act "{\"command\":\"run\",\"name\":\"pool\",\"slots\":\"2\",\"ttl\":\"60\",\"args\":\"sh $TMPDIR/show.sh\"}"
expect 0 "run with slots"
like stdout 'in:pool@[12]of2' "the command ran in a slot"
# 5. slots on another command
act '{"command":"status","name":"pool","slots":"2"}'
expect 64 "slots on status"
act '{"command":"acquire","name":"pool","slots":"two"}'
expect 64 "slots not a number"
act '{"command":"acquire","name":"pool","slots":"2","wait":"5","fair":"true"}'
expect 64 "fair with slots"
like stderr 'fair: true and slots' "the fair+slots refusal names both inputs"
echo "ok"
