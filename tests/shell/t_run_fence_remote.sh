#!/bin/sh
# shellcheck disable=SC1091,SC2015,SC2086,SC2046,SC2154  # sourced helpers (rc, P, D, TB set there); A && B || fail is intended; $R and $(ft_env) are word lists
# test: seconds 32
# The `run` fence on a `remote:` store served by git daemon on 127.0.0.1
# (protocol.md §6 "The run guarantee", F01, F21): the cells of
# t_run_fence.sh whose behaviour depends on the store — its transport, its
# time base (this host's clock), its TTL minimum of 60 s (every 20 s,
# kill_grace 10 s) and skew margin of 30 s. Waiting out a 60 s lease would be
# slow: once the tree is gone, the clock of run and bob (one shared clock,
# libfaketime's FAKETIME_TIMESTAMP_FILE) is moved instead.
. "$(dirname "$0")/lease_lib.sh"
. "$(dirname "$0")/fence_lib.sh"
[ -n "$FTLIB" ] || fail "libfaketime is required (scripts/install-deps.sh)"
t_start=$(date +%s)
unset http_proxy HTTP_PROXY https_proxy HTTPS_PROXY all_proxy ALL_PROXY 2>/dev/null || true

root=$TMPDIR/srv
mkdir -p "$root"
"$REFLEASE" init "$root/s.git" >/dev/null
dpid=""
trap '[ -z "$dpid" ] || kill "$dpid" 2>/dev/null || true' EXIT INT TERM
# start_daemon [PORT]: git daemon on 127.0.0.1 ($port; the first free one of a
# few when none is given)
start_daemon() {
  for p in ${1:-$((20000 + $$ % 20000)) $((20001 + $$ % 20000)) $((20002 + $$ % 20000))}; do
    git daemon --enable=receive-pack --export-all --reuseaddr --base-path="$root" \
      --listen=127.0.0.1 --port="$p" "$root" >>"$TMPDIR/daemon.log" 2>&1 &
    dpid=$!
    i=0
    while [ $i -lt 100 ]; do
      git ls-remote "git://127.0.0.1:$p/s.git" >/dev/null 2>&1 && { port=$p; return 0; }
      kill -0 "$dpid" 2>/dev/null || break
      sleep 0.05; i=$((i + 1))
    done
    kill "$dpid" 2>/dev/null || true; dpid=""
  done
  fail "git daemon did not start"
}
stop_daemon() { kill "$dpid"; wait "$dpid" 2>/dev/null || true; dpid=""; }
start_daemon
# shellcheck disable=SC2034 # R is read by fence_lib.sh (fence_start, fence_break)
R="$REFLEASE --store remote:git://127.0.0.1:$port/s.git --verify-timeout 1"
clock_to "$TMPDIR/clock" +0
CLK=$(ft_env "$TMPDIR/clock")
BOB_TTL=60 # read by bob_poll (fence_lib.sh)
export BOB_TTL

# wait_gone CELL SECONDS: every member of the tree has died
wait_gone() {
  i=0
  for f in "$D"/*.pid; do
    while alive "$(cat "$f")"; do
      i=$((i + 1)); [ $i -lt $(($2 * 20)) ] || fail "$1: member $(basename "$f" .pid) still alive"
      sleep 0.05
    done
  done
}

# ---- signals to run: forwarded to the whole tree (the TERM-ignoring member
# is SIGKILLed after min(kill_grace, 3 s)), then released; bob polls the
# remote from the moment the signal is sent
for cs in TERM:15 USR1:10; do
  sig=${cs%%:*}
  c=rsig-$sig
  fence_start "$c" all 60
  kill -"$sig" "$P"
  bob_poll "$c" 20
  fence_check "$c" "$TB"
  wait_rc "$P"
  [ "$rc" -eq $((128 + ${cs#*:})) ] || { cat "$RUNLOG"; fail "$c: run exit $rc"; }
done

# ---- SIGKILL of run (F01): the guard kills the tree (SIGTERM, SIGKILL after
# kill_grace); the lease is left to expire: then bob takes over
c=rkill9
fence_start "$c" all 60 $CLK
kill -KILL "$P"
wait_rc "$P"
wait_gone "$c" 20
clock_to "$TMPDIR/clock" +100 # past expires_at + skew margin (30 s)
bob_poll "$c" 20 $CLK
fence_check "$c" "$TB"
clock_to "$TMPDIR/clock" +0

# ---- the store stops answering (git daemon gone): heartbeats fail until the
# lost deadline expires_at − 12 s (reached by moving the shared clock 47 s);
# run exits 4 only once the tree is gone; bob takes over after the expiry
c=runreach
fence_start "$c" all 60 $CLK
stop_daemon
clock_to "$TMPDIR/clock" +47
wait_rc "$P"
texit=$(now_ms)
[ "$rc" -eq 4 ] || { cat "$RUNLOG"; fail "$c: run exit $rc, want 4"; }
fence_check "$c" "$texit"
start_daemon "$port"
clock_to "$TMPDIR/clock" +200
bob_poll "$c" 20 $CLK
fence_check "$c" "$TB"
clock_to "$TMPDIR/clock" +0

# ---- break --force (F21): lost at the next heartbeat written (--every 2;
# the floor lets one land every 6 s); exit 4 once the tree is gone
c=rbreak
RUN_EXTRA="--every 2" fence_start "$c" setsid 60
fence_break "$c"
echo "$c: run ended $((texit - tbreak)) ms after the break"

echo "fence matrix (remote): $(($(date +%s) - t_start)) s"
echo ok
