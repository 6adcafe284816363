# Helpers for the fair-waiting shell tests (sourced after lease_lib.sh; not a
# test itself): the tickets of a lease's queue in the local store $S.
G="git --git-dir=$S"
# tickets NAME: how many ticket refs refs/leases-queue/NAME/ holds
tickets() { $G for-each-ref --format='%(refname)' "refs/leases-queue/$1/" | wc -l; }
# wait_for N CMD...: up to N tenths of a second for CMD to succeed
wait_for() {
  n=$1; shift
  while ! "$@" >/dev/null 2>&1; do
    n=$((n - 1)); [ "$n" -gt 0 ] || return 1
    sleep 0.1
  done
}
# has_tickets NAME N: the queue of NAME holds at least N tickets
has_tickets() { [ "$(tickets "$1")" -ge "$2" ]; }
