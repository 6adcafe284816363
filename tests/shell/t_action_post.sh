#!/bin/sh
# test: seconds 30
# test: quiet (a real-time claim; uses under one CPU: run.sh runs it beside at most one other quiet test)
# The action's post stage and cancellation (issue 25), played by
# tests/action/harness.mjs as the runner plays them (main stage, then
# `node dist/post.mjs` with the saved state as STATE_* variables, GITHUB_OUTPUT,
# GITHUB_STATE and GITHUB_STEP_SUMMARY files of its own) against the fake GitHub
# server:
# - acquire with heartbeat -> a failing step -> post: released by its token,
#   the background heartbeat stopped, reported in the log and the job summary;
#   also when the keeper's pid file is gone (the pid in the step's state);
# - acquire -> explicit release -> post: a quiet no-op (no summary, no
#   annotation, no write);
# - another job's lease (same name, after this job released) is never touched;
# - release-at-end false: nothing saved, the lease stays held;
# - command run with a script exiting 3: annotated as the script's own status;
# - cancellation with real signals on the real process tree (SIGINT, SIGTERM
#   7.5 s later, SIGKILL to the tree 2.5 s after that): run's guarded tree is
#   gone and the lease released before SIGTERM, also when the guarded command
#   ignores SIGINT and SIGTERM; a cancelled acquire --wait ends at once.
# shellcheck disable=SC2016,SC2154 # backquotes in patterns are markdown; root and log come from action_lib.sh
set -eu
# shellcheck disable=SC1091 # sourced helper
. "$(dirname "$0")/action_lib.sh"
action_setup
action_dir "$TMPDIR/action-path"

CANARY="ghs_POSTcanary0123456789abcdefCANARY"
cleanup() { # SIGKILL: a guarded command here may ignore SIGTERM
  for p in "$TMPDIR"/runner-temp/reflease-heartbeat.*.pid "$TMPDIR"/guard.*.pid; do
    [ -f "$p" ] && { kill -9 "$(cat "$p")" 2>/dev/null || true; }
  done
  [ -z "${fpid:-}" ] || kill "$fpid" 2>/dev/null || true
}
trap cleanup EXIT INT TERM
action_fakegh "$CANARY"

quiet() { # the post stage wrote nothing: no line but ::debug::, no summary, no annotation
  expect 0 "$1: post"
  is summary "" "$1: no summary"
  is annotations '[]' "$1: no annotation"
  [ -z "$(q stdout | grep -v '^::debug::' || true)" ] || fail "$1: post printed: $(q stdout)"
}

# 1. acquire with heartbeat, a failing step, the job ends: post releases
act '{"command":"acquire","name":"deploy","ttl":"60","heartbeat":"true"}'
expect 0 "acquire"
tok=$(q outputs.lease-token)
is state.lease-token "$tok" "the token saved for the post stage"
is state.name deploy "the name saved"
hbpid=$(cat "$RUNNER_TEMP/reflease-heartbeat.leases.deploy.pid")
alive "$hbpid" || fail "no background heartbeat"
sh -c 'exit 1' || true # a later step of the job fails; the post stage runs anyway (post-if: always())
post
expect 0 "post after a failing step"
like stdout 'background heartbeat of deploy stopped \(exit 143\)' "post: heartbeat stopped first"
like stdout 'deploy released at the end of the job' "post: log"
like summary '\*\*reflease\*\* `deploy`: released at the end of the job' "post: job summary"
is annotations '[]' "post: no annotation"
alive "$hbpid" && fail "the background heartbeat runs on after post"
[ ! -e "$RUNNER_TEMP/reflease-heartbeat.leases.deploy.pid" ] || fail "heartbeat pid file left"
[ "$(status_json deploy | field phase)" = released ] || fail "post did not release: $(status_json deploy)"
grep -q '`deploy`: released at the end of the job' "$HARNESS_JOB_SUMMARY" || fail "job summary"

# 1b. the keeper's pid file gone (a step cleaned RUNNER_TEMP): the post stage
# stops the keeper by the pid the main stage recorded in the step's state
HARNESS_STATE=$TMPDIR/gone.json act '{"command":"acquire","name":"gone","ttl":"60","heartbeat":"true"}'
expect 0 "acquire gone"
hbpid=$(cat "$RUNNER_TEMP/reflease-heartbeat.leases.gone.pid")
is state.keeper-pid "$hbpid" "the keeper's pid in the step's state"
rm "$RUNNER_TEMP/reflease-heartbeat.leases.gone.pid"
post "$TMPDIR/gone.json"
expect 0 "post without the pid file"
like stdout 'background heartbeat of gone stopped \(exit 143\)' "post: stopped by the state's pid"
alive "$hbpid" && fail "the keeper runs on after post"
[ "$(status_json gone | field phase)" = released ] || fail "post did not release gone"

# 2. acquire, explicit release, post: a quiet no-op
act '{"command":"acquire","name":"twice","ttl":"60","heartbeat":"true"}'
expect 0 "acquire twice"
tok=$(q outputs.lease-token)
HARNESS_STATE=$TMPDIR/release.json act "{\"command\":\"release\",\"name\":\"twice\",\"lease-token\":\"$tok\"}"
expect 0 "explicit release"
is state '{}' "release saves nothing for post"
oid=$(ref twice)
post "$TMPDIR/release.json"
quiet "post of the release step"
post
quiet "post of the acquire step after an explicit release"
[ "$(ref twice)" = "$oid" ] || fail "post wrote after an explicit release"

# 3. another job's lease is never touched: this job released, another job holds it now
HARNESS_STATE=$TMPDIR/shared.json act '{"command":"acquire","name":"shared","ttl":"60"}'
expect 0 "acquire shared"
act "{\"command\":\"release\",\"name\":\"shared\",\"lease-token\":\"$(q outputs.lease-token)\"}"
expect 0 "release shared"
GITHUB_RUN_ID=99 HARNESS_STATE=$TMPDIR/other.json act '{"command":"acquire","name":"shared","ttl":"60"}'
expect 0 "another job acquires shared"
oid=$(ref shared)
post "$TMPDIR/shared.json"
quiet "post of a lease another job holds now"
[ "$(ref shared)" = "$oid" ] || fail "post touched another job's lease"
[ "$(status_json shared | field owner)" = "octo/leases/99/1/deploy" ] || fail "owner: $(status_json shared)"

# 4. release-at-end false: nothing saved, the lease outlives the job
act '{"command":"acquire","name":"handover","ttl":"60","release-at-end":"false"}'
expect 0 "acquire handover"
is state '{}' "release-at-end false saves nothing"
like stdout 'release-at-end is false' "release-at-end false: said in the log"
post
quiet "post with release-at-end false"
[ "$(status_json handover | field phase)" != released ] || fail "release-at-end false released"

# 5. run: a script exiting 3 or 4 is the script's own status, not reflease's
for code in 3 4; do
  printf 'exit %s\n' "$code" >"$TMPDIR/exit$code.sh"
  act "{\"command\":\"run\",\"name\":\"script$code\",\"ttl\":\"60\",\"args\":\"sh $TMPDIR/exit$code.sh\"}"
  expect "$code" "run: the action's exit status is the script's ($code)"
  is outputs.status released "run exit $code: released"
  like annotations.0.message "the command exited with status $code \\(its own status\\); the lease was acquired and released" "run exit $code: annotation"
  unlike annotations 'is held|not the holder' "run exit $code: not read as reflease's outcome"
  is state '{}' "run saves nothing for post"
done
# and a held lease is still said as held
GITHUB_RUN_ID=98 act "{\"command\":\"run\",\"name\":\"shared\",\"ttl\":\"60\",\"args\":\"true\"}"
expect 3 "run of a lease another job holds"
like annotations.0.message 'not acquired: the lease is held \(exit 3\)' "run held: annotation"

# 6. cancellation: the runner's signals reach reflease run; the tree goes, the lease is released
cat >"$TMPDIR/guard.sh" <<'EOF2'
# a guarded tree: this shell and a child; IGNORE=1 ignores SIGINT and SIGTERM in both
[ "${IGNORE:-}" = 1 ] && trap '' INT TERM
sleep 600 &
echo $! >"$GUARD_DIR/guard.$1.child.pid"
echo $$ >"$GUARD_DIR/guard.$1.pid"
wait
EOF2
export GUARD_DIR="$TMPDIR"
for mode in plain ignore; do
  rm -f "$TMPDIR/guard.$mode.pid"
  ign=""
  [ "$mode" = plain ] || ign=1
  IGNORE=$ign act "{\"command\":\"run\",\"name\":\"cancel-$mode\",\"ttl\":\"60\",\"args\":\"sh $TMPDIR/guard.sh $mode\"}" \
    --cancel-when "$TMPDIR/guard.$mode.pid"
  is cancel.signals '["SIGINT"]' "cancel ($mode): ended after SIGINT, before the runner's SIGTERM"
  ms=$(q cancel.ms)
  echo "t_action_post: cancelled run ($mode) ended $ms ms after SIGINT"
  like exit_code '^(130|143)$' "cancel ($mode): interrupted"
  is outputs.status released "cancel ($mode): the lease released"
  like annotations.0.message 'interrupted by a signal' "cancel ($mode): annotation"
  for p in "$TMPDIR/guard.$mode.pid" "$TMPDIR/guard.$mode.child.pid"; do
    alive "$(cat "$p")" && fail "cancel ($mode): guarded process $(cat "$p") still runs"
  done
  [ "$(status_json "cancel-$mode" | field phase)" = released ] || fail "cancel ($mode): $(status_json "cancel-$mode")"
done
# cancel once reflease WORD ... shared waits with its SIGINT handler in (not during set-up)
catches() { m=$(awk '/^SigCgt:/ { print $2 }' "/proc/$1/status" 2>/dev/null) && [ -n "$m" ] && [ $(((0x$m >> ($2 - 1)) & 1)) -eq 1 ]; }
cancel_when_waiting() { # WORD FILE
  rm -f "$2"
  (
    i=0
    while [ $i -lt 600 ]; do
      for p in $(pgrep -f "reflease $1 .*shared" || true); do
        if catches "$p" 2; then : >"$2"; exit 0; fi
      done
      sleep 0.05
      i=$((i + 1))
    done
  ) &
}
# a cancelled acquire --wait on a held lease ends at once, and leaves nothing to post
cancel_when_waiting acquire "$TMPDIR/waiting"
act '{"command":"acquire","name":"shared","ttl":"60","wait":"300"}' --cancel-when "$TMPDIR/waiting"
is cancel.signals '["SIGINT"]' "cancelled wait: ended after SIGINT"
like exit_code '^(130|143)$' "cancelled wait: interrupted"
is state '{}' "cancelled wait: nothing to release"
[ "$(status_json shared | field owner)" = "octo/leases/99/1/deploy" ] || fail "the holder lost the lease"

# and a run still waiting for the lease: nothing was started
cancel_when_waiting run "$TMPDIR/waiting"
act '{"command":"run","name":"shared","ttl":"60","wait":"300","args":"true"}' --cancel-when "$TMPDIR/waiting"
is cancel.signals '["SIGINT"]' "cancelled run --wait: ended after SIGINT"
like annotations.0.message 'interrupted by a signal \(exit 1[34][03]\) before the command started' "cancelled run --wait: annotation"
[ "$(status_json shared | field owner)" = "octo/leases/99/1/deploy" ] || fail "the holder lost the lease"

if grep -q "$CANARY" "$log"; then fail "the GitHub token was printed"; fi
echo "t_action_post: ok"
