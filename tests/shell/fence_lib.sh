# shellcheck shell=sh disable=SC2034,SC2086,SC2154  # sourced: P, rc, TB, D are the callers'; $R is a word list; wait_rc, now_ms from lease_lib.sh
# Helpers of the `run` fence matrix (t_run_fence*.sh; sourced, not a test).
# protocol.md §6 "The run guarantee": when anyone else can take the lease
# over, no process of CMD's tree is alive. Every cell starts `run` with a tree
# of a given shape; each member of the tree writes a timestamp (ms, real
# clock) every 50 ms; the cell applies a loss cause; another owner (bob)
# polls `acquire` every 50 ms; the cell then checks, from the timestamps, that
# no member ran after bob's acquire returned, and that none is alive.
# Needs: R (the binary as a command, may carry --store), BUILD (build/tools/stamp), TMPDIR, fail().

# The tree (CMD). tree.sh SHAPE DIR:
#   child      CMD itself is the member
#   grandchild CMD (a shell) waits on the member: run's grandchild
#   noterm     CMD waits on a member that ignores SIGTERM
#   setsid     CMD waits on a member in its own session
#   all        all four at once (CMD execs into the `child` member)
#   leftover   CMD starts a TERM-ignoring member and a setsid one, exits 7
TREE=$TMPDIR/tree.sh
# A member is the shell of its tree position exec'd into $BUILD/tools/stamp
# (same pid; an ignored SIGTERM stays ignored), which writes the real time
# every 50 ms: one process, not three execs per stamp.
cat >"$TREE" <<'EOF'
#!/bin/sh
shape=$1; D=$2; self=$0
member() { # member NAME [noterm]
  unset LD_PRELOAD FAKETIME_TIMESTAMP_FILE FAKETIME_NO_CACHE FAKETIME_DONT_FAKE_MONOTONIC
  [ "${2:-}" = noterm ] && trap '' TERM
  echo $$ >"$D/$1.pid"
  exec "$BUILD/tools/stamp" "$D/$1.stamp" 50
}
case $shape in
  member) member "$3" "${4:-}" ;;
  child) member child ;;
  grandchild) sh "$self" member "$D" grand; : ;;
  noterm) sh "$self" member "$D" noterm noterm; : ;;
  setsid) setsid sh "$self" member "$D" sess & wait; : ;;
  all)
    sh "$self" member "$D" grand &
    sh "$self" member "$D" noterm noterm &
    setsid sh "$self" member "$D" sess &
    member child ;;
  leftover)
    sh "$self" member "$D" noterm noterm &
    setsid sh "$self" member "$D" sess &
    while [ ! -s "$D/noterm.stamp" ] || [ ! -s "$D/sess.stamp" ]; do sleep 0.05; done
    exit 7 ;;
esac
EOF

members_of() {
  case $1 in
    child) echo child ;; grandchild) echo grand ;; noterm) echo noterm ;;
    setsid) echo sess ;; all) echo child grand noterm sess ;; leftover) echo noterm sess ;;
  esac
}


# fence_start CELL SHAPE TTL [env-prefix...]: `run CELL --ttl TTL` with the
# tree in the background (with $RUN_EXTRA's options; $P its pid, $D the stamp directory, $RUNLOG its
# stderr); returns once every member has stamped.
fence_start() {
  cell=$1; shape=$2; fttl=$3; shift 3
  D=$TMPDIR/cell.$cell
  rm -rf "$D"; mkdir -p "$D"
  RUNLOG=$D/run.err
  "$@" $R --json run "$cell" --ttl "$fttl" ${RUN_EXTRA:-} -- sh "$TREE" "$shape" "$D" >"$D/run.out" 2>"$RUNLOG" &
  P=$!
  for m in $(members_of "$shape"); do
    i=0
    while [ ! -s "$D/$m.stamp" ]; do
      i=$((i + 1)); [ $i -lt 400 ] || { cat "$RUNLOG"; fail "$cell: member $m did not start"; }
      sleep 0.05
    done
  done
}

# the guard (run's only child) of run $1
guard_of() { cat /proc/"$1"/task/*/children 2>/dev/null | tr ' ' '\n' | grep -m1 . || true; }

# bob_poll CELL SECONDS [env-prefix...]: bob acquires CELL, trying every
# 50 ms (exit 3 = still held); $TB = ms time right after it returned success.
bob_poll() {
  cell=$1; secs=$2; shift 2
  end=$(($(date +%s) + secs))
  while :; do
    set +e
    "$@" env REFLEASE_OWNER=bob REFLEASE_HOST=h2 $R acquire "$cell" --ttl "${BOB_TTL:-30}" >"$D/bob.out" 2>&1
    brc=$?
    set -e
    TB=$(now_ms)
    [ "$brc" -eq 0 ] && return 0
    [ "$brc" -eq 3 ] || { cat "$D/bob.out"; fail "$cell: bob's acquire exit $brc"; }
    [ "$(date +%s)" -lt "$end" ] || { cat "$RUNLOG"; fail "$cell: bob never acquired"; }
    sleep 0.05
  done
}

# fence_check CELL LIMIT_MS: no member of the tree stamped at or after
# LIMIT_MS (bob's acquire, or whatever bound the cell states) and none is
# alive. A member still running would stamp again within 50 ms: look 300 ms
# later.
fence_check() {
  cell=$1; limit=$2
  sleep 0.3
  for f in "$D"/*.stamp; do
    m=$(basename "$f" .stamp); v=$(cat "$f")
    [ "$v" -lt "$limit" ] ||
      fail "$cell: member '$m' ran at $v ms, $((v - limit)) ms after $limit (bob's acquire or the cell's bound)"
    pid=$(cat "$D/$m.pid")
    ! alive "$pid" || fail "$cell: member '$m' (pid $pid) still alive"
  done
  echo "$cell: last stamp $((limit - $(cat "$D"/*.stamp | sort -n | tail -n 1))) ms before the bound"
}

# fence_break CELL: another identity breaks the running CELL (--force); run
# must end with exit 4 once its tree is gone, and nothing of the tree may run
# after run has exited. Sets tbreak and texit (ms).
fence_break() {
  expect_rc 0 env REFLEASE_OWNER=admin $R break "$1" --force
  tbreak=$(now_ms)
  wait_rc "$P"
  texit=$(now_ms)
  [ "$rc" -eq 4 ] || { cat "$RUNLOG"; fail "$1: run exit $rc, want 4"; }
  fence_check "$1" "$texit"
}

# garbage_tip CELL: another writer puts a commit without a payload on CELL's
# ref (a permanent heartbeat error: malformed payload), then run's end is
# awaited: $rc its status, $texit (ms) when it ended
garbage_tip() {
  gt_empty=$(git --git-dir="$S" hash-object -t tree -w /dev/null)
  git --git-dir="$S" update-ref "refs/leases/$1" \
    "$(git --git-dir="$S" commit-tree -p "refs/leases/$1" -m 'not a payload' "$gt_empty")"
  wait_rc "$P"
  texit=$(now_ms)
}

# run's JSON object: the last line of its stderr
run_json() { tail -n 1 "$RUNLOG" | jparse; }

