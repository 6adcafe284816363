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
# Issue 25: GITHUB_ACTIONS=true without GITHUB_REPOSITORY, GITHUB_RUN_ID and
# GITHUB_JOB (a container step, env -i, act): login, host and session id — two
# sessions are two owners, never one "?/?/1/?" shared by every such job; -v says so
gha() { env -u GITHUB_REPOSITORY -u GITHUB_RUN_ID -u GITHUB_JOB -u REFLEASE_OWNER GITHUB_ACTIONS=true "$@"; }
o1=$(gha setsid "$R" --json acquire g1 --ttl 60 | jget lease.owner)
o2=$(gha setsid "$R" --json acquire g2 --ttl 60 | jget lease.owner)
case $o1 in *@h1/session-[0-9]*) ;; *) fail "GitHub Actions without its variables: owner '$o1'" ;; esac
[ "$o1" != "$o2" ] || fail "two sessions share the owner '$o1'"
case $o1 in *'?'*) fail "owner '$o1' has a '?'" ;; esac
gha GITHUB_REPOSITORY=octo/x GITHUB_RUN_ID=7 setsid "$R" -v status g1 >/dev/null 2>v.err
grep -q "GITHUB_ACTIONS=true without GITHUB_REPOSITORY, GITHUB_RUN_ID and GITHUB_JOB: owner '.*@h1/session-" v.err ||
  fail "-v does not say the owner fell back: $(cat v.err)"
gha setsid "$R" status g1 >/dev/null 2>v.err
! grep -q 'GITHUB_ACTIONS=true without' v.err || fail "said without -v"
got=$(gha GITHUB_REPOSITORY=octo/x GITHUB_RUN_ID=7 GITHUB_JOB=j "$R" --json acquire g3 --ttl 60 | jget lease.owner)
[ "$got" = octo/x/7/1/j ] || fail "with the job's variables: owner '$got'"
echo "t_cli_identity: ok"
