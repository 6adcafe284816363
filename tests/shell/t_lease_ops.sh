#!/bin/sh
# shellcheck disable=SC1091,SC2015,SC2016  # sourced helper; A && B || fail is intended; CMD scripts in single quotes
# test: seconds 24
# acquire / heartbeat / transition / reacquire / release / break on the real
# binary: happy paths, every documented exit status, --json fields, the token
# shown only to its holder. Field cases F03, F04, F05, F06, F09, F13.
. "$(dirname "$0")/lease_lib.sh"

# acquire → 0, --json is one object with the documented fields and the token
t_acq=$(date +%s)
expect_rc 0 "$R" acquire deploy --ttl 60 --json
for k in status name ref oid token_rotated lease holder; do
  [ "$(jout $k)" != "<absent>" ] || fail "acquire --json lacks $k"
done
[ "$(jout status)" = acquired ] || fail "status"
[ "$(jout ref)" = refs/leases/deploy ] || fail "ref"
[ "$(jout token_rotated)" = true ] || fail "token_rotated"
[ "$(jout lease.ttl_seconds)" = 60 ] || fail "ttl_seconds"
[ "$(jout lease.expires_in)" -ge 58 ] || fail "expires_in"
[ "$(jout holder.owner)" = alice ] || fail "holder.owner"
T=$(jout lease.lease_token)
echo "$T" | grep -Eq '^[0-9a-f]{32}$' || fail "token $T"
[ "$(wc -l <"$TMPDIR/out")" -eq 1 ] || fail "more than one line of JSON"
OID=$(jout oid)
refs | grep -q "^$OID refs/leases/deploy$" || fail "ref not at the reported oid"

# human output carries the token for the holder
expect_rc 0 "$R" acquire other
grep -q '^lease_token: [0-9a-f]\{32\}$' "$TMPDIR/out" || fail "human acquire shows no token"

# same identity again, without the token: already_held, exit 3, token omitted (F06)
expect_rc 3 "$R" acquire deploy --json
[ "$(jout status)" = already_held ] || fail "already_held"
[ "$(jout lease.lease_token)" = "<absent>" ] || fail "token shown to a non-holder"
grep -q "$T" "$TMPDIR/out" && fail "token leaked"
# another owner: held, exit 3 (F03: same owner string on another host is held too)
expect_rc 3 "$R" --owner bob acquire deploy --json
[ "$(jout status)" = held ] || fail "held"
[ "$(jout holder.owner)" = alice ] || fail "holder"
expect_rc 3 "$R" --host h9 acquire deploy
# --wait runs out: exit 3
expect_rc 3 "$R" --owner bob acquire deploy --wait 1
# status never shows the token
expect_rc 0 "$R" status deploy --json
[ "$(jout status)" = live ] || fail "status live"
[ "$(jout lease.lease_token)" = "<absent>" ] || fail "status shows the token"

# heartbeat right after acquire: not_due (floor), exit 0, token shown; the
# clock set back to the acquire's second (the commands since may take
# longer than the floor on a loaded machine)
expect_rc 0 faketime -f "-$(($(date +%s) - t_acq))s" "$R" heartbeat deploy --lease-token "$T" --json
[ "$(jout status)" = not_due ] || fail "not_due"
[ "$(jout lease.lease_token)" = "$T" ] || fail "not_due lacks the token"
# the token from the environment; a later heartbeat renews
expect_rc 0 env REFLEASE_LEASE_TOKEN="$T" faketime -f +10s "$R" heartbeat deploy --json
[ "$(jout status)" = renewed ] || fail "renewed"
[ "$(jout lease.lease_token)" = "$T" ] || fail "renew preserves the token"
# a wrong token: not_holder, exit 4, nothing written
before=$(refs)
expect_rc 4 "$R" heartbeat deploy --lease-token 0123456789abcdef0123456789abcdef --json
[ "$(jout status)" = not_holder ] || fail "not_holder"
[ "$(jout lease.lease_token)" = "<absent>" ] || fail "token to non-holder"
[ "$(refs)" = "$before" ] || fail "a failed heartbeat wrote"

# transition: transitioned, token preserved (same identity); wrong token 4
expect_rc 0 "$R" transition deploy --lease-token "$T" --to working --json
[ "$(jout status)" = transitioned ] || fail "transitioned"
[ "$(jout lease.phase)" = working ] || fail "phase"
[ "$(jout lease.lease_token)" = "$T" ] || fail "transition rotated"
expect_rc 4 "$R" transition deploy --lease-token 0123456789abcdef0123456789abcdef --to review
# reacquire with the token: reacquired, preserved
expect_rc 0 "$R" reacquire deploy --lease-token "$T" --ttl 30 --json
[ "$(jout status)" = reacquired ] || fail "reacquired"
[ "$(jout lease.lease_token)" = "$T" ] || fail "reacquire rotated"
[ "$(jout lease.ttl_seconds)" = 30 ] || fail "reacquire ttl"

# release with an empty / missing / stale token: not_owner, exit 0, nothing
# written (F05); --strict makes it 4
before=$(refs)
expect_rc 0 "$R" release deploy --lease-token "" --json
[ "$(jout status)" = not_owner ] || fail "not_owner (empty)"
expect_rc 0 "$R" release deploy
grep -q not_owner "$TMPDIR/out" || fail "not_owner (missing)"
expect_rc 0 "$R" release deploy --lease-token 0123456789abcdef0123456789abcdef
expect_rc 4 "$R" release deploy --lease-token 0123456789abcdef0123456789abcdef --strict
expect_rc 4 "$R" release deploy --lease-token "" --strict
[ "$(refs)" = "$before" ] || fail "a not_owner release wrote"

# break without --force over a live lease: held, exit 3, nothing written
expect_rc 3 "$R" break deploy --json
[ "$(jout status)" = held ] || fail "break held"
[ "$(refs)" = "$before" ] || fail "break without --force wrote"

# release with the token: released, exit 0; again: already_released, 0 (F09),
# also with --strict
expect_rc 0 "$R" release deploy --lease-token "$T" --json
[ "$(jout status)" = released ] || fail "released"
[ "$(jout lease.phase)" = released ] || fail "phase released"
[ "$(jout holder)" = "<absent>" ] || fail "holder of a released lease"
expect_rc 0 "$R" release deploy --lease-token "$T" --json
[ "$(jout status)" = already_released ] || fail "already_released"
expect_rc 0 "$R" release deploy --lease-token "$T" --strict
expect_rc 0 "$R" release never-existed --lease-token "$T" --strict
grep -q already_released "$TMPDIR/out" || fail "absent → already_released"

# after release: heartbeat / transition / reacquire → not_holder 4 (F13)
expect_rc 4 "$R" heartbeat deploy --lease-token "$T"
expect_rc 4 "$R" transition deploy --lease-token "$T" --to review
expect_rc 4 "$R" reacquire deploy --lease-token "$T"
expect_rc 4 "$R" heartbeat never-existed --lease-token "$T"
refs | grep -q 'refs/leases/never-existed' && fail "heartbeat created a lease"

# F04: double release while someone else acquired in between
T2=$(tok deploy)
[ -n "$T2" ] && [ "$T2" != "$T" ] || fail "new tenure token"
before=$(refs)
expect_rc 0 "$R" release deploy --lease-token "$T" --json
[ "$(jout status)" = not_owner ] || fail "F04 not_owner"
[ "$(refs)" = "$before" ] || fail "F04: the second release wrote"

# break --force over a live lease: broken, 0; break again: already_released, 0
expect_rc 0 "$R" --owner admin break deploy --force --json
[ "$(jout status)" = broken ] || fail "broken"
expect_rc 0 "$R" break deploy
grep -q already_released "$TMPDIR/out" || fail "break of a released lease"
expect_rc 0 "$R" break never-existed
expect_rc 4 "$R" heartbeat deploy --lease-token "$T2"

# --phase on acquire; options after NAME and before it; `--` before NAME
expect_rc 0 "$R" acquire --phase review --json -- p1
[ "$(jout lease.phase)" = review ] || fail "--phase review"
expect_rc 0 "$R" acquire p2 --phase working
expect_rc 64 "$R" acquire --phase review -- p3 --json  # after `--` everything is an operand
echo "ok"
