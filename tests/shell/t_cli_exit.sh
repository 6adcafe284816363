#!/bin/sh
# shellcheck disable=SC1091,SC2015  # sourced helper; A && B || fail is intended
# test: seconds 20
# Issue 19: no green failures, nothing half-done.
# - reconcile --reap whose reap writes fail exits non-zero (a ref lock that the
#   write cannot get: 75; a read-only store: 77) and names the failure; a clean
#   reap still exits 0;
# - every output file is checked before the first read or write: an unwritable
#   --summary (reconcile, migrate, $GITHUB_STEP_SUMMARY) is exit 78 with the
#   expired lease left unreaped and nothing migrated;
# - migrate --summary appends, like reconcile's.
. "$(dirname "$0")/lease_lib.sh"
cd "$TMPDIR" || exit 1

# an expired lease: acquired with the local minimum TTL, judged 120 s later
expect_rc 0 "$R" acquire old --ttl 5
old_oid=$(git --git-dir="$S" rev-parse refs/leases/old)

# --- an unwritable output file stops everything before the first write ----
expect_rc 78 faketime -f +120s "$R" reconcile --reap --summary /nonexistent/dir/x.md
grep -q -- "--summary /nonexistent/dir/x.md: cannot write: No such file or directory (nothing was read or written)" "$TMPDIR/err" ||
  fail "reconcile: no clear message for the summary path"
[ "$(git --git-dir="$S" rev-parse refs/leases/old)" = "$old_oid" ] || fail "reaped although the summary path was bad"
mkdir adir
expect_rc 78 faketime -f +120s "$R" reconcile --reap --summary adir
grep -q "adir is a directory" "$TMPDIR/err" || fail "reconcile: directory not named"
expect_rc 78 env GITHUB_ACTIONS=true GITHUB_STEP_SUMMARY=/nonexistent/s.md faketime -f +120s "$R" reconcile --reap
grep -q "GITHUB_STEP_SUMMARY /nonexistent/s.md: cannot write" "$TMPDIR/err" || fail "step summary path not checked"
[ "$(git --git-dir="$S" rev-parse refs/leases/old)" = "$old_oid" ] || fail "reaped although the step summary was bad"
expect_rc 78 "$R" migrate --apply --summary /nonexistent/m.md
grep -q -- "--summary /nonexistent/m.md: cannot write" "$TMPDIR/err" || fail "migrate: summary path not checked"
[ ! -e /nonexistent/m.md ] || fail "created a file"
# a summary path that is checked leaves no file behind when the command fails later
expect_rc 64 "$R" reconcile --summary fresh.md --fail-on bogus
[ ! -e fresh.md ] || fail "a failed command left its summary file"

# --- reap writes that fail: the exit status says so -----------------------
# a fresh ref lock (younger than the 60 s stale age at +0 s) blocks the reap's CAS
: >"$S/refs/leases/old.lock"
expect_rc 75 faketime -f +120s env REFLEASE_SUMMARY_MAX=4096 "$R" --json reconcile --reap --fail-on never
jparse <"$TMPDIR/out"
[ "$(jv skipped)" != "<absent>" ] || fail "no skipped list"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
s = [x for x in d["skipped"] if x["name"] == "old"]
assert s and s[0]["action"] == "reap" and s[0]["code"] == "locked", d["skipped"]
assert d["reaped"] == [], d["reaped"]
' "$TMPDIR/out" || fail "the failed reap is not in skipped with its code"
grep -q "action(s) failed; first: reap old" "$TMPDIR/err" || fail "no failure line on stderr"
grep -q "exit 75" "$TMPDIR/err" || fail "the failure line does not give the status"
rm -f "$S/refs/leases/old.lock"

# read-only store: root ignores file modes, so drop to nobody where we are root
ro_run() {
  if [ "$(id -u)" -eq 0 ]; then
    command -v setpriv >/dev/null 2>&1 || return 2
    chmod 755 "$TMPDIR"
    # the store is root's: let libgit2 open it for nobody (safe.directory)
    mkdir -p "$TMPDIR/home" && printf '[safe]\n\tdirectory = %s\n\tdirectory = %s/\n' "$S" "$S" >"$TMPDIR/home/.gitconfig"
    chmod -R a+rX "$TMPDIR/home"
    setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$TMPDIR/home" XDG_CONFIG_HOME="$TMPDIR/home" "$@"
  else
    chmod -R a-w "$S"
    "$@"
    rc=$?
    chmod -R u+w "$S"
    return $rc
  fi
}
if [ "$(id -u)" -ne 0 ] || command -v setpriv >/dev/null 2>&1; then
  set +e
  ro_run faketime -f +120s "$R" reconcile --reap >"$TMPDIR/out" 2>"$TMPDIR/err"
  rc=$?
  set -e
  [ "$rc" -ne 0 ] || fail "reconcile --reap on a read-only store exited 0: $(cat "$TMPDIR/err")"
  [ "$rc" -eq 77 ] || fail "read-only store: exit $rc, want 77: $(cat "$TMPDIR/err")"
  grep -q "action(s) failed" "$TMPDIR/err" || fail "read-only: no failure line"
  ! grep -q "cannot write the commit: cannot write the commit" "$TMPDIR/out" "$TMPDIR/err" ||
    fail "repeated prefix in the reap failure"
  [ "$(git --git-dir="$S" rev-parse refs/leases/old)" = "$old_oid" ] || fail "read-only store changed"
else
  echo "t_cli_exit: read-only case skipped (root without setpriv)"
fi

# a reap that works: exit 0, the lease released
expect_rc 0 faketime -f +120s "$R" reconcile --reap --fail-on never --summary rec.md
[ "$("$R" --json status old | jget status)" = released ] || fail "not reaped"

# --- a summary write that fails after the check (a full disk): 78, not 0 ----
if [ -w /dev/full ]; then
  expect_rc 78 "$R" reconcile --summary /dev/full
  grep -q "cannot write the summary /dev/full" "$TMPDIR/err" || fail "full disk: $(cat "$TMPDIR/err")"
  expect_rc 78 env GITHUB_ACTIONS=true GITHUB_STEP_SUMMARY=/dev/full "$R" reconcile
  expect_rc 78 "$R" migrate --summary /dev/full
  expect_rc 78 env GITHUB_ACTIONS=true GITHUB_STEP_SUMMARY=/dev/full "$R" migrate
fi

# --- heartbeat --every --release-on-exit whose release fails: its status ----
HT=$(tok hb --ttl 30)
"$R" heartbeat hb --lease-token "$HT" --every 10 --release-on-exit >"$TMPDIR/hb.out" 2>"$TMPDIR/hb.err" &
hp=$!
i=0
until grep -q '^hb: ' "$TMPDIR/hb.out"; do # its first heartbeat is in: handlers are set
  [ $i -lt 300 ] || fail "heartbeat --every wrote nothing: $(cat "$TMPDIR/hb.err")"
  sleep 0.1
  i=$((i + 1))
done
: >"$S/refs/leases/hb.lock" # the release's CAS cannot get the ref lock
kill -TERM "$hp"
set +e
wait "$hp"
rc=$?
set -e
rm -f "$S/refs/leases/hb.lock"
[ "$rc" -eq 75 ] || fail "--release-on-exit with a failed release: exit $rc, want 75: $(cat "$TMPDIR/hb.err")"
grep -q "hb: .*ref lock held" "$TMPDIR/hb.err" || fail "the failed release is not reported: $(cat "$TMPDIR/hb.err")"

# --- migrate --summary appends ---------------------------------------------
printf 'EARLIER LINE\n' >mig.md
expect_rc 0 "$R" migrate --summary mig.md
expect_rc 0 "$R" migrate --summary mig.md
head -n 1 mig.md | grep -q '^EARLIER LINE$' || fail "migrate --summary overwrote the file"
[ "$(grep -c '^## reflease migrate' mig.md)" -eq 2 ] || fail "migrate --summary did not append: $(cat mig.md)"
echo "t_cli_exit: ok"
