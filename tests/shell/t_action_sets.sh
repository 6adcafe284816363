#!/bin/sh
# test: seconds 44
# The Action's name input as a set of leases (issue 27 item 4; cli.md "Sets"),
# through tests/action/harness.mjs (real node, real CLI) against the fake
# GitHub server (its updateRefs is atomic as GitHub documents it):
# 1. name "db\nprod" (a YAML block) with heartbeat true: both taken with one
#    token, the members output, one background heartbeat of the set; the post
#    stage stops it and releases both by the set's token;
# 2. a member another job holds stops the set: exit 3, status held, blocked_by
#    in the log, nothing held afterwards, nothing saved for the post stage;
# 3. heartbeat, transition and release steps pass every name ("db, prod");
#    a release naming the set in another order stops its background heartbeat;
# 4. several names with slots, with fair, or with status are refused before
#    anything runs (exit 64, saying why); an invalid member is named;
# 5. run with several names passes them all before `--` (the argv the binary
#    gets, recorded by a wrapper) and the set is held while the command runs and
#    released after; a reflease whose run keeps one lease is never given a set
#    (it would read the second name as the command): exit 64 before it runs;
# 6. the set's background heartbeat is the CLI's set keeper (`reflease
#    heartbeat A B --every S`, as the action's keeper starts it), on a local store: it
#    renews every member, ends 143 on SIGTERM, and 4 once a member is taken
#    over, naming it (its retry policy is the library keeper's, test_heartbeat).
# shellcheck disable=SC2016,SC2154 # backquotes in patterns are markdown; root and log come from action_lib.sh
set -eu
# shellcheck disable=SC1091 # sourced helper
. "$(dirname "$0")/action_lib.sh"
action_setup
action_dir "$TMPDIR/action-path"

CANARY="ghs_SETScanary0123456789abcdefCANARYx"
trap 'action_cleanup "$TMPDIR/loop.pid"' EXIT INT TERM
action_fakegh "$CANARY"
phase_of() { status_json "$1" | field phase; }
token_of() { git --git-dir="$TMPDIR/gh.git" cat-file -p "refs/leases/$1" | field lease_token; }
ref() { git --git-dir="$TMPDIR/gh.git" rev-parse -q --verify "refs/leases/$1" || true; }
# the heartbeat files of a set (action/lib.mjs keeperFiles: its sorted names, hashed)
setkey() { printf '%s\n' "$@" | LC_ALL=C sort | sha256sum | cut -c1-32; }

# 1. a two-name acquire (a YAML block: one name a line), heartbeat true; post releases both
act '{"command":"acquire","name":"db\nprod\n","ttl":"60","heartbeat":"true"}'
expect 0 "set acquire"
is outputs.status acquired "set acquire: status"
hex outputs.lease-token 32 "set acquire: one token"
tok=$(q outputs.lease-token)
node -e 'const m = JSON.parse(process.argv[1]);
if (m.length !== 2 || m[0].name !== "db" || m[1].name !== "prod") throw new Error("names: " + process.argv[1]);
for (const x of m) if (x.status !== "acquired" || !/^[0-9a-f]{40}$/.test(x.oid)) throw new Error("member: " + JSON.stringify(x));
if (process.argv[1].includes(process.argv[2])) throw new Error("the members output carries the token");' \
  "$(q outputs.members)" "$tok" || fail "members output: $(q outputs.members)"
like outputs.expires-at '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$' "set acquire: expires-at"
like stdout 'set of 2: acquired' "set acquire: the set in the log"
like stdout '  prod: acquired, phase claimed' "set acquire: each member in the log"
like summary 'reflease acquire\*\* `db prod`: acquired' "set acquire: summary"
is annotations '[]' "set acquire: no annotation"
is state.name "db prod" "the set's names saved for the post stage"
is state.lease-token "$tok" "the set's token saved for the post stage"
for n in db prod; do
  [ "$(token_of "$n")" = "$tok" ] || fail "$n is not held with the set's token: $(status_json "$n")"
done
hbf="$RUNNER_TEMP/reflease-heartbeat.leases.set-$(setkey db prod)"
[ -f "$hbf.pid" ] || fail "no background heartbeat of the set ($hbf.pid)"
hbpid=$(cat "$hbf.pid")
alive "$hbpid" || fail "the set's background heartbeat is not running: $(cat "$hbf.log")"
tr '\0' ' ' <"/proc/$hbpid/cmdline" | grep -q '/reflease heartbeat --ttl 60 --every auto -- db prod $' ||
  fail "the background heartbeat is not the set's: $(tr '\0' ' ' <"/proc/$hbpid/cmdline")"
oids="$(ref db) $(ref prod)"
post
expect 0 "post of the set"
like stdout 'background heartbeat of db prod stopped \(exit 143\)' "post: the set's heartbeat stopped first"
like stdout 'set of 2: released' "post: the set released"
like stdout 'db prod released at the end of the job' "post: log"
like summary '`db prod`: released at the end of the job' "post: summary"
is annotations '[]' "post: no annotation"
alive "$hbpid" && fail "the set's heartbeat runs on after post"
for n in db prod; do
  [ "$(phase_of "$n")" = released ] || fail "post did not release $n: $(status_json "$n")"
done
[ "$oids" != "$(ref db) $(ref prod)" ] || fail "post wrote nothing"

# 2. a member another job holds stops the whole set; nothing is held afterwards
GITHUB_RUN_ID=2 HARNESS_STATE=$TMPDIR/other.json act '{"command":"acquire","name":"prod","ttl":"60"}'
expect 0 "another job holds prod"
ptok=$(token_of prod)
dboid=$(ref db)
HARNESS_STATE=$TMPDIR/blocked.json act '{"command":"acquire","name":"db prod","ttl":"60","heartbeat":"true"}'
expect 3 "a set with a held member"
is outputs.status held "blocked set: status"
is outputs.lease-token "" "blocked set: no token"
like stdout 'set of 2: held \(blocked by prod\)' "blocked set: the blocker in the log"
like annotations.0.message 'reflease acquire db prod: the lease is held \(exit 3\): the set is stopped by prod' "blocked set: annotation"
like outputs.members '"name":"prod","oid":"[0-9a-f]{40}"' "blocked set: members"
is state '{}' "blocked set: nothing saved for the post stage"
[ ! -e "$RUNNER_TEMP/reflease-heartbeat.leases.set-$(setkey db prod).pid" ] || fail "blocked set: a heartbeat started"
[ "$(ref db)" = "$dboid" ] || fail "blocked set: db was written"
[ "$(phase_of db)" = released ] || fail "blocked set: db is held: $(status_json db)"
[ "$(token_of prod)" = "$ptok" ] || fail "blocked set: prod changed hands"
post "$TMPDIR/blocked.json"
expect 0 "post of the blocked set"
[ "$(token_of prod)" = "$ptok" ] || fail "post of the blocked set touched prod"
act "{\"command\":\"release\",\"name\":\"prod\",\"lease-token\":\"$ptok\"}"
expect 0 "the other job releases prod"

# 3. heartbeat, transition, release steps of a set (comma-separated names)
HARNESS_STATE=$TMPDIR/steps.json act '{"command":"acquire","name":"db, prod","ttl":"60","heartbeat":"true","release-at-end":"false"}'
expect 0 "set acquire for steps"
tok=$(q outputs.lease-token)
hbf="$RUNNER_TEMP/reflease-heartbeat.leases.set-$(setkey db prod)"
hbpid=$(cat "$hbf.pid")
act "{\"command\":\"heartbeat\",\"name\":\"db, prod\",\"lease-token\":\"$tok\",\"ttl\":\"120\"}"
expect 0 "set heartbeat"
is outputs.status renewed "set heartbeat: status"
like stdout 'set of 2: renewed' "set heartbeat: log"
act "{\"command\":\"transition\",\"name\":\"db,prod\",\"lease-token\":\"$tok\",\"phase\":\"working\"}"
expect 0 "set transition"
is outputs.status transitioned "set transition: status"
for n in db prod; do [ "$(phase_of "$n")" = working ] || fail "transition: $n: $(status_json "$n")"; done
act '{"command":"release","name":"prod db"}' # no lease-token: the heartbeat's token, the set in another order
expect 0 "set release"
is outputs.status released "set release: status"
like stdout 'background heartbeat of prod db stopped \(exit 143\)' "set release stops the set's heartbeat"
alive "$hbpid" && fail "the set's heartbeat runs on after release"
for n in db prod; do [ "$(phase_of "$n")" = released ] || fail "release: $n: $(status_json "$n")"; done

# 4. refused before anything runs
before="$(ref db) $(ref prod)"
act '{"command":"acquire","name":"db prod","slots":"2"}'
expect 64 "several names with slots"
like annotations.0.message 'slots takes one name, not a set of 2 \(db prod\)' "slots with a set: said"
act '{"command":"run","name":"db prod","slots":"2","args":"true"}'
expect 64 "run: several names with slots"
act '{"command":"acquire","name":"db prod","wait":"5","fair":"true"}'
expect 64 "several names with fair"
like annotations.0.message 'fair: true queues for one lease, not a set of 2' "fair with a set: said"
act '{"command":"status","name":"db prod"}'
expect 64 "status of a set"
like annotations.0.message 'command status takes one name, not a set of 2' "status of a set: said"
act '{"command":"list","name":"db prod"}'
expect 0 "list ignores the name input, one name or several"
act '{"command":"acquire","name":"db\nb!d\nprod"}'
expect 64 "an invalid member"
like annotations.0.message "invalid lease name 'b!d'" "the invalid member is named"
act '{"command":"acquire","name":"db db"}'
expect 64 "a name twice (the binary's rule)"
like annotations.0.message "lease 'db' named twice in the set" "the binary's reason in the annotation"
[ "$before" = "$(ref db) $(ref prod)" ] || fail "a refused step wrote"

# 5. run with several names: every name before `--`, then the command
ap2="$TMPDIR/action-argv"
action_dir "$ap2"
rm "$ap2/build/bundle/bin/reflease"
cat >"$ap2/build/bundle/bin/reflease" <<EOF
#!/bin/sh
printf '%s\n' "\$@" >"$TMPDIR/argv"
exec "$REFLEASE" "\$@"
EOF
chmod +x "$ap2/build/bundle/bin/reflease"
ap_saved=$ap
ap=$ap2
printf 'echo "names:$REFLEASE_LEASE_NAMES"\n' >"$TMPDIR/names.sh"
act "{\"command\":\"run\",\"name\":\"db\\nprod\",\"ttl\":\"60\",\"args\":\"sh $TMPDIR/names.sh\"}"
ap=$ap_saved
if "$REFLEASE" run --help 2>&1 | grep -q 'run NAME \[NAME'; then
  tr '\n' ' ' <"$TMPDIR/argv" | grep -Eq "^run --ttl 60 --json-file [^ ]+/result\\.json -- db prod -- sh $TMPDIR/names.sh \$" ||
    fail "run with a set: argv $(tr '\n' ' ' <"$TMPDIR/argv")"
  expect 0 "run with a set"
  like stdout 'names:db prod' "the command ran holding the set"
  is outputs.status released "run with a set: released"
  like outputs.members '"name":"prod"' "run with a set: members"
  for n in db prod; do [ "$(phase_of "$n")" = released ] || fail "run: $n: $(status_json "$n")"; done
else
  echo "t_action_sets: this reflease's run keeps one lease (run NAME): a set run is refused, not run"
  expect 64 "run with a set on a binary whose run keeps one lease: a usage error"
  like annotations.0.message "this reflease's run keeps one lease" "said why"
  tr '\n' ' ' <"$TMPDIR/argv" | grep -Eq '^run --help $' || fail "the binary was run with: $(tr '\n' ' ' <"$TMPDIR/argv")"
fi

# 6. the set's keeper on a local store: renews every member, 143 on SIGTERM, 4 once lost
store="$TMPDIR/local.git"
"$REFLEASE" init "$store" >/dev/null
L() { REFLEASE_STORE="local:$store" REFLEASE_OWNER=${LOWNER:-loop} REFLEASE_HOST=h GITHUB_ACTIONS='' "$REFLEASE" "$@"; }
lref() { git --git-dir="$store" rev-parse "refs/leases/$1"; }
ltok=$(L acquire a b --ttl 6 --print-token)
oa=$(lref a) ob=$(lref b)
# as the action's keeper starts it: the token in the environment, the names after --
loop() {
  REFLEASE_LEASE_TOKEN=$ltok REFLEASE_STORE="local:$store" REFLEASE_OWNER=loop REFLEASE_HOST=h GITHUB_ACTIONS='' \
    "$REFLEASE" heartbeat --ttl 6 --every 2 -- a b >"$TMPDIR/loop.log" 2>&1 &
  echo $! >"$TMPDIR/loop.pid"
}
loop
i=0 # wait for the event (both members renewed), at most 10 s
while { [ "$(lref a)" = "$oa" ] || [ "$(lref b)" = "$ob" ]; } && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
{ [ "$(lref a)" != "$oa" ] && [ "$(lref b)" != "$ob" ]; } || fail "the set keeper renewed not both: $(cat "$TMPDIR/loop.log")"
L --json status a | grep -q '"status":"live"' || fail "a not live"
kill -TERM "$(cat "$TMPDIR/loop.pid")"
rc=0
wait "$(cat "$TMPDIR/loop.pid")" || rc=$?
[ "$rc" -eq 143 ] || fail "the set keeper ended $rc on SIGTERM: $(cat "$TMPDIR/loop.log")"
loop
L break b --force >/dev/null 2>&1 || fail "break b"
LOWNER=other L acquire b --ttl 60 >/dev/null || fail "another takes b"
rc=0
i=0
while alive "$(cat "$TMPDIR/loop.pid")" && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
wait "$(cat "$TMPDIR/loop.pid")" || rc=$?
[ "$rc" -eq 4 ] || fail "the set keeper ended $rc once b was taken over: $(cat "$TMPDIR/loop.log")"
grep -q 'reflease heartbeat: a b: lease lost: b: ' "$TMPDIR/loop.log" || fail "loss not said: $(cat "$TMPDIR/loop.log")"
rm -f "$TMPDIR/loop.pid"
[ ! -e "$root/action/heartbeat-set.sh" ] || fail "action/heartbeat-set.sh is back: the keeper is the CLI's"
echo "ok"
