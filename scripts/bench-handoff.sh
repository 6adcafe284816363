#!/bin/sh
# shellcheck disable=SC2016 # backquotes in single quotes are markdown, not expansions
# `make bench-handoff` (issue 18): prints a markdown section of docs/benchmarks.md.
#   sh scripts/bench-handoff.sh REFLEASE_BIN BUILD_DIR RUNS "HOLDS" [BUNDLE_BIN]
# Handoff = from the end of the holder's work to the moment a waiter that was
# already waiting holds the lock, for the same hold times, side by side:
#   reflease local:   holder `reflease acquire`, work, `reflease release`;
#                     waiter `reflease acquire --wait`
#   etcdctl lock      holder `etcdctl lock L -- sh -c 'work'`; waiter `etcdctl lock L -- date`
#                     (etcd 3.4 from Debian, started here on 127.0.0.1, stopped at the end)
#   flock(1)          holder `flock F sh -c 'work'`; waiter `flock F date`
#   reflease github:  the fake GitHub server (build/tools/fakegh), with the API
#                     requests the waiter sent while waiting, counted as GitHub counts
#   reflease remote:  git daemon on 127.0.0.1, with the ls-remote connections the
#                     waiter made while waiting (from the daemon's log)
# Every figure comes from real processes; the waiter is waiting before the
# hold time starts.
# Then (issue 43), in the same run beside the same etcd and flock, short holds
# ($FAST_HOLD s), $FAST_RUNS runs each, alternated:
#   separate-process release   as above (holder `reflease release`)
#   run-style holder           holder `reflease run x -- sh -c 'work'`, waiter
#                              `reflease run --wait x -- sh -c 'date'` (the
#                              release in the holder's process), as
#                              `etcdctl lock` and flock are timed
#   start-up ladder            `reflease version`, a local: `status` of a held
#                              lease, `git --version`, `git rev-parse` of the
#                              same ref (scripts/bench-ladder.py, $LADDER_RUNS
#                              alternated runs)
# With BUNDLE_BIN (make bundle's reflease: libgit2 static, the CA bundle
# parsed at the first TLS handshake), both short handoffs and the ladder's
# reflease rows are run with it too, alternated with the others.
set -eu
R=$1
BUILD=$2
RUNS=$3
HOLDS=$4
RB=${5:-}
FAST_HOLD=${FAST_HOLD:-0.5}
FAST_RUNS=${FAST_RUNS:-21}
LADDER_RUNS=${LADDER_RUNS:-31}
W=$(mktemp -d "${TMPDIR:-/tmp}/reflease-handoff.XXXXXX")
EPID=""
FPID=""
DPID=""
cleanup() {
  set +e # the servers' exit status (killed) is not the script's
  [ -n "$EPID" ] && kill "$EPID" 2>/dev/null && wait "$EPID" 2>/dev/null
  [ -n "$FPID" ] && kill "$FPID" 2>/dev/null && wait "$FPID" 2>/dev/null
  [ -n "$DPID" ] && kill "$DPID" 2>/dev/null && wait "$DPID" 2>/dev/null
  rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
for c in etcd etcdctl flock python3 curl; do
  command -v "$c" >/dev/null || { echo "bench-handoff: $c is missing (make deps)" >&2; exit 1; }
done

export BENCH_NAME=bench-handoff
# shellcheck source=scripts/bench-lib.sh disable=SC1091 # followed with shellcheck -x
. "$(dirname "$0")/bench-lib.sh"
sub() { python3 -c "print('%.3f' % ($1 - $2))"; }
# stats FILE: "median max" of the first column, 3 decimals
stats() {
  sort -n "$1" | awk '{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.3f %.3f\n", m, v[NR] }'
}

# ---- reflease (local: and github:) -----------------------------------------
# rl_once HOLD: one handoff on $REFLEASE_STORE; prints seconds
rl_once() {
  rb=${RL_BIN:-$R} # the binary: RL_BIN, else REFLEASE_BIN
  tok=$(REFLEASE_OWNER=holder "$rb" --json acquire x --ttl 600 |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["lease"]["lease_token"])')
  rm -f "$W/w.err" "$W/w.done"
  # shellcheck disable=SC2086 # RL_FLAGS is words (--fair, issue 28)
  ( REFLEASE_OWNER=waiter REFLEASE_LOG=info "$rb" --json acquire x --wait 600 --ttl 600 ${RL_FLAGS:-} \
      >"$W/w.out" 2>"$W/w.err"; echo "$? $(now)" >"$W/w.done" ) &
  wpid=$!
  wait_for "$W/w.err" "${RL_WAITING:-waiting up to}"
  [ -z "${ON_WAIT:-}" ] || $ON_WAIT
  sleep "$1"
  t0=$(now)
  [ -z "${ON_RELEASE:-}" ] || $ON_RELEASE
  REFLEASE_OWNER=holder "$rb" release x --lease-token "$tok" >/dev/null
  wait "$wpid"
  read -r rc t1 <"$W/w.done"
  [ "$rc" -eq 0 ] || { echo "bench-handoff: waiter exit $rc" >&2; cat "$W/w.err" >&2; exit 1; }
  REFLEASE_OWNER=waiter "$rb" release x --lease-token "$(python3 -c 'import json, sys; print(json.load(sys.stdin)["lease"]["lease_token"])' <"$W/w.out")" >/dev/null
  sub "$t1" "$t0"
}

# ---- etcdctl lock and flock ------------------------------------------------
# lock_once HOLD HOLDER_PREFIX... :: WAITER_PREFIX...: the holder runs
# `sh -c 'touch held; sleep HOLD; now > rel'` under its lock, the waiter `date`
lock_once() {
  hold=$1; shift
  hp=""
  while [ "$1" != :: ]; do hp="$hp $1"; shift; done
  shift
  rm -f "$W/held" "$W/rel" "$W/acq"
  # shellcheck disable=SC2086 # the prefix is words
  $hp sh -c "touch '$W/held'; sleep $hold; date +%s.%N >'$W/rel'" >/dev/null 2>"$W/h.err" &
  hpid=$!
  i=0
  until [ -e "$W/held" ]; do i=$((i + 1)); [ "$i" -le 6000 ] || exit 1; sleep 0.01; done
  "$@" sh -c "date +%s.%N >'$W/acq'" >/dev/null 2>"$W/w.err"
  wait "$hpid"
  sub "$(cat "$W/acq")" "$(cat "$W/rel")"
}

cat <<EOF
## Handoff: a waiter gets a released lock (issue 18)

Machine: $(nproc) CPUs, $(uname -sr); load average at the start: $(cut -d' ' -f1-3 /proc/loadavg); commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown).
\`sh scripts/bench-handoff.sh build/reflease build $RUNS "$HOLDS"\` (\`make bench-handoff\`):
$RUNS runs per cell, real processes, the waiter already waiting when the hold starts.
Handoff = from the end of the holder's work to the moment the waiter holds the lock
(\`reflease acquire --wait\` returned; the waiter's command ran under \`etcdctl lock\` /
\`flock\`), the holder's release included. etcd $(etcd --version 2>/dev/null | awk '/etcd Version/ { print $3 }')
(Debian's \`etcd-server\`) runs on 127.0.0.1 with a data directory in \`${TMPDIR:-/tmp}\`.
Before issue 18 (commit 5c9943a, exponential backoff to 30 s) the local waiter took 0.93 s,
2.99 s and 3.67 s after 2, 10 and 20 s holds (14.6 s seen after a 12 s hold); a GitHub
waiter 0–30 s.

| holder held for | reflease \`local:\` median (max) | \`etcdctl lock\` median (max) | \`flock(1)\` median (max) |
|---|---|---|---|
EOF

# the local store
"$R" init "$W/s" >/dev/null
# etcd on free loopback ports
CPORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
PPORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
etcd --name bench --data-dir "$W/etcd" --listen-client-urls "http://127.0.0.1:$CPORT" \
  --advertise-client-urls "http://127.0.0.1:$CPORT" --listen-peer-urls "http://127.0.0.1:$PPORT" \
  --initial-advertise-peer-urls "http://127.0.0.1:$PPORT" \
  --initial-cluster "bench=http://127.0.0.1:$PPORT" >"$W/etcd.log" 2>&1 &
EPID=$!
export ETCDCTL_API=3
EC="etcdctl --endpoints=http://127.0.0.1:$CPORT"
i=0
until $EC endpoint health >/dev/null 2>&1; do
  i=$((i + 1)); [ "$i" -le 300 ] || { echo "bench-handoff: etcd did not start" >&2; tail "$W/etcd.log" >&2; exit 1; }
  sleep 0.1
done

export REFLEASE_HOST=bench
unset REFLEASE_NAMESPACE REFLEASE_LEASE_TOKEN GITHUB_ACTIONS 2>/dev/null || true
for hold in $HOLDS; do
  : >"$W/rl" ; : >"$W/et" ; : >"$W/fl"
  n=0
  while [ "$n" -lt "$RUNS" ]; do
    REFLEASE_STORE="local:$W/s" rl_once "$hold" >>"$W/rl"
    # shellcheck disable=SC2086 # $EC is words
    lock_once "$hold" $EC lock bench -- :: $EC lock bench -- >>"$W/et"
    lock_once "$hold" flock "$W/flock" :: flock "$W/flock" >>"$W/fl"
    n=$((n + 1))
  done
  read -r rm rx <<EOF2
$(stats "$W/rl")
EOF2
  read -r em ex <<EOF2
$(stats "$W/et")
EOF2
  read -r fm fx <<EOF2
$(stats "$W/fl")
EOF2
  echo "| ${hold} s | ${rm} s (${rx}) | ${em} s (${ex}) | ${fm} s (${fx}) |"
done

# ---- issue 43: short holds, a run-style holder, the start-up ladder ---------
: >"$W/p_rl"
: >"$W/p_et"
: >"$W/p_fl"
: >"$W/r_rl"
: >"$W/p_rb"
: >"$W/r_rb"
n=0
while [ "$n" -lt "$FAST_RUNS" ]; do
  REFLEASE_STORE="local:$W/s" rl_once "$FAST_HOLD" >>"$W/p_rl"
  REFLEASE_STORE="local:$W/s" lock_once "$FAST_HOLD" env REFLEASE_OWNER=holder "$R" run x --ttl 600 -- \
    :: env REFLEASE_OWNER=waiter "$R" run x --wait 600 --ttl 600 -- >>"$W/r_rl"
  if [ -n "$RB" ]; then
    REFLEASE_STORE="local:$W/s" RL_BIN=$RB rl_once "$FAST_HOLD" >>"$W/p_rb"
    REFLEASE_STORE="local:$W/s" lock_once "$FAST_HOLD" env REFLEASE_OWNER=holder "$RB" run x --ttl 600 -- \
      :: env REFLEASE_OWNER=waiter "$RB" run x --wait 600 --ttl 600 -- >>"$W/r_rb"
  fi
  # shellcheck disable=SC2086 # $EC is words
  lock_once "$FAST_HOLD" $EC lock bench -- :: $EC lock bench -- >>"$W/p_et"
  lock_once "$FAST_HOLD" flock "$W/flock" :: flock "$W/flock" >>"$W/p_fl"
  n=$((n + 1))
done
# cell FILE: "median s (max)"; ratio A B: A's median over B's
cell() { stats "$1" | awk '{ printf "%s s (%s)", $1, $2 }'; }
ratio() { python3 -c "print('%.2f' % ($(stats "$1" | cut -d' ' -f1) / $(stats "$2" | cut -d' ' -f1)))"; }
ltok=$(REFLEASE_STORE="local:$W/s" REFLEASE_OWNER=holder "$R" --json acquire x --ttl 600 |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["lease"]["lease_token"])')
ladder=$(python3 -S "$(dirname "$0")/bench-ladder.py" "$LADDER_RUNS" \
  "\`reflease version\`::$R version" \
  "\`reflease --store local:S status x\`::$R --store local:$W/s status x" \
  ${RB:+"bundle's \`reflease version\`::$RB version"} \
  ${RB:+"bundle's \`reflease --store local:S status x\`::$RB --store local:$W/s status x"} \
  "\`git --version\`::git --version" \
  "\`git --git-dir=S rev-parse refs/leases/x\`::git --git-dir=$W/s rev-parse refs/leases/x")
REFLEASE_STORE="local:$W/s" REFLEASE_OWNER=holder "$R" release x --lease-token "$ltok" >/dev/null
cat <<EOF

### Start-up and short handoffs beside etcd (issue 43)

The same run, the same etcd and lock file; hold $FAST_HOLD s, $FAST_RUNS runs of each, alternated
(\`FAST_HOLD\`, \`FAST_RUNS\`). Separate-process release: the holder's \`reflease release\`
process, timed from its start to the waiter's \`reflease acquire --wait\` returning. Run-style
holder: \`reflease run x --ttl 600 -- sh -c 'work; date >rel'\`, waiter
\`reflease run x --wait 600 --ttl 600 -- sh -c 'date >acq'\` (the release inside the holder's
process, after its command ends), timed as \`etcdctl lock bench -- sh -c ...\` and
\`flock F sh -c ...\` are (from the end of the holder's command to the waiter's command).

| handoff | reflease \`local:\` median (max) | \`etcdctl lock\` median (max) | \`flock(1)\` median (max) | reflease / etcd |
|---|---|---|---|---|
| separate-process release | $(cell "$W/p_rl") | $(cell "$W/p_et") | $(cell "$W/p_fl") | $(ratio "$W/p_rl" "$W/p_et")× |
| \`run\` → \`run --wait\` | $(cell "$W/r_rl") | $(cell "$W/p_et") | $(cell "$W/p_fl") | $(ratio "$W/r_rl" "$W/p_et")× |
EOF
if [ -n "$RB" ]; then
  cat <<EOF
| separate-process release, the bundle's reflease | $(cell "$W/p_rb") | $(cell "$W/p_et") | $(cell "$W/p_fl") | $(ratio "$W/p_rb" "$W/p_et")× |
| \`run\` → \`run --wait\`, the bundle's reflease | $(cell "$W/r_rb") | $(cell "$W/p_et") | $(cell "$W/p_fl") | $(ratio "$W/r_rb" "$W/p_et")× |
EOF
fi
cat <<EOF

Start-up ladder (\`python3 -S scripts/bench-ladder.py $LADDER_RUNS ...\`: each command started
with posix_spawn, $LADDER_RUNS runs alternated after one warm-up; the lease held; the ratio is
to \`git rev-parse\`'s median):

| command | median | min | / \`git rev-parse\` |
|---|---|---|---|
$ladder
EOF

# ---- fair waiting (issue 28): the same handoff with --fair -----------------
cat <<EOF

Fair waiting (issue 28): the same local handoff with \`acquire --wait --fair\` (the waiter
holds a ticket in \`refs/leases-queue/x/\`, sees no older one, waits on the lease ref, and
deletes its ticket after the acquire, which is counted in the handoff).

| holder held for | reflease \`local:\` \`--fair\` median (max) |
|---|---|
EOF
for hold in $HOLDS; do
  : >"$W/rlf"
  n=0
  while [ "$n" -lt "$RUNS" ]; do
    RL_FLAGS=--fair RL_WAITING="queue position" REFLEASE_STORE="local:$W/s" rl_once "$hold" >>"$W/rlf"
    n=$((n + 1))
  done
  read -r rm rx <<EOF2
$(stats "$W/rlf")
EOF2
  echo "| ${hold} s | ${rm} s (${rx}) |"
done

# ---- GitHub: the fake server ------------------------------------------------
"$BUILD/tools/fakegh" --token bench-token --port-file "$W/port" >/dev/null 2>"$W/fake.err" &
FPID=$!
i=0
until [ -s "$W/port" ]; do i=$((i + 1)); [ "$i" -le 3000 ] || exit 1; sleep 0.01; done
base="http://127.0.0.1:$(cat "$W/port")"
stat() { curl -sf "$base/_fakegh/stats"; }
counted() { stat | python3 -c 'import json, sys; d = json.load(sys.stdin); print(d["counted"], d["not_modified"])'; }
# snap FILE: the current count ($COUNTER) into $W/FILE (rl_once's ON_WAIT, ON_RELEASE)
snap() { $COUNTER >"$W/$1"; }
COUNTER=counted
GH_HOLD=${GH_HOLD:-30}
# gh_runs TIMES COUNTS FLAGS WAITING: RUNS handoffs on the fake server (the
# waiter's extra flags and the log line that says it waits); each handoff's
# time to TIMES, the counted requests and 304 answers while it waited to COUNTS
gh_runs() {
  : >"$1"
  : >"$2"
  n=0
  while [ "$n" -lt "$RUNS" ]; do
    GITHUB_API_URL=$base GITHUB_TOKEN=bench-token REFLEASE_STORE=github:octo/leases \
      RL_FLAGS=$3 RL_WAITING=$4 ON_WAIT="snap c0" ON_RELEASE="snap c1" \
      rl_once "$GH_HOLD" >>"$1"
    read -r c0 m0 <"$W/c0"
    read -r c1 m1 <"$W/c1"
    echo "$((c1 - c0)) $((m1 - m0))" >>"$2"
    n=$((n + 1))
  done
}
gh_runs "$W/gh" "$W/ghc" "" "waiting up to"
read -r gm gx <<EOF2
$(stats "$W/gh")
EOF2
cmax=$(awk 'BEGIN { m = 0 } $1 > m { m = $1 } END { print m }' "$W/ghc")
nmin=$(awk 'NR == 1 || $2 < m { m = $2 } END { print m }' "$W/ghc")

cat <<EOF

GitHub (\`github:\` against the fake server \`build/tools/fakegh\` on 127.0.0.1; same
procedure, $RUNS runs, hold $GH_HOLD s). The waiter polls the ref with a conditional
\`GET /repos/O/R/git/ref/REF\` (\`If-None-Match\`) every 2 s ± 25 %; the fake server answers
304 like GitHub and counts requests as GitHub counts them (an authorised 304 does not
count against the primary rate limit).

| holder held for | reflease \`github:\` median (max) | counted requests while waiting (max) | 304 answers (min) |
|---|---|---|---|
| ${GH_HOLD} s | ${gm} s (${gx}) | ${cmax} | ${nmin} |
EOF

# ---- remote: git daemon ----------------------------------------------------
DPORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$W/srv"
git init -q --bare "$W/srv/r.git"
git daemon --reuseaddr --listen=127.0.0.1 --port="$DPORT" --base-path="$W/srv" --export-all \
  --enable=receive-pack --verbose --log-destination=stderr "$W/srv" 2>"$W/daemon.log" &
DPID=$!
i=0
until git ls-remote "git://127.0.0.1:$DPORT/r.git" >/dev/null 2>&1; do
  i=$((i + 1)); [ "$i" -le 300 ] || { echo "bench-handoff: git daemon did not start" >&2; exit 1; }
  sleep 0.1
done
lsr() { grep -c "Request upload-pack" "$W/daemon.log" || true; }
COUNTER=lsr
RM_HOLD=${RM_HOLD:-10}
: >"$W/rm"
: >"$W/rmc"
n=0
while [ "$n" -lt "$RUNS" ]; do
  XDG_CACHE_HOME="$W/cache" REFLEASE_STORE="remote:git://127.0.0.1:$DPORT/r.git" \
    ON_WAIT="snap c0" ON_RELEASE="snap c1" rl_once "$RM_HOLD" >>"$W/rm"
  echo "$(($(cat "$W/c1") - $(cat "$W/c0")))" >>"$W/rmc"
  n=$((n + 1))
done
read -r mm mx <<EOF2
$(stats "$W/rm")
EOF2
lmax=$(sort -n "$W/rmc" | tail -n 1)

cat <<EOF

remote (\`remote:git://\` against \`git daemon\` on 127.0.0.1; same procedure, $RUNS runs, hold
$RM_HOLD s). The waiter runs an ls-remote (connect, read the ref advertisement, disconnect)
every 2 s ± 25 %; the connections it made while waiting are counted in the daemon's log.

| holder held for | reflease \`remote:\` median (max) | ls-remote connections while waiting (max) |
|---|---|---|
| ${RM_HOLD} s | ${mm} s (${mx}) | ${lmax} |
EOF

# ---- fair waiting on GitHub (issue 28): the requests a fair waiter spends ----
gh_runs "$W/ghf" "$W/ghfc" --fair "queue position"
read -r gm gx <<EOF2
$(stats "$W/ghf")
EOF2
cmax=$(awk 'BEGIN { m = 0 } $1 > m { m = $1 } END { print m }' "$W/ghfc")
cat <<EOF

Fair waiting on GitHub (issue 28; the fake server, $RUNS runs, hold $GH_HOLD s, ticket TTL
600 s): counted requests from the moment the fair waiter waits (its ticket taken) to the
release.

| holder held for | reflease \`github:\` \`--fair\` median (max) | counted requests while waiting (max) |
|---|---|---|
| ${GH_HOLD} s | ${gm} s (${gx}) | ${cmax} |
EOF
