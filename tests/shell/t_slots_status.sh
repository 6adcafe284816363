#!/bin/sh
# shellcheck disable=SC1091  # sourced helper
# status NAME of a slotted name (issue 27, protocol.md "Slots"): NAME has no
# ref of its own, so status shows it absent and lists its slots NAME@iofN
# (JSON "slots": count, live, refs) with a summary line; --fail-if-held
# exits 3 only while no slot is free for this identity (every slot of the
# count held live by others, or two counts not released), so an `if:` check
# on a slotted name no longer passes while all its slots are taken. A held
# plain lease NAME is shown alone (no listing more).
. "$(dirname "$0")/lease_lib.sh"

# no slots: nothing more than before
expect_rc 0 "$R" --json status db
[ "$(jout slots)" = "<absent>" ] || fail "slots of a name without any: $(cat "$TMPDIR/out")"

# one of two slots held by alice: carol has a free one
expect_rc 0 "$R" --json acquire db --slots 2
a=$(jout name)
ta=$(jout lease.lease_token)
expect_rc 0 "$R" --json status db --owner carol --fail-if-held
jq -e --arg a "$a" '.status == "absent" and .slots.count == 2 and .slots.live == 1 and
  [.slots.refs[] | [.name, .status, .holder.owner]] == [[$a, "live", "alice"]] and
  (.slots.refs[0] | has("lease_token") | not)' "$TMPDIR/out" >/dev/null ||
  fail "one held: $(cat "$TMPDIR/out")"
expect_rc 0 "$R" status db
grep -q "^$a: live — claimed by alice on h1" "$TMPDIR/out" || fail "human slot line"
grep -q "^db has 2 slots: 1 held live$" "$TMPDIR/out" || fail "human summary line"

# both held: full for carol (3), not for alice or bob, who hold one each
expect_rc 0 "$R" --json acquire db --slots 2 --owner bob
b=$(jout name)
tb=$(jout lease.lease_token)
expect_rc 3 "$R" status db --owner carol --fail-if-held
grep -q "^db has 2 slots: 2 held live$" "$TMPDIR/out" || fail "two held: $(cat "$TMPDIR/out")"
expect_rc 0 "$R" status db --fail-if-held
expect_rc 0 "$R" status db --owner bob --fail-if-held
# expired slots are free (acquire --slots takes one over)
expect_rc 0 faketime -f '+1h' "$R" --json status db --owner carol --fail-if-held
jq -e '.slots.count == 2 and .slots.live == 0 and
  [.slots.refs[].status] == ["expired", "expired"]' "$TMPDIR/out" >/dev/null ||
  fail "expired: $(cat "$TMPDIR/out")"

# all released: any count may come next
expect_rc 0 "$R" release "$a" --lease-token "$ta"
expect_rc 0 "$R" release "$b" --lease-token "$tb"
expect_rc 0 "$R" --json status db --owner carol --fail-if-held
jq -e '.slots.count == 0 and .slots.live == 0 and (.slots.refs | length) == 2' "$TMPDIR/out" >/dev/null ||
  fail "released: $(cat "$TMPDIR/out")"
expect_rc 0 "$R" status db
grep -q "^db has slots, all released" "$TMPDIR/out" || fail "released summary: $(cat "$TMPDIR/out")"

# two counts not released (a slot pushed by hand beside a held one): full
expect_rc 0 "$R" --json acquire db --slots 2
n=$(jout name)
git --git-dir="$S" cat-file commit "refs/leases/$n" | sed "s/$n/db@1of3/g" >"$TMPDIR/c"
git --git-dir="$S" update-ref refs/leases/db@1of3 "$(git --git-dir="$S" hash-object -t commit -w "$TMPDIR/c")"
expect_rc 3 "$R" --json status db --owner carol --fail-if-held
jq -e '.slots.count == null' "$TMPDIR/out" >/dev/null || fail "two counts: $(cat "$TMPDIR/out")"
expect_rc 3 "$R" status db --owner carol --fail-if-held
grep -q "^db has slots of two counts not released (slot-count-mismatch" "$TMPDIR/out" ||
  fail "two counts, human: $(cat "$TMPDIR/out")"

# a held plain lease is shown alone; a slot's own name is a lease of its own
expect_rc 0 "$R" acquire db
expect_rc 0 "$R" --json status db
jq -e 'has("slots") == false and .status == "live"' "$TMPDIR/out" >/dev/null || fail "plain db: $(cat "$TMPDIR/out")"
expect_rc 0 "$R" --json status db@1of3
jq -e 'has("slots") == false and .status == "live"' "$TMPDIR/out" >/dev/null ||
  fail "status db@1of3: $(cat "$TMPDIR/out")"
echo "ok"
