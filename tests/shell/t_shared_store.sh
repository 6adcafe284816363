#!/bin/sh
# shellcheck disable=SC1091,SC2015  # sourced helper; A && B || fail is intended
# Issue 23, F33: a shared store (`git init --shared=group|all`, core.sharedRepository;
# libgit2#3733, git-lfs#2992). Two real users of one group, each with umask
# 077, take turns on the same leases: every file and directory reflease
# makes (loose refs, reflogs, lock files renamed into place, packed-refs,
# objects and their directories) gets the modes git gives it (group
# read/write, setgid directories), so the other user — and git itself — go
# on working: never 77, never "no leases".
. "$(dirname "$0")/lease_lib.sh"
if [ "$(id -u)" -ne 0 ]; then
  echo "SKIP t_shared_store: needs root (to add two users and a group with useradd)"
  exit 0
fi
for c in useradd userdel groupadd groupdel setpriv; do
  command -v "$c" >/dev/null 2>&1 || { echo "SKIP t_shared_store: no $c"; exit 0; }
done
grp=rlg$$ ua=rla$$ ub=rlb$$
cleanup() {
  userdel "$ua" 2>/dev/null || true
  userdel "$ub" 2>/dev/null || true
  groupdel "$grp" 2>/dev/null || true
}
trap cleanup EXIT INT TERM
groupadd "$grp"
# the store's group is a supplementary group of each: files take it from the
# setgid directories, as in a real shared checkout
useradd -M -N -g nogroup -G "$grp" -s /bin/sh "$ua"
useradd -M -N -g nogroup -G "$grp" -s /bin/sh "$ub"
chmod 711 "$TMPDIR"
for u in "$ua" "$ub"; do
  mkdir -p "$TMPDIR/h-$u"
  # root's stores: trusted explicitly, as libgit2 and git demand
  # (safe.directory; libgit2 1.5 takes no "*")
  for shared in group all; do
    git config --file "$TMPDIR/h-$u/.gitconfig" --add safe.directory "$TMPDIR/shared-$shared.git"
  done
  chown -R "$u" "$TMPDIR/h-$u"
done

# AS USER CMD...: run CMD as USER (its groups from /etc/group) with umask 077
AS() {
  as_u=$1; shift
  setpriv --reuid "$as_u" --regid nogroup --init-groups \
    env HOME="$TMPDIR/h-$as_u" REFLEASE_STORE="local:$SH" REFLEASE_OWNER="$as_u" \
    sh -c 'umask 077; exec "$@"' sh "$@"
}

for shared in group all; do
  SH=$TMPDIR/shared-$shared.git
  git init -q --bare --shared="$shared" "$SH"
  chgrp -R "$grp" "$SH"
  expect_rc 0 AS "$ua" "$R" init "$SH"

  # A writes first: new directories (refs/leases, logs/refs/leases, objects/xx)
  ta=$(AS "$ua" "$R" --json acquire x --ttl 60 | jget lease.lease_token)
  expect_rc 0 AS "$ua" "$R" release x --lease-token "$ta"
  expect_rc 0 AS "$ua" "$R" acquire y --ttl 60
  # B reads and writes what A made
  expect_rc 0 AS "$ub" "$R" list
  grep -q "^x .*released" "$TMPDIR/out" && grep -q "^y .*live" "$TMPDIR/out" ||
    fail "$shared: B does not see A's leases"
  expect_rc 0 AS "$ub" "$R" acquire x --ttl 60
  expect_rc 0 AS "$ub" "$R" break --force y
  expect_rc 0 AS "$ub" "$R" reconcile --fail-on warning
  # A again, over B's files
  expect_rc 0 AS "$ua" "$R" break --force x
  expect_rc 0 AS "$ua" "$R" acquire x --ttl 60
  expect_rc 0 AS "$ua" "$R" acquire z --ttl 60
  # archives and deletes (packed-refs rewritten through its lock), by B
  expect_rc 0 AS "$ub" "$R" reconcile --prune-released 0
  AS "$ub" git --git-dir="$SH" for-each-ref refs/leases-archive/ | grep -q y/ ||
    fail "$shared: y not archived"
  # git itself, as B: pack the refs, gc, write a ref in A's directory
  expect_rc 0 AS "$ub" git --git-dir="$SH" pack-refs --all
  expect_rc 0 AS "$ub" git --git-dir="$SH" gc -q
  expect_rc 0 AS "$ub" git --git-dir="$SH" update-ref refs/leases-archive/gitmade "$(git --git-dir="$SH" rev-parse refs/leases/x)"
  # A after git: write over packed refs, delete through packed-refs
  expect_rc 0 AS "$ua" "$R" break --force z
  expect_rc 0 AS "$ua" "$R" reconcile --prune-released 0
  expect_rc 0 AS "$ua" "$R" acquire y --ttl 60
  expect_rc 0 AS "$ub" "$R" list
  grep -q "^x .*live" "$TMPDIR/out" && grep -q "^y .*live" "$TMPDIR/out" ||
    fail "$shared: B lost sight of the leases"
  expect_rc 0 AS "$ub" git --git-dir="$SH" fsck --no-dangling

  # concurrently: A writes (each write renamed into place, then adjusted)
  # while B reads and lists; B never sees a ref it may not read
  # shellcheck disable=SC2016  # expanded by the child shell
  AS "$ua" sh -c 'for i in 1 2 3 4 5 6 7 8 9 10 11 12; do
      t=$("$1" --json acquire c --ttl 60 | sed "s/.*\"lease_token\":\"\([0-9a-f]*\)\".*/\1/")
      "$1" release c --lease-token "$t" >/dev/null || exit 1
    done' sh "$R" >"$TMPDIR/aw.out" 2>&1 &
  aw=$!
  n=0
  while alive "$aw" && [ "$n" -lt 200 ]; do
    n=$((n + 1))
    set +e
    AS "$ub" "$R" status c >"$TMPDIR/bs.out" 2>&1
    rc=$?
    set -e
    [ "$rc" -eq 0 ] || { cat "$TMPDIR/bs.out" >&2; fail "$shared: B's status during A's writes: exit $rc"; }
  done
  wait "$aw" || { cat "$TMPDIR/aw.out" >&2; fail "$shared: A's writes failed"; }

  # the modes git gives (adjust_shared_perm): files group-readable (objects)
  # or group-writable (refs, reflogs, packed-refs), directories g+rwx setgid;
  # with "all", readable by everybody as well
  if [ "$shared" = group ]; then f=0660 o=0440 d=2770; else f=0664 o=0444 d=2775; fi

  # a member stopped between its rename and its adjustment (a CI run once
  # saw B's status fail with 75 when A adjusted the file between B's failed
  # read and B's look at it; a stall longer than the 20 ms B then waited
  # failed it as well): A's ref file left with A's umask, as libgit2 renames
  # it into place, for half a second; B's read waits for it as for a held ref
  # lock and reads the lease, never "unreadable", 75 or 77
  expect_rc 0 AS "$ua" "$R" acquire s --ttl 60
  chmod 0600 "$SH/refs/leases/s"
  set +e
  AS "$ub" "$R" status s >"$TMPDIR/bs.out" 2>&1 &
  bs=$!
  sleep 0.5 # A's stall, on the real clock the reader waits on
  chmod "$f" "$SH/refs/leases/s"
  wait "$bs"
  rc=$?
  set -e
  [ "$rc" -eq 0 ] && grep -q "live" "$TMPDIR/bs.out" ||
    { cat "$TMPDIR/bs.out" >&2; fail "$shared: B's status over A's unadjusted write: exit $rc"; }
  expect_rc 0 AS "$ua" "$R" break --force s
  set --
  for p in refs logs objects packed-refs config; do [ ! -e "$SH/$p" ] || set -- "$@" "$SH/$p"; done
  find "$@" \
    \( -type d ! -perm -"$d" \) -o \
    \( -type f -path "$SH/objects/*" ! -perm -"$o" \) -o \
    \( -type f ! -path "$SH/objects/*" ! -perm -"$f" \) >"$TMPDIR/badmodes"
  [ ! -s "$TMPDIR/badmodes" ] || {
    while read -r p; do ls -ld "$p"; done <"$TMPDIR/badmodes" >&2
    fail "$shared: files or directories without the shared modes"
  }
done
echo ok
