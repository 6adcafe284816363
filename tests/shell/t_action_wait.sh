#!/bin/sh
# test: seconds 35
# Issue 42 item 4 done-when: "a wait of 130 s behind a holder prints at least
# 2 progress lines naming the holder" — at default verbosity, one line when
# the wait begins and one each minute after (cli.md "--wait S", the library's
# progress report), on the CLI's stderr:
#   reflease acquire: waiting for X: held by OWNER@HOST until RFC3339
# and the same line in the log of the Action's main stage (command acquire,
# wait 130; with fair true, its place in the queue after it). Only the observable lines are checked. No real 130 s: time runs
# 20 times faster (libfaketime FAKETIME="+0 x20") for every waiting reflease
# of the test (the CLI's directly, the Action's through its bundle's binary);
# the holder, the fake GitHub and the Action's Node run in real time.
# The CLI on a local store (inotify and polls) and on the fake GitHub (2 s
# conditional reads); the Action on the fake.
# shellcheck disable=SC1091,SC2154,SC2015 # sourced helpers; root, log, fpid and base come from them; A && B || fail is intended
set -eu
. "$(dirname "$0")/lease_lib.sh"
. "$(dirname "$0")/action_lib.sh"
[ -n "$FTLIB" ] || fail "libfaketime is required (scripts/install-deps.sh)"
line='waiting for X: held by bob@h2 until [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$'

# lines FILE PREFIX: the progress lines of FILE (PREFIX then $line), at least
# 2, every one naming the holder; at most 4 (130 s: at 0, 60 and 120 s, and
# one more for a wait that began just before a minute's tick)
lines() {
  n=$(grep -Ec "^$2$line" "$1" || true)
  all=$(grep -c 'waiting for X' "$1" || true)
  [ "$n" -ge 2 ] && [ "$n" -le 4 ] && [ "$all" -eq "$n" ] ||
    fail "$n progress lines naming bob@h2 of $all in a wait of 130 s ($3), want 2-4: $(cat "$1")"
  echo "$3: $n progress lines"
}

# --- the CLI on a local store ------------------------------------------------
"$R" --owner bob --host h2 acquire X --ttl 600 >/dev/null
t0=$(now_ms)
set +e
LD_PRELOAD=$FTLIB FAKETIME="+0 x20" "$R" acquire X --wait 130 >"$TMPDIR/l.out" 2>"$TMPDIR/l.err"
rc=$?
set -e
[ "$rc" -eq 3 ] || fail "local: acquire --wait 130 behind a holder: exit $rc, want 3: $(cat "$TMPDIR/l.err")"
el=$(($(now_ms) - t0))
[ "$el" -lt 20000 ] || fail "local: the wait took $el ms, not accelerated"
lines "$TMPDIR/l.err" 'reflease acquire: ' "CLI, local:"

# --- the CLI and the Action on the fake GitHub --------------------------------
action_setup
action_dir "$TMPDIR/action-path"
CANARY="ghs_WAITcanary0123456789abcdefCANARY"
trap action_cleanup EXIT INT TERM
# the fake in real time: a waiter's wall clock then runs ahead of the
# store's, never behind it (a store clock ahead of the waiter's ends the wait
# at once: the library counts the store's elapsed time from before it knew
# the store's clock; see the report of this change)
action_fakegh "$CANARY"
# the Action's reflease on the fast clock (same pid: the bundle's binary execs it)
rm "$ap/build/bundle/bin/reflease"
printf '#!/bin/sh\nLD_PRELOAD=%s FAKETIME="+0 x20" exec %s "$@"\n' "$FTLIB" "$REFLEASE" >"$ap/build/bundle/bin/reflease"
chmod +x "$ap/build/bundle/bin/reflease"
export REFLEASE_GITHUB_TOKEN=$CANARY
"$REFLEASE" --store github:octo/leases --owner bob --host h2 acquire X --ttl 3600 >/dev/null 2>>"$log" ||
  fail "bob's acquire on the fake"
set +e
LD_PRELOAD=$FTLIB FAKETIME="+0 x20" "$REFLEASE" --store github:octo/leases acquire X --wait 130 \
  >"$TMPDIR/g.out" 2>"$TMPDIR/g.err"
rc=$?
set -e
unset REFLEASE_GITHUB_TOKEN
[ "$rc" -eq 3 ] || fail "github: acquire --wait 130 behind a holder: exit $rc, want 3: $(cat "$TMPDIR/g.err")"
lines "$TMPDIR/g.err" 'reflease acquire: ' "CLI, github:"

act '{"command":"acquire","name":"X","wait":"130"}'
expect 3 "the Action's acquire behind bob"
is outputs.acquired false "acquired"
q stderr >"$TMPDIR/a.err"
lines "$TMPDIR/a.err" 'reflease acquire: ' "Action, main stage"
# a fair wait says its place in the queue too (the first in it: position 1)
act '{"command":"acquire","name":"X","wait":"130","fair":"true"}'
expect 3 "the Action's fair acquire behind bob"
q stderr >"$TMPDIR/f.err"
sed -i 's/ (queue position 1)$//' "$TMPDIR/f.err"
[ "$(q stderr | grep -c ' (queue position 1)$')" -ge 2 ] || fail "fair: no queue position in the progress lines: $(q stderr)"
lines "$TMPDIR/f.err" 'reflease acquire: ' "Action, fair wait"
grep -q "$CANARY" "$log" "$TMPDIR/g.err" && fail "the token was printed"
echo ok
