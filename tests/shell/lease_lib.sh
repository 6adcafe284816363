# Helpers for the lease and run shell tests (sourced; not a test itself).
# A fresh local store in $TMPDIR/s, identity alice@h1, and small assertions.
set -eu
S="$TMPDIR/s"
"$REFLEASE" init "$S" >/dev/null
export REFLEASE_STORE="local:$S" REFLEASE_OWNER=alice REFLEASE_HOST=h1
unset REFLEASE_LEASE_TOKEN REFLEASE_NAMESPACE GITHUB_ACTIONS 2>/dev/null || true
R=$REFLEASE

fail() { echo "FAIL: $*" >&2; [ -f "$TMPDIR/out" ] && { echo "--- last stdout"; cat "$TMPDIR/out"; echo "--- last stderr"; cat "$TMPDIR/err"; } >&2; exit 1; }

# expect_rc N cmd...: run cmd (stdout to $TMPDIR/out, stderr to $TMPDIR/err), check its status.
expect_rc() {
  want=$1; shift
  [ ! -e "$TMPDIR/flat" ] || rm -f "$TMPDIR/flat"
  set +e
  "$@" >"$TMPDIR/out" 2>"$TMPDIR/err"
  got=$?
  set -e
  [ "$got" -eq "$want" ] || {
    echo "--- stdout"; cat "$TMPDIR/out"; echo "--- stderr"; cat "$TMPDIR/err"
    fail "expected exit $want, got $got: $*"
  }
}

# has_text TEXT FILE: a line of FILE contains TEXT (one line, no pattern),
# in the shell: the helpers below run it hundreds of times a test, and each
# fork and exec of grep costs more than the reading (issue 26)
has_text() {
  while IFS= read -r ht_l || [ -n "$ht_l" ]; do
    case $ht_l in *"$1"*) return 0 ;; esac
  done <"$2"
  return 1
}

# err_is STATUS TEXT cmd...: exits STATUS and stderr contains TEXT
err_is() {
  st=$1 text=$2
  shift 2
  expect_rc "$st" "$@"
  has_text "$text" "$TMPDIR/err" || fail "stderr lacks '$text': $(cat "$TMPDIR/err")"
}

# Parse one JSON object (stdin or $TMPDIR/out) into $TMPDIR/flat: one
# "path<TAB>value" line per field (python3 starts slowly: parse once, read
# many). Fails on anything but exactly one JSON object.
jparse() {
  python3 -c '
import json, sys
doc = json.load(sys.stdin)
assert isinstance(doc, dict), "not an object"
def walk(p, v):
    if isinstance(v, dict):
        print(p + "\t<object>")
        for k in v: walk((p + "." if p else "") + k, v[k])
    else:
        print(p + "\t" + ("null" if v is None else (str(v).lower() if isinstance(v, bool) else str(v))))
walk("", doc)
' >"$TMPDIR/flat" || fail "not exactly one JSON object"
}
# jv PATH: a field of the last jparse ("<absent>" when missing)
jv() { awk -F '\t' -v k="$1" '$1 == k { print $2; f = 1 } END { if (!f) print "<absent>" }' "$TMPDIR/flat"; }
# jget PATH: jparse stdin, then jv PATH
jget() { [ ! -e "$TMPDIR/flat" ] || rm -f "$TMPDIR/flat"; jparse; jv "$1"; rm -f "$TMPDIR/flat"; }
# jout PATH: a field of $TMPDIR/out (parsed once per new output)
jout() {
  [ -f "$TMPDIR/flat" ] || jparse <"$TMPDIR/out"
  jv "$1"
}

# refs of the store, one "oid ref" a line
refs() { git --git-dir="$S" for-each-ref --format='%(objectname) %(refname)'; }

# the token of a fresh acquire: tok NAME [args]
tok() { n=$1; shift; "$R" --json acquire "$n" "$@" | jget lease.lease_token; }

# a process's state letter from /proc ("" when gone). Z (zombie) and X are
# dead; every other letter is alive, lower case too: "t" is a tracing stop,
# which a sanitized binary is in while LeakSanitizer checks it at exit.
pstate() { sed -n 's/^[0-9]* (.*) \([A-Za-z]\) .*/\1/p' "/proc/$1/stat" 2>/dev/null || true; }
alive() { s=$(pstate "$1"); [ -n "$s" ] && [ "$s" != Z ] && [ "$s" != X ]; }

# wait_until SECONDS WHAT CMD...: poll CMD every 50 ms until it succeeds; fail
# naming WHAT after SECONDS. A bound for a slow (sanitized, loaded) machine,
# not an expectation: the tests wait for the state they need, never a fixed
# sleep that a slow start outlasts.
wait_until() {
  wu_end=$(($(date +%s) + $1)); wu_what=$2; shift 2
  until "$@"; do
    [ "$(date +%s)" -lt "$wu_end" ] || fail "$wu_what: not within the bound"
    sleep 0.05
  done
}
# catches PID SIGNUM: PID has a handler for SIGNUM 1..32 (its SigCgt bit is
# set; only the low 32 bits are read: a mask with real-time handlers sets the
# top bit, which the shell's 64-bit arithmetic would saturate)
catches() { m=$(awk '/^SigCgt:/ { print substr($2, length($2) - 7) }' "/proc/$1/status" 2>/dev/null) && [ -n "$m" ] && [ $(((0x$m >> ($2 - 1)) & 1)) -eq 1 ]; }
# is_live NAME: the lease NAME is held (status live)
is_live() { [ "$("$R" status "$1" --json 2>/dev/null | jget status)" = live ]; }
# wait_rc PID: wait for PID without set -e ending the script; its status in $rc
wait_rc() { set +e; wait "$1"; rc=$?; set -e; }
# clock_to FILE VALUE: set a libfaketime clock file (FAKETIME_TIMESTAMP_FILE
# with FAKETIME_NO_CACHE: every process re-reads it at each call) to VALUE
# ("+3600", "-4", "2026-01-01 00:00:00"): written whole, then renamed into
# place, since libfaketime stops a process that reads a time half written
# ("failed to parse FAKETIME timestamp", seen on Debian 13)
clock_to() { printf '%s\n' "$2" >"$1.new" && mv "$1.new" "$1"; }
# FTLIB: libfaketime's preload library, the multi-threaded one first (run and
# a fair waiter have two threads); empty when libfaketime is not installed
FTLIB=""
for f in /usr/lib/*/faketime/libfaketimeMT.so.1 /usr/lib/faketime/libfaketimeMT.so.1 \
  /usr/lib/*/faketime/libfaketime.so.1; do
  [ -e "$f" ] && { FTLIB=$f; break; }
done
# ft_env CLOCKFILE: the env prefix (a word list) putting a command on the
# clock of CLOCKFILE (set with clock_to; re-read at every call;
# CLOCK_MONOTONIC and CLOCK_BOOTTIME stay real)
ft_env() { echo env LD_PRELOAD="$FTLIB" FAKETIME_TIMESTAMP_FILE="$1" FAKETIME_NO_CACHE=1 FAKETIME_DONT_FAKE_MONOTONIC=1; }
# on_clock CLOCKFILE CMD...: run CMD on the clock of CLOCKFILE (a function:
# put in the background, $! is a subshell, so a test that signals the
# process uses env $(ft_env CLOCKFILE) CMD instead)
# shellcheck disable=SC2046 # ft_env is a word list
on_clock() { oc_clock=$1; shift; $(ft_env "$oc_clock") "$@"; }
# now_ms: the wall clock in milliseconds
now_ms() { date +%s%3N; }
# lost_by_break NAME PID ERRFILE: NAME broken (--force) by an admin while the
# run PID holds it: run must exit 4 (lost) within 6 s, one TTL of 6 s (the
# next heartbeat within ttl/3, then kill_grace); ERRFILE shown on a failure
lost_by_break() {
  expect_rc 0 env REFLEASE_OWNER=admin "$R" break "$1" --force
  lb_t0=$(now_ms)
  wait_rc "$2"
  lb_took=$(($(now_ms) - lb_t0))
  [ "$rc" -eq 4 ] || { cat "$3"; fail "break $1: run exit $rc, want 4"; }
  [ "$lb_took" -lt 6000 ] || fail "break $1: run ended $lb_took ms after the break"
}
