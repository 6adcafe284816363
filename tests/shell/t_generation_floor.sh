#!/bin/sh
# shellcheck disable=SC1091,SC2015  # sourced helper; A && B || fail is intended
# test: seconds 22
# Issue 23, F34: the fencing generation never goes backwards and a recovery
# exceeds every generation issued for the name (etcd-io/etcd#16028,
# "revisions never decrease from the clients' perspective"). When a tip
# cannot be read — its object missing, its ref file garbled — its chain is
# still in the object store (packed or loose): `break --force` continues
# after the highest `transitions` found there, not from 0; past a missing tip
# object (which may have issued one more than its parent), one more.
. "$(dirname "$0")/lease_lib.sh"
G() { git --git-dir="$S" "$@"; }
trans() { "$R" --json status "$1" | jget lease.transitions; }

# m: six tenures by two owners (transitions 0..5), most of the chain packed
for o in a b a b a; do
  t=$("$R" --owner "$o" --json acquire m --ttl 60 | jget lease.lease_token)
  expect_rc 0 "$R" --owner "$o" release m --lease-token "$t"
done
G repack -a -d -q
t=$("$R" --owner b --json acquire m --ttl 60 | jget lease.lease_token)
[ "$(trans m)" = 5 ] || fail "setup: m transitions $(trans m)"
tip=$(G rev-parse refs/leases/m)
find "$S/objects" -type f -path "*/${tip%"${tip#??}"}/${tip#??}" -delete
G cat-file -e "$tip" 2>/dev/null && fail "setup: $tip still readable"
expect_rc 65 "$R" status m
expect_rc 0 "$R" break --force m
# the missing tip (5) hid its own value; its parent (released at 4) is
# found, and the tip may have been one more: 6, above the lost tip's 5
[ "$(trans m)" = 6 ] || fail "m: transitions $(trans m) after the break, want 6"
expect_rc 0 "$R" --owner c acquire m --ttl 60
[ "$(trans m)" = 7 ] || fail "m: transitions $(trans m) after the next acquire, want 7"

# g: transitions 3, then its ref file is garbled (a crashed writer's
# residue): the tip commit is still in the store, so the break gives 4
for o in a b a b; do
  t=$("$R" --owner "$o" --json acquire g --ttl 60 | jget lease.lease_token)
  expect_rc 0 "$R" --owner "$o" release g --lease-token "$t"
done
[ "$(trans g)" = 3 ] || fail "setup: g transitions $(trans g)"
printf 'garbage\n' >"$S/refs/leases/g"
expect_rc 0 "$R" break --force g
[ "$(trans g)" = 4 ] || fail "g: transitions $(trans g) after the break, want 4"

# another lease's commits do not count: "g2" (transitions 0) is broken at 0
expect_rc 0 "$R" acquire g2 --ttl 60
printf '\n' >"$S/refs/leases/g2"
expect_rc 0 "$R" break --force g2
[ "$(trans g2)" = 1 ] || fail "g2: transitions $(trans g2), want 1 (its own 0, plus one)"
echo ok
