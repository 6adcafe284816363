#!/bin/sh
# shellcheck disable=SC1091,SC2015,SC2086,SC2154  # sourced helpers; A && B || fail is intended; $R is a word list
# test: seconds 34
# `heartbeat --every --release-on-exit` handles every catchable terminating
# signal the way `run` does (F35, F36, issue 23, protocol.md §6): it releases, then
# exits 128 + signal; and losing its output reader (SIGPIPE / EPIPE on
# stdout) is no reason to stop renewing or to skip the release.
. "$(dirname "$0")/lease_lib.sh"
. "$(dirname "$0")/fence_lib.sh"

# keeper NAME: heartbeat --every 2 --release-on-exit on a fresh 10 s lease
# (SIGINT/SIGQUIT back to their default: a background job of a
# non-interactive shell starts with them ignored), stdout to $TMPDIR/NAME.out;
# $HP its pid, once its handlers are in
keeper() {
  t=$(tok "$1" --ttl 10)
  env --default-signal=INT,QUIT $R heartbeat "$1" --lease-token "$t" --every 2 --release-on-exit \
    >"${2:-$TMPDIR/$1.out}" 2>"$TMPDIR/$1.err" &
  HP=$!
  wait_until 20 "$1: the keeper's handlers" catches "$HP" 15
}
HP=""
trap '[ -z "$HP" ] || kill -KILL "$HP" 2>/dev/null || true' EXIT # a failed cell leaves no keeper
released() { [ "$("$R" status "$1" --json | jget status)" = released ]; }

for cs in HUP:1 INT:2 QUIT:3 USR1:10 USR2:12 PIPE:13 ALRM:14 TERM:15 XCPU:24 VTALRM:26 PROF:27; do
  sig=${cs%%:*}; n=${cs#*:}
  c=hb-$sig
  keeper "$c"
  catches "$HP" "$n" || fail "$c: SIG$sig is not handled"
  kill -"$sig" "$HP"
  wait_rc "$HP"
  [ "$rc" -eq $((128 + n)) ] || fail "$c: exit $rc, want $((128 + n)): $(cat "$TMPDIR/$c.err")"
  released "$c" || fail "$c: not released after SIG$sig"
done

# ---- the output reader goes away after the first line (`| head -n 1`):
# before the fix the next write killed the keeper by SIGPIPE (exit 141, the
# lease left held); now it keeps renewing, and a SIGTERM still releases
c=hb-reader
mkfifo "$TMPDIR/fifo"
head -n 1 <"$TMPDIR/fifo" >"$TMPDIR/first" &
keeper "$c" "$TMPDIR/fifo"
wait_until 20 "$c: the reader's first line" test -s "$TMPDIR/first"
oid0=$(git --git-dir="$S" rev-parse "refs/leases/$c")
# two more heartbeats land after the reader is gone (every 2 s; each output
# write fails with EPIPE): the tip moves twice (a heartbeat replaces the one
# before it, protocol.md §2, so the chain need not grow)
wait_until 20 "$c: a renewal after the reader left" sh -c \
  "[ \"\$(git --git-dir='$S' rev-parse refs/leases/$c)\" != $oid0 ]"
oid1=$(git --git-dir="$S" rev-parse "refs/leases/$c")
wait_until 20 "$c: a second renewal after the reader left" sh -c \
  "[ \"\$(git --git-dir='$S' rev-parse refs/leases/$c)\" != $oid1 ]"
alive "$HP" || { wait_rc "$HP"; fail "$c: the keeper died (exit $rc) when its reader left"; }
kill -TERM "$HP"
wait_rc "$HP"
[ "$rc" -eq 143 ] || fail "$c: exit $rc, want 143: $(cat "$TMPDIR/$c.err")"
released "$c" || fail "$c: not released"

# ---- a wait in a background job of this (non-interactive) script: SIGINT is
# ignored there and stays ignored; SIGTERM ends the wait at once (cli.md)
c=bgwait
tok "$c" --ttl 60 >/dev/null
$R acquire "$c" --wait 60 >"$TMPDIR/bg.out" 2>"$TMPDIR/bg.err" &
BP=$!
wait_until 20 "$c: the wait's handlers" catches "$BP" 15
! catches "$BP" 2 || fail "$c: SIGINT, ignored in a background job, was given a handler"
kill -TERM "$BP"
wait_rc "$BP"
[ "$rc" -eq 143 ] || fail "$c: exit $rc, want 143"

# ---- the docs say so, and name `--wait forever` for run too (issue 23)
root=$(cd "$(dirname "$0")/../.." && pwd)
$R help run | grep -q "'forever' waits without a limit" || fail "help run omits --wait forever"
runman=$(sed -n '/^\.BI run /,/^\.TP/p' "$root/docs/reflease.1")
echo "$runman" | grep -q 'wait forever' || fail "the man page's run entry omits --wait forever"
grep -q 'stop such a wait with SIGTERM' "$root/docs/cli.md" || fail "cli.md: SIGTERM for a background wait"
echo ok
