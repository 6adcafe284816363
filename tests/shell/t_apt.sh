#!/bin/sh
# scripts/apt.sh (sourced by install-deps.sh and debroot.sh: the install steps
# of make check, .ci/run and the Action's cache miss) waits while another apt
# holds apt's locks, as on a fresh machine whose own apt runs just after boot,
# and fails at once on any other error. apt-get here is a fake on PATH that
# answers as apt 2.6 does (the lock message is apt's, seen on this machine with
# the lists' lock held), so no package is installed and nothing leaves the
# machine; the installs' DPkg::Lock::Timeout is checked on its argument list
# (apt itself waits for dpkg's lock with it: see scripts/apt.sh). Then the
# real apt-get, on a private apt configuration (below), waits out a held lock.
set -eu
here=$(cd "$(dirname "$0")/../.." && pwd)
fail() { echo "FAIL: $*" >&2; [ ! -f "$TMPDIR/calls" ] || { echo "--- apt-get calls"; cat "$TMPDIR/calls"; } >&2; exit 1; }
mkdir -p "$TMPDIR/bin"
# the fake: each call appends its arguments to calls; the Nth update answers
# with line N of updates ("lock", "ok" or "mirror"; past the end: ok)
cat >"$TMPDIR/bin/apt-get" <<'EOF'
#!/bin/sh
echo "$*" >>"$FAKE/calls"
case " $* " in
*" update "*)
  n=$(grep -c ' update ' "$FAKE/calls")
  case $(sed -n "${n}p" "$FAKE/updates" 2>/dev/null) in
  lock)
    echo "E: Could not get lock /var/lib/apt/lists/lock. It is held by process 3057 (apt-get)" >&2
    echo "E: Unable to lock directory /var/lib/apt/lists/" >&2
    exit 100 ;;
  mirror)
    echo "E: Failed to fetch http://deb.debian.invalid/debian/dists/bookworm/InRelease  Could not resolve 'deb.debian.invalid'" >&2
    exit 100 ;;
  esac ;;
esac
[ "${DEBIAN_FRONTEND:-}" = noninteractive ] || { echo "fake apt-get: DEBIAN_FRONTEND is not noninteractive" >&2; exit 99; }
exit 0
EOF
# and sleep answers at once, saying how long it was asked to sleep
cat >"$TMPDIR/bin/sleep" <<'EOF'
#!/bin/sh
echo "sleep $*" >>"$FAKE/calls"
EOF
chmod 755 "$TMPDIR/bin/apt-get" "$TMPDIR/bin/sleep"
export FAKE="$TMPDIR" PATH="$TMPDIR/bin:$PATH"

# run CMD in a shell that sourced scripts/apt.sh; its status, stderr in err
try() {
  : >"$TMPDIR/calls"
  rc=0
  sh -c ". '$here/scripts/apt.sh'; $1" 2>"$TMPDIR/err" || rc=$?
}
updates() { printf '%s\n' "$@" >"$TMPDIR/updates"; }
calls() { grep -c "$1" "$TMPDIR/calls" || true; }

# the lists' lock held by another apt for two tries: the third succeeds
updates lock lock ok
try apt_update
[ "$rc" -eq 0 ] || fail "apt_update behind a held lock: exit $rc, wanted 0: $(cat "$TMPDIR/err")"
[ "$(calls ' update ')" -eq 3 ] || fail "apt_update: $(calls ' update ') updates, wanted 3"
[ "$(calls '^sleep 5$')" -eq 2 ] || fail "apt_update did not pause 5 s between tries"
[ "$(grep -c 'another apt holds' "$TMPDIR/err")" -eq 2 ] || fail "apt_update said nothing of the wait: $(cat "$TMPDIR/err")"
! grep -q 'Could not get lock' "$TMPDIR/err" || fail "apt_update printed the lock errors it waited out"

# any other error fails at once, with apt's message
updates mirror ok
try apt_update
[ "$rc" -eq 100 ] || fail "apt_update on a mirror error: exit $rc, wanted 100"
[ "$(calls ' update ')" -eq 1 ] || fail "apt_update tried a mirror error again ($(calls ' update ') updates)"
grep -q "Could not resolve 'deb.debian.invalid'" "$TMPDIR/err" || fail "apt_update hid apt's message: $(cat "$TMPDIR/err")"

# a lock held past APT_LOCK_WAIT: apt's own message and status
updates lock lock lock lock lock lock ok
APT_LOCK_WAIT=10 try apt_update
[ "$rc" -eq 100 ] || fail "apt_update past APT_LOCK_WAIT: exit $rc, wanted 100"
[ "$(calls ' update ')" -eq 3 ] || fail "apt_update past a 10 s wait polled each 5 s: $(calls ' update ') updates, wanted 3"
grep -q 'Could not get lock' "$TMPDIR/err" || fail "apt_update gave up without apt's message: $(cat "$TMPDIR/err")"

# an install asks apt to wait for dpkg's lock, non-interactive, through APT_SUDO
try "APT_SUDO=env APT_LOCK_WAIT=30; apt_install pkg-a pkg-b"
[ "$rc" -eq 0 ] || fail "apt_install: exit $rc: $(cat "$TMPDIR/err")"
grep -q -- '-o DPkg::Lock::Timeout=30 install -y -qq --no-install-recommends pkg-a pkg-b' "$TMPDIR/calls" ||
  fail "apt_install's arguments"

# install-deps.sh goes through them: with every package present it runs no apt
# at all; the Action's --build list is checked against this machine's dpkg
: >"$TMPDIR/calls"
sh "$here/scripts/install-deps.sh" --build 2>"$TMPDIR/err" || fail "install-deps.sh --build: $(cat "$TMPDIR/err")"
[ ! -s "$TMPDIR/calls" ] || fail "install-deps.sh --build ran apt-get with everything installed"

# ---- the real apt-get, on a private apt (APT_CONFIG: no sources, its own
# package lists, its own dpkg state as a copy of this machine's, so nothing
# is fetched and nothing of the host's apt is touched or locked), with its
# lists' lock held by another process (fcntl, as apt itself locks): the
# update waits it out. (An install's wait for dpkg's lock is apt's own,
# DPkg::Lock::Timeout, checked above on the arguments: apt says nothing while
# it waits, so a test of it would have to hold the lock for real seconds.)
# Root only (apt refuses its locks to others); skipped without apt-get or
# python3.
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1 || ! command -v python3 >/dev/null 2>&1; then
  echo "t_apt: the real apt part skipped (needs root, apt-get and python3)"
  echo "t_apt: ok"
  exit 0
fi
A="$TMPDIR/apt"
mkdir -p "$A/lists/partial" "$A/dpkg" "$A/cache/archives/partial" "$A/none" "$TMPDIR/bin2"
cp /var/lib/dpkg/status "$A/dpkg/status"
cat >"$A/apt.conf" <<CONF
Dir::Etc::sourcelist "/dev/null";
Dir::Etc::sourceparts "$A/none";
Dir::State::Lists "$A/lists";
Dir::State::status "$A/dpkg/status";
Dir::Cache "$A/cache";
CONF
export APT_CONFIG="$A/apt.conf"
real_path=${PATH#"$TMPDIR/bin:"}
# hold LOCKFILE (fcntl, as apt) until $TMPDIR/release exists; $TMPDIR/held
# once it is held; $holder its pid
hold() {
  rm -f "$TMPDIR/held" "$TMPDIR/release"
  python3 -c '
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o640)
fcntl.lockf(fd, fcntl.LOCK_EX)
open(sys.argv[2] + "/held", "w").close()
while not os.path.exists(sys.argv[2] + "/release"):
    time.sleep(0.02)' "$1" "$TMPDIR" &
  holder=$!
  echo "$holder" >"$TMPDIR/holder.pid"
  until [ -e "$TMPDIR/held" ]; do kill -0 "$holder" 2>/dev/null || fail "the holder of $1 died"; done
}
# sleep (apt_update's pause between tries) releases the lock instead of
# waiting: it returns once the holder is gone
cat >"$TMPDIR/bin2/sleep" <<'SLEEP'
#!/bin/sh
echo "sleep $*" >>"$FAKE/calls"
: >"$FAKE/release"
while kill -0 "$(cat "$FAKE/holder.pid")" 2>/dev/null; do :; done
SLEEP
chmod 755 "$TMPDIR/bin2/sleep"

hold "$A/lists/lock"
try "PATH='$TMPDIR/bin2:$real_path'; apt_update"
touch "$TMPDIR/release"
wait "$holder" || true
[ "$rc" -eq 0 ] || fail "real apt_update behind a held lists' lock: exit $rc: $(cat "$TMPDIR/err")"
[ "$(calls '^sleep 5$')" -eq 1 ] || fail "real apt_update did not wait once for the lists' lock ($(calls '^sleep 5$') pauses)"
grep -q 'another apt holds' "$TMPDIR/err" || fail "real apt_update said nothing of the wait"

echo "t_apt: ok"
