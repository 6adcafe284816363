#!/bin/sh
# shellcheck disable=SC1091,SC2015  # sourced helper; A && B || fail is intended
# Issue 23: the runtime and the sweep use one heartbeat floor rule
# (lib/lease/policy.c lease__policy_heartbeat_due). A heartbeat that changes
# the TTL is always due (cli.md), so `reconcile` never flags it as
# heartbeat-rate-above-floor; one that keeps the TTL is not due before the
# floor, and a heartbeat forced under it is flagged.
. "$(dirname "$0")/lease_lib.sh"
G() { git --git-dir="$S" "$@"; }

t=$(tok x --ttl 60)
expect_rc 0 "$R" --json heartbeat x --ttl 600 --lease-token "$t"
[ "$(jout status)" = renewed ] || fail "a TTL change is always due: $(jout status)"
expect_rc 0 "$R" reconcile --fail-on warning
grep -q heartbeat-rate-above-floor "$TMPDIR/out" && fail "the sweep flags a TTL change (600 after 60)"
# shortening is a change too
expect_rc 0 "$R" --json heartbeat x --ttl 60 --lease-token "$t"
[ "$(jout status)" = renewed ] || fail "shortening the TTL: $(jout status)"
expect_rc 0 "$R" reconcile --fail-on warning
# the same TTL again at once: not due, nothing written, nothing to flag
before=$(G rev-parse refs/leases/x)
expect_rc 0 "$R" --json heartbeat x --ttl 60 --lease-token "$t"
[ "$(jout status)" = not_due ] || fail "same TTL at once: $(jout status)"
[ "$(G rev-parse refs/leases/x)" = "$before" ] || fail "a heartbeat not due wrote"
expect_rc 0 "$R" reconcile --fail-on warning

# a writer that ignores the floor (a heartbeat commit 1 s after its parent,
# same TTL) is flagged: the rule still bites
tip=$(G cat-file commit refs/leases/x | sed '1,/^$/d')
exp=$(printf '%s' "$tip" | python3 -c 'import json,sys; m=sys.stdin.read(); j=json.loads(m[m.index("{"):]); print(j["expires_at"])')
new=$(python3 - "$exp" <<'PY'
import datetime, sys
t = datetime.datetime.strptime(sys.argv[1], "%Y-%m-%dT%H:%M:%SZ") + datetime.timedelta(seconds=1)
print(t.strftime("%Y-%m-%dT%H:%M:%SZ"))
PY
)
msg=$(printf '%s' "$tip" | sed "s/\"expires_at\":\"$exp\"/\"expires_at\":\"$new\"/; 1s/: [a-z]* /: heartbeat /")
c=$(printf '%s\n' "$msg" | G commit-tree -p refs/leases/x "$(G hash-object -t tree -w /dev/null)")
G update-ref refs/leases/x "$c"
expect_rc 1 "$R" reconcile --fail-on warning
grep -q heartbeat-rate-above-floor "$TMPDIR/out" || fail "a heartbeat under the floor is not flagged"
echo ok
