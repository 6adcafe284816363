# shellcheck shell=sh
# apt-get on the host, sourced by install-deps.sh and debroot.sh: it waits
# while another apt holds apt's locks instead of failing at once. A fresh
# machine often runs apt on its own just after boot (the daily update,
# unattended upgrades, cloud-init), and a second install beside the first is
# common (make demo and make check in two shells).
#   apt_update                  apt-get update
#   apt_install PKG...          apt-get install -y --no-install-recommends PKG...
# APT_SUDO: a command to run apt-get through (sudo), or empty. APT_LOCK_WAIT:
# seconds to wait for a lock (default 600); APT_LOCK_POLL: seconds between
# tries of an update (whole, default 5). An error that is not a held lock (a mirror
# that does not answer, a package that does not exist) fails at once, with
# apt's own message on stderr.
#
# apt 2.6 (Debian 12) waits for dpkg's lock when DPkg::Lock::Timeout is set,
# so an install waits by itself; an update takes the package lists' lock
# (/var/lib/apt/lists/lock), for which it does not wait, so it is tried again.

# apt_update: apt-get update, again every APT_LOCK_POLL seconds while the
# lists' lock is held, for at most APT_LOCK_WAIT seconds; returns apt-get's
# status (0 on success)
apt_update() {
  _apt_waited=0 _apt_poll=${APT_LOCK_POLL:-5}
  [ "$_apt_poll" -ge 1 ] 2>/dev/null || _apt_poll=5
  while :; do
    _apt_rc=0
    _apt_out=$(${APT_SUDO:-} env DEBIAN_FRONTEND=noninteractive apt-get \
      -o DPkg::Lock::Timeout="${APT_LOCK_WAIT:-600}" update -qq 2>&1) || _apt_rc=$?
    case $_apt_rc:$_apt_out in
    0:*) ;;
    *'Could not get lock'*) [ "$_apt_waited" -ge "${APT_LOCK_WAIT:-600}" ] || _apt_rc=lock ;;
    esac
    if [ "$_apt_rc" != lock ]; then
      [ -z "$_apt_out" ] || printf '%s\n' "$_apt_out" >&2
      return "$_apt_rc"
    fi
    echo "apt: another apt holds the package lists' lock; trying again in $_apt_poll s" >&2
    sleep "$_apt_poll"
    _apt_waited=$((_apt_waited + _apt_poll))
  done
}

# apt_install PKG...: apt-get install -y --no-install-recommends, quiet but for
# errors, waiting up to APT_LOCK_WAIT seconds for dpkg's lock; returns
# apt-get's status
apt_install() {
  ${APT_SUDO:-} env DEBIAN_FRONTEND=noninteractive apt-get \
    -o DPkg::Lock::Timeout="${APT_LOCK_WAIT:-600}" install -y -qq --no-install-recommends "$@" >/dev/null
}
