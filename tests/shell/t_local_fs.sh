#!/bin/sh
# shellcheck disable=SC1091,SC2015  # sourced helper; A && B || fail is intended
# Issue 14 item 4 on real filesystems: a full disk (tmpfs with size=), a
# read-only bind mount, chattr +i and a user without write permission (EACCES).
# Writes fail with the documented exit
# code naming the path and the reason (disk full: 78; read-only or not
# permitted: 77), the write is checked, not trusted (an object write that
# hit ENOSPC is read back), nothing is half-written (git fsck clean, every
# lease readable), and the store works again once the cause is gone. Needs
# root for mount/chattr: skipped with a message otherwise.
. "$(dirname "$0")/lease_lib.sh"
M="$TMPDIR/m"
mkdir -p "$M"
if [ "$(id -u)" != 0 ] || ! mount -t tmpfs -o size=1m tmpfs "$M" 2>/dev/null; then
  echo "SKIP: needs root and mount (tmpfs, bind mounts)"
  exit 0
fi
cleanup() {
  chattr -i "$M/s/objects" "$M/s/refs/leases" "$S/refs/leases" 2>/dev/null || true
  umount "$TMPDIR/ro" 2>/dev/null || true
  umount "$M" 2>/dev/null || true
}
trap cleanup EXIT

# --- a full disk: tmpfs size=1m
FS="$M/s"
"$R" init "$FS" >/dev/null
export REFLEASE_STORE="local:$FS"
t=$(tok x --ttl 10)
before=$(git --git-dir="$FS" rev-parse refs/leases/x)
dd if=/dev/zero of="$M/fill" bs=4k >/dev/null 2>&1 || true
expect_rc 78 faketime -f +2s "$R" heartbeat x --lease-token "$t"
grep -q "disk is full" "$TMPDIR/err" || fail "ENOSPC: no 'disk is full'"
grep -q "$FS" "$TMPDIR/err" || fail "ENOSPC: path not named"
expect_rc 78 "$R" acquire y --ttl 60
grep -q "disk is full" "$TMPDIR/err" || fail "ENOSPC acquire: reason"
[ "$(git --git-dir="$FS" rev-parse refs/leases/x)" = "$before" ] || fail "ref moved on a full disk"
git --git-dir="$FS" rev-parse -q --verify refs/leases/y >/dev/null && fail "y written on a full disk"
expect_rc 0 "$R" status x
rm -f "$M/fill"
expect_rc 0 faketime -f +3s "$R" --json heartbeat x --lease-token "$t"
[ "$(jout status)" = renewed ] || fail "after freeing space: $(jout status)"
expect_rc 0 "$R" acquire y --ttl 60
git --git-dir="$FS" fsck --strict --no-dangling >"$TMPDIR/fsck" 2>&1 || { cat "$TMPDIR/fsck"; fail "fsck (tmpfs)"; }

# --- a read-only bind mount of a store
export REFLEASE_STORE="local:$S"
t=$(tok r --ttl 60)
mkdir -p "$TMPDIR/ro"
mount --bind "$S" "$TMPDIR/ro" && mount -o remount,bind,ro "$TMPDIR/ro" || fail "bind mount"
export REFLEASE_STORE="local:$TMPDIR/ro"
expect_rc 0 "$R" status r
expect_rc 77 "$R" acquire z --ttl 60
grep -q "read-only" "$TMPDIR/err" && grep -q "$TMPDIR/ro" "$TMPDIR/err" || fail "EROFS: reason/path"
expect_rc 77 "$R" break --force r
expect_rc 77 faketime -f +10s "$R" heartbeat r --lease-token "$t"
umount "$TMPDIR/ro"

# --- chattr +i (where the filesystem supports it)
export REFLEASE_STORE="local:$S"
if chattr +i "$S/refs/leases" 2>/dev/null; then
  expect_rc 77 "$R" acquire z --ttl 60
  grep -q "not permitted" "$TMPDIR/err" && grep -q "$S/refs/leases" "$TMPDIR/err" ||
    fail "EPERM (refs): reason/path"
  expect_rc 77 "$R" break --force r
  chattr -i "$S/refs/leases"
  t2=$(tok q --ttl 60)
  expect_rc 0 "$R" release q --lease-token "$t2"
  chattr +i "$S/refs/leases"
  # a prune that was due but failed sets the exit status (issue 19): 77, the delete's class
  expect_rc 77 "$R" reconcile --prune-released 0 --fail-on never
  grep -q "the delete failed" "$TMPDIR/out" && grep -q "not permitted" "$TMPDIR/out" ||
    fail "prune under chattr: reason"
  chattr -i "$S/refs/leases"
  chattr +i "$S/objects"
  expect_rc 77 "$R" acquire z --ttl 60
  grep -q "$S/objects" "$TMPDIR/err" || fail "EPERM (objects): path"
  chattr -i "$S/objects"
  expect_rc 0 "$R" acquire z --ttl 60
else
  echo "SKIP chattr: the filesystem of $TMPDIR refuses chattr +i"
fi
# --- EACCES: another user (nobody) who trusts the store (safe.directory) but
# may not write it
if command -v setpriv >/dev/null 2>&1 && id nobody >/dev/null 2>&1; then
  chmod 755 "$TMPDIR"
  chmod -R a+rX "$S"
  mkdir -p "$TMPDIR/nh"
  printf '[safe]\n\tdirectory = %s\n' "$S" >"$TMPDIR/nh/.gitconfig"
  chmod -R a+rX "$TMPDIR/nh"
  asnobody() { setpriv --reuid nobody --regid "$(id -g nobody)" --clear-groups env HOME="$TMPDIR/nh" "$@"; }
  expect_rc 0 asnobody "$R" status r
  expect_rc 77 asnobody "$R" --owner n acquire w --ttl 60
  grep -q "Permission denied" "$TMPDIR/err" && grep -q "$S/objects" "$TMPDIR/err" ||
    fail "EACCES: reason/path"
else
  echo "SKIP EACCES: no setpriv or no user nobody"
fi
git --git-dir="$S" fsck --strict --no-dangling >"$TMPDIR/fsck" 2>&1 || { cat "$TMPDIR/fsck"; fail "fsck"; }
echo ok
