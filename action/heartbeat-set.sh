#!/usr/bin/env bash
# The background heartbeat of a set of leases (action/run.sh, acquire with
# heartbeat true and several names; cli.md "Sets"):
#   heartbeat-set.sh EVERY REFLEASE [GLOBAL OPTIONS] heartbeat [--ttl S] -- A B ...
# `reflease heartbeat --every` keeps one lease, so this runs the given set
# heartbeat (one atomic write of every member, the token in
# REFLEASE_LEASE_TOKEN) once every EVERY seconds, until:
#   - a signal (SIGTERM from run.sh's stop_heartbeat, SIGINT, SIGHUP): the
#     running heartbeat is stopped, exit 128 + signal (143, 130, 129), nothing
#     released (the release step or the post stage releases);
#   - the set is lost (exit 4: a member not held with the token, or expired):
#     exit 4;
#   - a permanent failure (usage 64, malformed payload 65, permission 77,
#     configuration 78, internal 70, ...): that exit status.
# A temporary failure (75: CAS conflict, not verified, rate limited; 69: store
# unreachable) is retried after EVERY/3 seconds (at least 1): each heartbeat
# that lands extends every member by the TTL, and a set that expired meanwhile
# answers 4. Each attempt's output goes to this script's stdout and stderr
# (run.sh's log file under RUNNER_TEMP).
set -u

every=${1:-}
case $every in '' | *[!0-9]* | 0)
  echo "heartbeat-set: EVERY must be whole seconds above 0, not '$every'" >&2
  exit 64
  ;;
esac
shift
[ $# -gt 0 ] || {
  echo "heartbeat-set: no heartbeat command" >&2
  exit 64
}
retry=$((every / 3))
[ "$retry" -ge 1 ] || retry=1

child=""
stop() { # SIGNAL STATUS
  [ -z "$child" ] || kill -"$1" "$child" 2>/dev/null || true
  [ -z "$child" ] || wait "$child" 2>/dev/null
  exit "$2"
}
trap 'stop TERM 143' TERM
trap 'stop INT 130' INT
trap 'stop HUP 129' HUP

# Run CMD... in the background (so a signal's trap runs at once), status in rc.
in_bg() {
  "$@" &
  child=$!
  wait "$child"
  rc=$?
  child=""
}

delay=$every
while :; do
  in_bg sleep "$delay"
  in_bg "$@"
  case $rc in
  0) delay=$every ;;
  69 | 75)
    echo "heartbeat-set: temporary failure (exit $rc); retrying in ${retry}s" >&2
    delay=$retry
    ;;
  4)
    echo "heartbeat-set: the set is lost (exit 4): not held with this token any more" >&2
    exit 4
    ;;
  *)
    echo "heartbeat-set: giving up (exit $rc)" >&2
    exit "$rc"
    ;;
  esac
done
