#!/bin/sh
# shellcheck disable=SC1091,SC2015  # sourced helper; A && B || fail is intended
# Issue 19 / protocol.md §5: the default owner is the login name — getlogin,
# then $USER, $LOGNAME, the user database (getpwuid_r), else uid-N — never one
# "uid-unknown" shared by every user of a host (root in containers, cron).
. "$(dirname "$0")/lease_lib.sh"
cd "$TMPDIR" || exit 1
unset REFLEASE_OWNER

# owner_of NAME ENV...: the owner a fresh acquire of NAME writes under that environment
owner_of() {
  n=$1
  shift
  env -u USER -u LOGNAME -u REFLEASE_OWNER "$@" "$R" --json acquire "$n" --ttl 60 | jget lease.owner
}
# when getlogin works here (a login session), it comes first: expect it then
first=$(logname 2>/dev/null || true)

got=$(owner_of i1 USER=u-from-user LOGNAME=l-from-logname)
[ "$got" = "${first:-u-from-user}" ] || fail "USER: got '$got'"
got=$(owner_of i2 LOGNAME=l-from-logname)
[ "$got" = "${first:-l-from-logname}" ] || fail "LOGNAME after USER: got '$got'"
got=$(owner_of i3 USER= LOGNAME=l-from-logname)
[ "$got" = "${first:-l-from-logname}" ] || fail "an empty USER is skipped: got '$got'"
got=$(owner_of i4)
want=${first:-$(id -un)}
[ "$got" = "$want" ] || fail "user database: got '$got', want '$want'"
[ "$got" != uid-unknown ] || fail "uid-unknown"

# a uid the user database does not know: uid-N (needs root to switch uid)
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null 2>&1 && ! getent passwd 54321 >/dev/null; then
  chmod 755 "$TMPDIR"
  chmod -R a+rwX "$S"
  mkdir -p home && printf '[safe]\n\tdirectory = %s\n\tdirectory = %s/\n' "$S" "$S" >home/.gitconfig
  chmod -R a+rX home
  got=$(setpriv --reuid=54321 --regid=54321 --clear-groups env -u USER -u LOGNAME HOME="$TMPDIR/home" \
    "$R" --json acquire nouser --ttl 60 | jget lease.owner)
  [ "$got" = uid-54321 ] || fail "unknown uid: got '$got'"
else
  echo "t_cli_identity: the unknown-uid case needs root and setpriv; skipped"
fi
echo "t_cli_identity: ok"
