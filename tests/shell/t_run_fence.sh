#!/bin/sh
# shellcheck disable=SC1091,SC2015,SC2086,SC2046,SC2154,SC2030,SC2031  # sourced helpers (rc, P, D, TB set there); A && B || fail is intended; $R and $(ft_env) are word lists; a background cell sets its own TMPDIR in its subshell
# test: seconds 40
# test: quiet (a real-time claim; uses under one CPU: run.sh runs it beside at most one other quiet test)
# The `run` fence on the local store (protocol.md §6 "The run guarantee",
# F01, F14, F21): for every way the lease can be lost or `run` can end, no
# process of CMD's tree — the direct child, a grandchild, a member ignoring
# SIGTERM, a member in its own session — runs after another owner's acquire
# returned, and `run` releases only after the whole tree is gone. The cells
# (loss cause × tree shape) are in fence_lib.sh; TTL 9 s (renewed 1 s after each write, the floor;
# kill_grace 1.5 s) unless a cell says otherwise. The cells that wait for an
# expiry, and the signal cells, run in the background beside the others
# (below).
. "$(dirname "$0")/lease_lib.sh"
. "$(dirname "$0")/fence_lib.sh"
[ -n "$FTLIB" ] || fail "libfaketime is required (scripts/install-deps.sh)"
# want_rc WANT [WHAT]: run's status ($rc) is WANT, else its log and a failure
# naming WHAT (default WANT); run_exits WANT [WHAT]: wait for run ($P) first
want_rc() { [ "$rc" -eq "$1" ] || { cat "$RUNLOG"; fail "$c: run exit $rc, want ${2:-$1}"; }; }
run_exits() { wait_rc "$P"; want_rc "$@"; }
t_start=$(date +%s)

# ---- The cells that wait for an expiry (about 8 s each: hbfail, stopped,
# clockback), and the 13 signal cells one after the other
# (about 1 s each; their claims are orderings, not bounds), run in the
# background beside the others, each in a subshell with a TMPDIR of its own
# (its cell directory, $TMPDIR/out, the JSON it parses); they share the
# store. A failed background cell's FAIL line and output are printed when the
# sequence below is done. The expiry cells' bob waits for the lease
# (`acquire --wait`: one process, woken by inotify at a release and at the
# expiry instant otherwise, where a polling bob would exec acquire 20 times a
# second for 6 s), and their tree is checked against the lease's expiry as
# well as against bob's acquire: the claim is "gone before the expiry".
# bob_wait CELL SECONDS: bob takes CELL (`acquire --wait SECONDS`); $TB = ms
# time right after it returned success
bob_wait() {
  set +e
  env REFLEASE_OWNER=bob REFLEASE_HOST=h2 $R acquire "$1" --ttl 30 --wait "$2" >"$D/bob.out" 2>&1
  brc=$?
  set -e
  TB=$(now_ms)
  [ "$brc" -eq 0 ] || { cat "$D/bob.out" "$RUNLOG"; fail "$1: bob's acquire --wait $2: exit $brc"; }
}
# expiry_ms CELL: expires_at (ms) of the payload bob's acquire replaced; when
# that is run's release after it gave up at the lost deadline (issue 40 B67:
# the lease was still live with its token), the held payload before it (a
# release's expires_at is its writer's now, an hour back under clockback)
expiry_ms() {
  em_ref="refs/leases/$1^"
  git --git-dir="$S" log -1 --format=%b "$em_ref" | head -n 1 | grep -q '"phase":"released"' && em_ref="$em_ref^"
  ex=$(git --git-dir="$S" log -1 --format=%b "$em_ref" | head -n 1 | jget expires_at)
  echo $(($(date -u -d "$ex" +%s) * 1000))
}

# heartbeats that fail (a stale ref lock: every write is refused): lost at
# the deadline, the tree is gone before the expiry; bob takes over after it
cell_hbfail() {
  c=hbfail
  fence_start "$c" all 9
  : >"$S/refs/leases/$c.lock"
  wait_rc "$P"
  rm -f "$S/refs/leases/$c.lock"
  want_rc 4
  bob_wait "$c" 20
  fence_check "$c" "$TB"
  fence_check "$c" "$(expiry_ms "$c")"
}

# run stopped (SIGSTOP: a stalled holder, F14): its guard's own watchdog
# kills the tree before the expiry; bob takes over; run, continued, exits 4
cell_stopped() {
  c=stopped
  fence_start "$c" all 9
  kill -STOP "$P"
  bob_wait "$c" 20
  fence_check "$c" "$TB"
  fence_check "$c" "$(expiry_ms "$c")"
  kill -CONT "$P"
  run_exits 4
}

# the holder's wall clock steps back an hour (another host's does not): its
# heartbeats are `not_due` in its own time, but the lease expires in real
# time; the CLOCK_BOOTTIME deadline stops the tree before the real expiry and
# bob (real clock) takes over after it
cell_clockback() {
  c=clockback
  clock_to "$TMPDIR/clock.back" +0
  fence_start "$c" all 9 $(ft_env "$TMPDIR/clock.back")
  clock_to "$TMPDIR/clock.back" -3600
  bob_wait "$c" 20
  fence_check "$c" "$TB"
  fence_check "$c" "$(expiry_ms "$c")"
  run_exits 4
}

# small TTLs: heartbeats land before the lost deadline (exit 0), or the TTL
# is refused up front (exit 64, nothing written, the reason named). Run last,
# after the background cells: every fsync'd write of the other cells on the
# same store and disk is in the heartbeats' way. Issue 40 B67: at TTL 6 a
# heartbeat had 1 s before run's watchdog and a loaded machine lost an
# uncontended lease; TTLs under 9 s (less than two attempts between the floor
# and the lost deadline, protocol.md §6) are refused.
cell_small() {
  for args in "--ttl 9" "--ttl 10 --every 3" "--ttl 12 --every 4" "--ttl 14 --every 5"; do
    n=small$(echo "$args" | tr -dc 0-9)
    $R run "$n" $args -- sleep 8 >"$TMPDIR/$n.out" 2>"$TMPDIR/$n.err" &
    eval "p_$n=$!"
  done
  for args in "--ttl 9" "--ttl 10 --every 3" "--ttl 12 --every 4" "--ttl 14 --every 5"; do
    n=small$(echo "$args" | tr -dc 0-9)
    eval "wait_rc \$p_$n"
    [ "$rc" -eq 0 ] || { cat "$TMPDIR/$n.err"; fail "run $args -- sleep 8: exit $rc, want 0"; }
  done
  expect_rc 64 $R run small5 --ttl 5 -- true
  grep -q 'too short for run' "$TMPDIR/err" || fail "ttl 5: message"
  ! refs | grep -q small5 || fail "ttl 5 wrote a ref"
  # B67: TTL 8 refused with the reason (the window, the two attempts)
  expect_rc 64 $R run small8 --ttl 8 -- true
  grep -q 'too short for run: .*leaves 3.7 s, less than the 4 s two attempts need' "$TMPDIR/err" ||
    fail "B67: ttl 8: message $(cat "$TMPDIR/err")"
  ! refs | grep -q small8 || fail "ttl 8 wrote a ref"
}

# every catchable terminating signal to run: forwarded to the whole tree,
# SIGKILL after min(kill_grace, 3 s), then released; exit 128 + signal.
# bob polls from the moment the signal is sent (a real race with the release).
cell_signals() {
  for cs in TERM:15 INT:2 HUP:1 QUIT:3 ABRT:6 USR1:10 USR2:12 ALRM:14 PIPE:13 XCPU:24 XFSZ:25 VTALRM:26 PROF:27; do
    sig=${cs%%:*}
    c=sig-$sig
    fence_start "$c" all 9 env --default-signal=INT,QUIT
    kill -"$sig" "$P"
    bob_poll "$c" 10
    fence_check "$c" "$TB"
    run_exits $((128 + ${cs#*:}))
    run_json
    [ "$(jv reason)" = interrupted ] && [ "$(jv status)" = released ] || fail "$c: $(tail -n 1 "$RUNLOG")"
  done
}

BG="hbfail stopped clockback signals"
for b in $BG; do
  (TMPDIR=$TMPDIR/bg.$b && mkdir "$TMPDIR" && "cell_$b") >"$TMPDIR/bg.$b.log" 2>&1 &
  eval "bg_$b=$!"
done

# ---- SIGKILL of run (the OOM killer, a runner cancel; F01) × every shape:
# the guard outlives run and kills the tree; bob takes over after expiry.
for shape in child grandchild noterm setsid; do
  c=kill9-$shape
  fence_start "$c" "$shape" 9
  kill -KILL "$P"
  wait_rc "$P"
  bob_poll "$c" 20
  fence_check "$c" "$TB"
done

# ---- SIGTERM to run with each shape of tree (bob polls as above)
for shape in child grandchild noterm setsid; do
  c=term-$shape
  fence_start "$c" "$shape" 9
  kill -TERM "$P"
  bob_poll "$c" 10
  fence_check "$c" "$TB"
  run_exits 143
done

# ---- CMD exits and leaves members running (a daemon, a TERM-ignoring
# background job): they are stopped before the release (F08); run exits with
# CMD's status; bob polls all along
c=leftover
fence_start "$c" leftover 9
bob_poll "$c" 10
fence_check "$c" "$TB"
run_exits 7 "CMD's 7"

# ---- the guard stopped (SIGSTOP) when the lease is lost: run kills its whole
# subtree itself (the guard included) 1 s after the SIGKILL was due; exit 4
c=guardstop
fence_start "$c" all 9
G=$(guard_of "$P")
[ -n "$G" ] || fail "$c: no guard process"
kill -STOP "$G"
expect_rc 0 env REFLEASE_OWNER=admin $R break "$c" --force
wait_rc "$P"
texit=$(now_ms)
want_rc 4
fence_check "$c" "$texit"
! alive "$G" || fail "$c: the guard survived"

# ---- break --force (F21): lost at the next heartbeat; run exits 4 only once
# the tree is gone, within every + kill_grace (+ load slack) of the break.
# (A break hands the lease over at once: the residual of protocol.md §5.)
for shape in all setsid; do
  c=break-$shape
  fence_start "$c" "$shape" 9
  fence_break "$c"
  [ $((texit - tbreak)) -lt 6000 ] || fail "$c: run took $((texit - tbreak)) ms after the break"
  run_json
  [ "$(jv reason)" = lost ] && [ "$(jv status)" = not_holder ] || fail "$c: json"
done

# ---- a permanent heartbeat error (another writer left a malformed payload on
# the ref): lost at once, exit 65 once the tree is gone
c=garbage
fence_start "$c" all 9
garbage_tip "$c"
want_rc 65
fence_check "$c" "$texit"

# ---- SIGKILL of the guard: CMD dies with it, the rest of the tree
# re-parents to run (a subreaper), which kills it, releases, exits 70
c=guard9
fence_start "$c" all 9
G=$(guard_of "$P")
[ -n "$G" ] || fail "$c: no guard process"
kill -KILL "$G"
bob_poll "$c" 10
fence_check "$c" "$TB"
run_exits 70

# ---- the holder's wall clock steps forward an hour (an NTP step, a resume:
# store time and CLOCK_BOOTTIME diverge) while its heartbeats hang on a
# locked ref: the store-time check stops the tree at once (SIGKILL, the
# lease's time is past), not at the BOOTTIME deadline ~20 s later
c=clockfwd
clock_to "$TMPDIR/clock.fwd" +0
fence_start "$c" all 30 $(ft_env "$TMPDIR/clock.fwd")
: >"$S/refs/leases/$c.lock"
clock_to "$TMPDIR/clock.fwd" +3600
tstep=$(now_ms)
wait_rc "$P"
rm -f "$S/refs/leases/$c.lock"
want_rc 4
fence_check "$c" $((tstep + 2000))
expect_rc 0 env REFLEASE_OWNER=admin $R break "$c" --force
bob_poll "$c" 10
fence_check "$c" "$TB"

# ---- the background cells' results
for b in $BG; do
  eval "wait_rc \$bg_$b"
  cat "$TMPDIR/bg.$b.log"
  [ "$rc" -eq 0 ] || fail "background cell $b: exit $rc (its output above)"
done

# ---- the small TTLs, alone (above)
cell_small

echo "fence matrix (local): $(($(date +%s) - t_start)) s"
echo ok
