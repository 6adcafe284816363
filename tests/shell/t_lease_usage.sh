#!/bin/sh
# shellcheck disable=SC1091,SC2015,SC2016  # sourced helper; A && B || fail is intended; CMD scripts in single quotes
# test: seconds 23
# Invalid names, TTLs, phases, tokens and options: exit 64 and nothing written
# (F08: inputs validated before any write; F10: '/' rejected up front naming
# the rule; F30: 0, negative, huge and "5m" TTLs rejected, never replaced).
. "$(dirname "$0")/lease_lib.sh"

T=$(tok held)
[ -n "$T" ] || fail "setup"
before=$(refs)
z=0123456789abcdef0123456789abcdef

u() { expect_rc 64 "$@"; [ "$(refs)" = "$before" ] || fail "wrote something: $*"; }

# names (protocol.md §1)
for n in 'a/b' '../x' '.hidden' '-x' 'x.' 'x.lock' 'a..b' 'sp ace' "$(printf 'x%.0s' $(seq 101))" \
         'é' 'refs/heads/main'; do
  u "$R" acquire -- "$n"
  u "$R" release -- "$n"
  u "$R" break -- "$n"
done
u "$R" acquire 'a/b'
grep -q "/" "$TMPDIR/err" || fail "the message does not name the rule"
u "$R" acquire
u "$R" reacquire a b --lease-token "$z"  # one NAME: sets are for acquire, heartbeat, transition, release
u "$R" acquire a b a                     # a set names each lease once
u "$R" acquire a 'b/c'                   # every member's name is checked before any write
u "$R" --namespace heads acquire x
u "$R" --namespace Bad acquire x
# TTLs (F30): never replaced by a default
for ttl in 0 -1 4 86401 5m 1.5 '' ' 60' 99999999999999999999 0x10; do
  u "$R" acquire x --ttl "$ttl"
  u "$R" heartbeat held --lease-token "$T" --ttl "$ttl"
  u "$R" reacquire held --lease-token "$T" --ttl "$ttl"
  u "$R" run x --ttl "$ttl" -- true
done
# phases
for p in released none CLAIMED '' bogus; do
  u "$R" acquire x --phase "$p"
  u "$R" transition held --lease-token "$T" --to "$p"
done
u "$R" transition held --lease-token "$T"
u "$R" transition held --lease-token "$T" --to claimed   # already in claimed: usage, no write
# tokens for heartbeat / transition / reacquire
for t in '' short ZZ23456789abcdef0123456789abcdef 0123456789ABCDEF0123456789ABCDEF "${z}0"; do
  u "$R" heartbeat held --lease-token "$t"
  u "$R" transition held --lease-token "$t" --to working
  u "$R" reacquire held --lease-token "$t"
done
u "$R" heartbeat held
u "$R" reacquire held
# --every: above ttl/2, zero, and --release-on-exit without --every
u "$R" heartbeat held --lease-token "$T" --ttl 60 --every 31
u "$R" heartbeat held --lease-token "$T" --every 151      # stored ttl 300 → at most 150
u "$R" heartbeat held --lease-token "$T" --every 0
u "$R" heartbeat held --lease-token "$T" --release-on-exit
u "$R" run x --ttl 60 --every 31 -- true
u "$R" run x --every 151 -- true
# --wait
u "$R" acquire x --wait -1
u "$R" acquire x --wait soon
# unknown and misplaced options
u "$R" acquire x --force
u "$R" release held --lease-token "$T" --ttl 60
u "$R" break held --strict
u "$R" acquire x --bogus
u "$R" heartbeat held --lease-token
# run without a command
u "$R" run x
u "$R" run x --
# --json: the usage error is one JSON object on stdout
u "$R" --json acquire 'a/b'
[ "$(jout status)" = error ] || fail "json usage status"
[ "$(jout error.code)" != "<absent>" ] || fail "json usage error.code"
# the environment's token is validated too
u env REFLEASE_LEASE_TOKEN=nonsense "$R" heartbeat held
# env TTL-ish settings
u env REFLEASE_TIMEOUT=0 "$R" acquire x
# --help exits 0 and writes nothing
expect_rc 0 "$R" acquire --help
grep -q 'usage: reflease acquire' "$TMPDIR/out" || fail "--help"
expect_rc 0 "$R" run --help
[ "$(refs)" = "$before" ] || fail "wrote"
echo ok
