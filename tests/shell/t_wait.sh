#!/bin/sh
# shellcheck disable=SC1091  # sourced helper
# acquire --wait and run --wait on a local store (issue 18): the waiter wakes
# on the release (inotify) and holds the lease soon after it, whatever the
# hold time — no backoff to wait out. Real processes; bounds are generous
# for a loaded machine (the benchmark, `make bench-handoff`, measures).
. "$(dirname "$0")/lease_lib.sh"

now() { date +%s.%N; }
# wait_for FILE PATTERN: until FILE shows PATTERN (60 s at most)
wait_for() {
  i=0
  until grep -q "$2" "$1" 2>/dev/null; do
    i=$((i + 1)); [ "$i" -le 3000 ] || fail "no '$2' in $1 after 60 s"; sleep 0.02
  done
}
# handoff HOLD_S CMD...: alice holds x for HOLD_S s after the waiter (CMD, as
# bob) started waiting, then releases; prints the seconds from the end of
# the release to the end of CMD
handoff() {
  hold=$1; shift
  t=$(tok x --ttl 600)
  rm -f "$TMPDIR/w.err" "$TMPDIR/w.done"
  ( REFLEASE_OWNER=bob REFLEASE_LOG=info "$@" >"$TMPDIR/w.out" 2>"$TMPDIR/w.err"
    echo "$? $(now)" >"$TMPDIR/w.done" ) &
  wait_for "$TMPDIR/w.err" "waiting up to"
  sleep "$hold" # the holder's work
  "$R" release x --lease-token "$t" >/dev/null
  rel=$(now)
  wait
  read -r rc end <"$TMPDIR/w.done"
  [ "$rc" -eq 0 ] || { cat "$TMPDIR/w.err" >&2; fail "waiter exit $rc: $*"; }
  # one wait for a change, ended by the release (no backoff steps)
  [ "$(grep -c 'waiting up to' "$TMPDIR/w.err")" -eq 1 ] || { cat "$TMPDIR/w.err" >&2; fail "more than one wait"; }
  python3 -c "print('%.3f' % ($end - $rel))"
}

for hold in 0 3; do
  h=$(handoff "$hold" "$R" acquire x --wait 120 --ttl 60)
  echo "acquire --wait after a ${hold} s hold: handoff ${h} s"
  python3 -c "import sys; sys.exit(0 if $h < 2.0 else 1)" || fail "acquire --wait handoff $h s"
  "$R" release x --lease-token "$(awk '/^lease_token:/ { print $2 }' "$TMPDIR/w.out")" >/dev/null
done
h=$(handoff 1 "$R" run x --wait 120 -- true)
echo "run --wait after a 1 s hold: handoff ${h} s (run includes CMD and the release)"
python3 -c "import sys; sys.exit(0 if $h < 3.0 else 1)" || fail "run --wait handoff $h s"
expect_rc 0 "$R" status x --json
[ "$(jout status)" = released ] || fail "run did not release"
echo "t_wait: ok"
