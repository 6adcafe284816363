#!/bin/sh
# shellcheck disable=SC1091,SC2015  # sourced helper; A && B || fail is intended
# Issue 19: `heartbeat --ttl S` is never silently ignored (protocol.md §6,
# Decision): a TTL other than the stored ttl_seconds is due at once and writes
# the new TTL and expiry (shorter or longer); the same TTL, or none, keeps the
# floor (not_due). A pre-bump payload written with a longer TTL than the one
# assumed gets a sane not_due message (time left, never a negative "ago").
. "$(dirname "$0")/lease_lib.sh"
cd "$TMPDIR" || exit 1

T=$(tok hb --ttl 3600)
# shorter: due at once, ttl_seconds and expiry follow
expect_rc 0 "$R" --json heartbeat hb --lease-token "$T" --ttl 60
[ "$(jout status)" = renewed ] || fail "heartbeat --ttl 60 on a 3600 s lease: $(jout status)"
[ "$(jout lease.ttl_seconds)" = 60 ] || fail "ttl_seconds not written: $(jout lease.ttl_seconds)"
left=$(jout lease.expires_in)
[ "$left" -le 60 ] && [ "$left" -ge 55 ] || fail "expiry not now+60: expires_in $left"
# the same TTL again at once: the floor holds (not_due, nothing written)
before=$(git --git-dir="$S" rev-parse refs/leases/hb)
expect_rc 0 "$R" --json heartbeat hb --lease-token "$T" --ttl 60
[ "$(jout status)" = not_due ] || fail "same TTL: $(jout status)"
expect_rc 0 "$R" --json heartbeat hb --lease-token "$T"
[ "$(jout status)" = not_due ] || fail "no TTL: $(jout status)"
[ "$(git --git-dir="$S" rev-parse refs/leases/hb)" = "$before" ] || fail "not_due wrote"
# longer: due too
expect_rc 0 "$R" --json heartbeat hb --lease-token "$T" --ttl 600
[ "$(jout status)" = renewed ] && [ "$(jout lease.ttl_seconds)" = 600 ] || fail "--ttl 600 not written"
# the human line says what happened
expect_rc 0 "$R" heartbeat hb --lease-token "$T" --ttl 120
grep -q "^hb: renewed" "$TMPDIR/out" || fail "human output: $(cat "$TMPDIR/out")"

# a pre-bump (1.0.0) payload written with a 2 h TTL: the assumed 300 s makes its
# heartbeat time lie in the future; not_due says how long is left instead
GIT="git --git-dir=$S"
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@localhost GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@localhost
ts() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ; }
now=$(date +%s)
PT=00112233445566778899aabbccddeeff
json="{\"acquired_at\":\"$(ts $((now - 10)))\",\"expires_at\":\"$(ts $((now + 7200)))\",\"host\":\"h1\",\"lease_token\":\"$PT\",\"name\":\"old\",\"nonce\":\"0011223344556677\",\"owner\":\"alice\",\"phase\":\"working\",\"sdlc_version\":\"1.0.0\",\"transitions\":1}"
c=$(printf 'old: acquire working by alice on h1\n\n%s\n' "$json" | $GIT commit-tree "$($GIT hash-object -t tree /dev/null)")
$GIT update-ref refs/leases/old "$c" ""
expect_rc 0 "$R" --json heartbeat old --lease-token "$PT"
[ "$(jout status)" = not_due ] || fail "pre-bump, no --ttl: $(jout status)"
msg=$(jout message)
case $msg in
*"s ago"* | *" -"[0-9]*) fail "pre-bump not_due message: $msg" ;;
*"s left, more than the 300 s TTL assumed"*) ;;
*) fail "pre-bump not_due message does not say the time left: $msg" ;;
esac
# an explicit --ttl over a pre-bump payload is due: it writes ttl_seconds
expect_rc 0 "$R" --json heartbeat old --lease-token "$PT" --ttl 300
[ "$(jout status)" = renewed ] && [ "$(jout lease.ttl_seconds)" = 300 ] || fail "pre-bump --ttl not written"
echo "t_cli_heartbeat_ttl: ok"
