#!/bin/sh
# test: seconds 113
# The action (action.yml: dist/main.mjs over the Node client) run step by step by
# tests/action/harness.mjs in a simulated Actions environment (GITHUB_ACTIONS,
# GITHUB_OUTPUT, GITHUB_STATE, GITHUB_STEP_SUMMARY, GITHUB_REPOSITORY,
# RUNNER_TEMP, the inputs as INPUT_* as the runner sets them) against the fake GitHub server
# (build/tools/fakegh): acquire with heartbeat true -> a background heartbeat
# lands -> heartbeat -> transition -> release (stops it), run, status, a held
# lease, the matrix owner, input injection, and reconcile (summary and
# annotations). Every output, the job summary and the annotations are checked.
# shellcheck disable=SC2016,SC2154 # backquotes in patterns are markdown; root and log come from action_lib.sh
set -eu
# shellcheck disable=SC1091 # sourced helper
. "$(dirname "$0")/action_lib.sh"
action_setup

# The action's directory as the runner lays it out, with the binary under test
# where the cache restores the bundle (the build step is skipped: a hit).
action_dir "$TMPDIR/action-path"

CANARY="ghs_ACTIONcanary0123456789abcdefCANARY"
trap action_cleanup EXIT INT TERM
action_fakegh "$CANARY"

stamp='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$'

# 0. the first run on a runner: a cache miss, so the build step builds the
# bundle from the action's own source (a copy, plain flags). When this test
# runs on the plain build (make check: BUILD is the tree's build/), the copy
# gets that build's objects too, copied after the sources: make, the build
# step's own judge, finds them current and the step links, bundles and
# installs nothing it need not (issue 26: compiling the library again was 30
# of this test's 56 CPU-s). The compile from nothing is still run on every
# cache miss of make check SANITIZE=1 and COVERAGE=1 (other build
# directories, nothing reused) and by t_action_bundle.sh's miss in a clean
# Debian root under .ci/run.
cp_ap="$TMPDIR/action-copy"
mkdir -p "$cp_ap"
for f in action.yml action dist scripts Makefile mk lib cmd migrations; do
  [ -e "$root/$f" ] && cp -R "$root/$f" "$cp_ap/"
done
if [ "$(cd "$BUILD" && pwd)" = "$root/build" ] && [ -f "$BUILD/libreflease.a" ]; then
  mkdir -p "$cp_ap/build"
  for f in lib cmd migrations libreflease.a; do
    [ -e "$BUILD/$f" ] && cp -R "$BUILD/$f" "$cp_ap/build/"
  done
fi
ap_saved=$ap
ap=$cp_ap
act '{"command":"status","name":"deploy"}'
ap=$ap_saved
expect 0 "status on a fresh action copy"
like stdout 'no cache service; building' "fresh copy: no bundle yet"
like stdout 'set-up [0-9]+ ms \(cache miss: built\)' "fresh copy: built"
is outputs.status absent "fresh copy: status absent"
[ -x "$cp_ap/build/bundle/bin/reflease" ] || fail "the build step did not build build/bundle"
# libgit2 linked in from its archive (issue 43), or its shared library carried
if ldd "$cp_ap/build/bundle/bin/reflease" | grep -q 'libgit2'; then
  ls "$cp_ap"/build/bundle/lib/libgit2.so.* >/dev/null 2>&1 || fail "no libgit2 in the bundle"
fi
! ldd "$cp_ap/build/bundle/bin/reflease" | grep -q 'not found' ||
  fail "the bundle misses a library: $(ldd "$cp_ap/build/bundle/bin/reflease" | grep 'not found')"
like stderr 'reflease: build cache key ' "setup prints the key"
rm -rf "$cp_ap"

# 1. acquire with heartbeat: every output, the summary line, the default owner
act '{"command":"acquire","name":"deploy","ttl":"60","heartbeat":"true"}'
expect 0 "acquire"
is outputs.status acquired "acquire status"
hex outputs.lease-token 32 "acquire token"
hex outputs.oid 40 "acquire oid"
like outputs.expires-at "$stamp" "acquire expires-at"
like stdout 'set-up [0-9]+ ms \(cache hit\)' "cache hit: nothing built"
unlike stderr 'install-deps|make' "cache hit: no install, no make"
like stderr 'reflease: build cache key reflease-[a-z]+-[0-9.]+-[a-z0-9_]+-[0-9a-f]{32}' "cache key"
like summary 'reflease acquire\*\* `deploy`: acquired, expires ' "summary line"
like summary 'heartbeat in the background at the renewal point of TTL 60s' "summary: heartbeat"
like stdout 'heartbeat of deploy in the background at the renewal point of TTL 60s' "log: heartbeat"
is annotations '[]' "no annotation on success"
tok=$(q outputs.lease-token)
oid1=$(q outputs.oid)
pidf="$RUNNER_TEMP/reflease-heartbeat.leases.deploy.pid"
[ -f "$pidf" ] || fail "no heartbeat pid file under RUNNER_TEMP"
hbpid=$(cat "$pidf")
kill -0 "$hbpid" 2>/dev/null || fail "background heartbeat not running"
tr '\0' ' ' <"/proc/$hbpid/cmdline" | grep -q -- "heartbeat --ttl 60 --every auto -- deploy" ||
  fail "heartbeat command line: $(tr '\0' ' ' <"/proc/$hbpid/cmdline")"
tr '\0' ' ' <"/proc/$hbpid/cmdline" | grep -q "$tok" && fail "lease token on a command line"
s=$(status_json deploy)
[ "$(printf '%s' "$s" | field owner)" = "octo/leases/42/1/deploy" ] || fail "owner: $s"
[ "$(printf '%s' "$s" | field host)" = "runner-1" ] || fail "host: $s"

# 1b. a lease that will be lost: broken and taken by another job while its
# background heartbeat runs (the heartbeat notices at its next re-read, within 6 s);
# the new holder's TTL outlasts the whole test, so that only 'stale' is expired
# at the reconcile of step 9 however slow the machine
act '{"command":"acquire","name":"lost","ttl":"60","heartbeat":"true"}'
expect 0 "acquire lost"
REFLEASE_GITHUB_TOKEN=$CANARY "$REFLEASE" break lost --force >>"$log" 2>&1 || fail "break"
GITHUB_RUN_ID=44 act '{"command":"acquire","name":"lost","ttl":"600"}'
expect 0 "another job takes the broken lease"

# 2. another job (another run) cannot take it: exit 3, status held, an error annotation
GITHUB_RUN_ID=43 act '{"command":"acquire","name":"deploy","ttl":"60"}'
expect 3 "acquire of a held lease"
is outputs.status held "held status"
is outputs.lease-token "" "no token for a non-holder"
like outputs.expires-at "$stamp" "held: expires-at of the holder"
is annotations.0.level error "held: annotation level"
is annotations.0.title "reflease acquire deploy" "held: annotation title"
like annotations.0.message 'the lease is held \(exit 3\)' "held: annotation message"
like summary 'acquire\*\* `deploy`: held' "held: summary"

# 3. status through the action
act '{"command":"status","name":"deploy"}'
expect 0 "status"
is outputs.status live "status live"
is outputs.lease-token "" "status never shows the token"
# the acquire's commit, or (on a loaded machine, 30 s after the acquire) the
# background heartbeat's commit on top of it
soid=$(q outputs.oid)
[ "$soid" = "$oid1" ] ||
  [ "$(git --git-dir="$TMPDIR/gh.git" log -1 --format='%P %s' "$soid" 2>/dev/null | grep heartbeat | cut -d' ' -f1)" = "$oid1" ] ||
  fail "status oid $soid: neither the acquire's $oid1 nor a heartbeat on it"

# 4. the background heartbeat lands (at the renewal point: TTL 60 on github:, 30 s
# before the expiry) and keeps the token
i=0
while [ $i -lt 70 ]; do
  oid=$(status_json deploy | field oid)
  [ -n "$oid" ] && [ "$oid" != "$oid1" ] && break
  sleep 0.5; i=$((i + 1))
done
[ "$oid" != "$oid1" ] || fail "no background heartbeat landed within 35 s"
git --git-dir="$TMPDIR/gh.git" log -1 --format=%s "$oid" | grep -q heartbeat ||
  fail "the new commit is not a heartbeat: $(git --git-dir="$TMPDIR/gh.git" log -1 --format=%s "$oid")"

# 5. heartbeat and transition with the token output
act "{\"command\":\"heartbeat\",\"name\":\"deploy\",\"lease-token\":\"$tok\"}"
expect 0 "heartbeat"
like outputs.status '^(renewed|not_due)$' "heartbeat status"
is outputs.lease-token "$tok" "heartbeat keeps the token"
hex outputs.oid 40 "heartbeat oid"
act "{\"command\":\"transition\",\"name\":\"deploy\",\"lease-token\":\"$tok\",\"phase\":\"working\"}"
expect 0 "transition"
is outputs.status transitioned "transition status"
is outputs.lease-token "$tok" "same owner, same host: token preserved"
act "{\"command\":\"transition\",\"name\":\"deploy\",\"lease-token\":\"$tok\"}"
expect 64 "transition without phase"
is outputs.status error "usage error status"
like annotations.0.message 'needs the phase input' "usage error annotation"

# 6. release stops the background heartbeat first
act "{\"command\":\"release\",\"name\":\"deploy\",\"lease-token\":\"$tok\"}"
expect 0 "release"
is outputs.status released "release status"
is outputs.lease-token "" "no token after release"
hex outputs.oid 40 "release oid"
like stdout 'background heartbeat of deploy stopped \(exit 143\)' "heartbeat stopped by release"
is annotations '[]' "release: no annotation"
[ ! -f "$pidf" ] || fail "pid file left after release"
i=0
while kill -0 "$hbpid" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
kill -0 "$hbpid" 2>/dev/null && fail "background heartbeat still running after release"
[ "$(status_json deploy | field phase)" = released ] || fail "not released"
act "{\"command\":\"release\",\"name\":\"deploy\",\"lease-token\":\"$tok\"}"
expect 0 "second release"
is outputs.status already_released "second release status"

# 7. a lost lease (set up in 1b): its background heartbeat stopped by itself; release says so
i=0
while [ ! -f "$RUNNER_TEMP/reflease-heartbeat.leases.lost.rc" ] && [ $i -lt 70 ]; do
  sleep 0.5; i=$((i + 1))
done
act '{"command":"release","name":"lost"}'
expect 0 "release of a lost lease (the kept token is not current: not_owner, nothing written)"
is outputs.status not_owner "lost: release status"
is annotations.0.level warning "lost: warning annotation"
like annotations.0.message 'background heartbeat had already stopped: not the holder.*\(exit 4\)' "lost"
is annotations.1.level warning "lost: not_owner annotation"
like annotations.1.message 'nothing released' "lost: not_owner message"
[ "$(status_json lost | field owner)" = "octo/leases/44/1/deploy" ] || fail "the new holder lost its lease"

# 7b. release in the same job without the lease-token input: the kept token
act '{"command":"acquire","name":"solo","ttl":"60","heartbeat":"true"}'
expect 0 "acquire solo"
[ "$(stat -c %a "$RUNNER_TEMP/reflease-heartbeat.leases.solo.token")" = 600 ] || fail "token file mode"
act '{"command":"release","name":"solo"}'
expect 0 "release solo without lease-token"
is outputs.status released "release with the kept token"
[ ! -e "$RUNNER_TEMP/reflease-heartbeat.leases.solo.token" ] || fail "token file left after release"

# 8. run around guarded work: the command's argv, environment, exit status
cat >"$TMPDIR/guarded.sh" <<'EOF'
printf '%s\n' "$REFLEASE_LEASE_NAME" "$REFLEASE_TRANSITIONS" "$@" >"$GUARD_OUT"
exit "${GUARD_EXIT:-0}"
EOF
export GUARD_OUT="$TMPDIR/guarded.out"
act "{\"command\":\"run\",\"name\":\"job\",\"ttl\":\"60\",\"args\":\"sh $TMPDIR/guarded.sh one \$(touch $TMPDIR/pwned) ;x\"}"
expect 0 "run"
is outputs.status released "run: released at the end"
hex outputs.oid 40 "run oid"
like outputs.expires-at "$stamp" "run expires-at"
is outputs.lease-token "" "run: no token output"
[ "$(sed -n 1p "$GUARD_OUT")" = job ] || fail "run: REFLEASE_LEASE_NAME: $(cat "$GUARD_OUT")"
[ "$(sed -n 3p "$GUARD_OUT")" = one ] || fail "run: argv"
[ "$(sed -n 4p "$GUARD_OUT")" = "\$(touch" ] || fail "run: args not split literally: $(cat "$GUARD_OUT")"
[ "$(sed -n 6p "$GUARD_OUT")" = ";x" ] || fail "run: args not literal: $(cat "$GUARD_OUT")"
[ ! -e "$TMPDIR/pwned" ] || fail "args were evaluated by a shell"
like summary 'reflease run\*\* `job`: released' "run summary"
GUARD_EXIT=7 act "{\"command\":\"run\",\"name\":\"job\",\"ttl\":\"60\",\"args\":\"sh $TMPDIR/guarded.sh\"}"
expect 7 "run exits with the command's status"
is outputs.status released "run (exit 7): still released"
like annotations.0.message 'reflease run job: the command exited with status 7 \(its own status\); the lease was acquired and released' "run failure annotation"

# 9. inputs are data, never code: a crafted name is a usage error
act "{\"command\":\"acquire\",\"name\":\"x\$(touch $TMPDIR/pwned2)\\\"; touch $TMPDIR/pwned3\"}"
expect 64 "crafted name"
if [ -e "$TMPDIR/pwned2" ] || [ -e "$TMPDIR/pwned3" ]; then fail "name input was evaluated"; fi
act '{"command":"release","name":"../../x"}'
expect 64 "a name that would leave RUNNER_TEMP"
like annotations.0.message "invalid lease name" "path name annotation"
act '{"command":"acquire","name":"x","nope":"1"}'
expect 2 "an input action.yml does not declare"
act '{"command":"bogus","name":"x"}'
expect 64 "unknown command"
like annotations.0.message "unknown command 'bogus'" "unknown command annotation"

act '{"command":"acquire","name":"x","ttl":"5m"}'
expect 64 "ttl not in whole seconds"
like annotations.0.message "ttl must be whole seconds, not '5m'" "ttl annotation"
act '{"command":"acquire","name":"x","ttl":"30"}'
expect 64 "ttl below GitHub's minimum (the binary's check)"
is outputs.status error "ttl 30: status error"
like annotations.0.message 'usage error \(exit 64\)' "ttl 30 annotation"

# 9b. the namespace input
act '{"command":"acquire","name":"nsl","namespace":"deploys","ttl":"60"}'
expect 0 "acquire in namespace deploys"
git --git-dir="$TMPDIR/gh.git" rev-parse -q --verify refs/deploys/nsl >/dev/null || fail "no refs/deploys/nsl"
is outputs.oid "$(git --git-dir="$TMPDIR/gh.git" rev-parse refs/deploys/nsl)" "namespace oid"

# 10. a matrix leg's owner carries the matrix index (protocol.md §5)
act '{"command":"acquire","name":"matrix","ttl":"60"}' --job-index 1 --job-total 3
expect 0 "matrix acquire"
[ "$(status_json matrix | field owner)" = "octo/leases/42/1/deploy/1" ] ||
  fail "matrix owner: $(status_json matrix)"
act '{"command":"acquire","name":"matrix","ttl":"60"}' --job-index 2 --job-total 3
expect 3 "another matrix leg of the same job is another owner"

# 11. migrate through the action: a plan by default, then --apply (protocol.md §8)
GIT="git --git-dir=$TMPDIR/gh.git"
now=$(date +%s)
ts() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ; }
# plant NAME JSON: refs/leases/NAME at a new heartbeat commit of alice on h
# whose payload is JSON (written behind the action's back); its oid in $c
plant() {
  c=$(printf '%s: heartbeat working by alice on h\n\n%s\n' "$1" "$2" |
    GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@localhost GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@localhost \
      $GIT commit-tree "$($GIT hash-object -t tree /dev/null)")
  $GIT update-ref "refs/leases/$1" "$c" ""
}
json="{\"acquired_at\":\"$(ts $((now - 500)))\",\"expires_at\":\"$(ts $((now + 3000)))\",\"host\":\"h\",\"lease_token\":\"0123456789abcdef0123456789abcdef\",\"name\":\"old\",\"nonce\":\"0011223344556677\",\"owner\":\"alice\",\"phase\":\"working\",\"sdlc_version\":\"1.0.0\",\"transitions\":3}"
plant old "$json"
act '{"command":"migrate"}'
expect 0 "migrate plan"
is outputs.status ok "migrate plan status"
like summary '\| `old` \| 1\.0\.0 \| 1\.2\.0 \| commit-time \| would_migrate' "migrate plan summary row"
[ "$($GIT rev-parse refs/leases/old)" = "$c" ] || fail "a plan wrote"
act '{"command":"migrate","args":"--apply"}'
expect 0 "migrate --apply"
is outputs.status ok "migrate apply status"
like summary '\| `old` .* \| migrated \|' "migrate apply summary row"
$GIT log -1 --format=%s refs/leases/old | grep -q migrate || fail "not migrated: $($GIT log -1 --format=%s refs/leases/old)"

# 12. reconcile through the action: its summary and annotations
act '{"command":"reconcile","args":"--fail-on warning"}'
expect 0 "reconcile, clean"
is outputs.status ok "reconcile ok"
like summary 'reflease reconcile' "reconcile summary"
unlike summary 'reflease reconcile\*\*' "no lease-command line for reconcile"
# a holder that stopped heartbeating 10 minutes ago: expired (warning), reaped
# as the scheduled workflow does (--reap --fail-on error)
json="{\"acquired_at\":\"$(ts $((now - 900)))\",\"expires_at\":\"$(ts $((now - 600)))\",\"host\":\"h\",\"lease_token\":\"0123456789abcdef0123456789abcdef\",\"name\":\"stale\",\"nonce\":\"0011223344556677\",\"owner\":\"alice\",\"phase\":\"working\",\"sdlc_version\":\"1.1.0\",\"transitions\":1,\"ttl_seconds\":60}"
plant stale "$json"
act '{"command":"reconcile","args":"--reap --fail-on error"}'
expect 0 "reconcile --reap: a warning is below --fail-on error"
is outputs.status ok "reap status"
is annotations.0.level warning "expired: warning annotation"
is annotations.0.title "reflease reconcile: refs/leases/stale" "expired: annotation title"
like annotations.0.message 'expired' "expired: annotation message"
like summary 'Reaped 1' "reap summary"
like summary '\| stale \| working \|' "reap summary row"
[ "$(status_json stale | field phase)" = released ] || fail "stale lease not reaped: $(status_json stale)"
# a ref whose payload names another lease: name-mismatch (error)
git --git-dir="$TMPDIR/gh.git" update-ref refs/leases/impostor "$(status_json matrix | field oid)"
act '{"command":"reconcile"}'
expect 1 "reconcile finds an error"
is outputs.status found "reconcile found"
like summary 'impostor' "reconcile summary names the lease"
like annotations "\"level\":\"error\"" "reconcile error annotation"
like annotations "name-mismatch" "reconcile annotation id"
like annotations 'refs/leases/impostor' "reconcile annotation title"
unlike annotations 'reflease reconcile: exit' "no extra annotation for exit 1"

# 13. gc through the action (the scheduled workflow's last step, issue 29): a
# github: store's server maintains its repository, so nothing to do
act '{"command":"gc"}'
expect 0 "gc"
is outputs.status ok "gc status"
is annotations '[]' "gc: no annotation"

# the token canary: no step printed the GitHub token
if grep -q "$CANARY" "$log"; then fail "the GitHub token was printed"; fi
grep -q 'reflease acquire\*\* `deploy`: acquired' "$HARNESS_JOB_SUMMARY" || fail "job summary"
echo "t_action: ok"
