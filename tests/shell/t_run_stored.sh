#!/bin/sh
# shellcheck disable=SC1091,SC2015,SC2086,SC2154  # sourced helpers (rc, P, D, TB set there); A && B || fail is intended; $R is a word list
# test: seconds 41
# `run`'s fence follows the stored lease, not its own last write (F31, issue 23,
# protocol.md §6 "The run guarantee"): CMD holds REFLEASE_LEASE_TOKEN and may
# write with it (`heartbeat --ttl 5`, "always due"), an administrator may
# break the lease: the keeper re-reads the stored lease every
# lease_keep_check_interval() (1 s on a local store) between heartbeats,
# adopts an earlier stored expiry (heartbeating at the pace it demands) and
# stops the tree at once when the lease is no longer its token's.
. "$(dirname "$0")/lease_lib.sh"
. "$(dirname "$0")/fence_lib.sh"

# bob_try CELL SECONDS: bob tries to acquire CELL every 50 ms for SECONDS;
# 0 with $TB (ms) when he got it, 1 when it stayed held all along.
bob_try() {
  end=$(($(date +%s) + $2))
  while [ "$(date +%s)" -lt "$end" ]; do
    set +e
    env REFLEASE_OWNER=bob REFLEASE_HOST=h2 $R acquire "$1" --ttl 30 >"$D/bob.out" 2>&1
    brc=$?
    set -e
    TB=$(now_ms)
    [ "$brc" -eq 0 ] && return 0
    [ "$brc" -eq 3 ] || { cat "$D/bob.out"; fail "$1: bob's acquire exit $brc"; }
    sleep 0.05
  done
  return 1
}

# CMD: write with the token first (`heartbeat --ttl $HBTTL`), then the `child`
# member of fence_lib.sh
OWN=$TMPDIR/own.sh
cat >"$OWN" <<EOF2
#!/bin/sh
$R heartbeat "\$REFLEASE_LEASE_NAME" --ttl "\$2" >"\$1/hb.out" 2>&1 || exit 9
exec sh "$TREE" child "\$1"
EOF2
# own_start CELL HBTTL: run --ttl 60 (every 20 s) with that CMD
own_start() {
  c=$1
  D=$TMPDIR/cell.$c
  mkdir -p "$D"
  RUNLOG=$D/run.err
  $R --json run "$c" --ttl 60 -- sh "$OWN" "$D" "$2" >"$D/run.out" 2>"$RUNLOG" &
  P=$!
  wait_until 20 "$c: CMD's member started" test -s "$D/child.stamp"
  grep -q renewed "$D/hb.out" || { cat "$D/hb.out"; fail "$c: CMD's heartbeat"; }
}

# ---- CMD's own `heartbeat --ttl 12`: before the fix run's next heartbeat came
# 20 s after its last one and bob acquired at 12 s while CMD ran (two
# holders). Now run adopts the stored expiry within a second, heartbeats with
# its own TTL before the stored lost deadline, and bob, polling past the
# 12 s, never gets the lease while CMD runs.
c=own-ttl12
own_start "$c" 12
if bob_try "$c" 16; then
  fence_check "$c" "$TB"
  fail "$c: bob acquired $c while run could keep it"
fi
alive "$(cat "$D/child.pid")" || { cat "$RUNLOG"; fail "$c: CMD was stopped although run could keep the lease"; }
$R status "$c" --json >"$TMPDIR/out"
[ "$(jout lease.ttl_seconds)" = 60 ] || fail "$c: stored ttl $(jout lease.ttl_seconds), want run's 60"
kill -TERM "$P"
wait_rc "$P"
[ "$rc" -eq 143 ] || { cat "$RUNLOG"; fail "$c: run exit $rc, want 143"; }

# ---- the field case: CMD's `heartbeat --ttl 5` (the local store's shortest
# TTL, too short for any heartbeat schedule of run's, §6). Before the fix bob
# acquired at 5.2 s and CMD ran until 10.1 s. Now run either keeps the lease
# (a heartbeat at once) or stops CMD before the stored expiry: whenever bob
# gets the lease, no member of CMD's tree ran after that.
c=own-ttl5
own_start "$c" 5
if bob_try "$c" 12; then
  fence_check "$c" "$TB"
  wait_rc "$P"
  [ "$rc" -eq 4 ] || { cat "$RUNLOG"; fail "$c: run exit $rc, want 4"; }
else
  alive "$(cat "$D/child.pid")" || { cat "$RUNLOG"; fail "$c: CMD stopped, but the lease is not free"; }
  kill -TERM "$P"
  wait_rc "$P"
fi

# ---- a break under run --ttl 60 (every 20 s): lost at the next re-read (1 s),
# not at the next heartbeat up to 20 s later; CMD is stopped at once
c=broken
fence_start "$c" all 60
fence_break "$c"
# kill_grace (10 s) covers the TERM-ignoring member; the lost lease is seen
# within the re-read pace (1 s) plus load slack, far from the 20 s interval
[ $((texit - tbreak)) -lt 15000 ] || fail "$c: run ended $((texit - tbreak)) ms after the break"
grep -q 'the stored lease is released' "$RUNLOG" || { cat "$RUNLOG"; fail "$c: message"; }
echo ok
