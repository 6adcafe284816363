#!/bin/sh
# shellcheck disable=SC1091  # sourced helper
# slot-count-mismatch (issue 27, protocol.md "Slots"): reconcile reports the
# refs of one NAME of two configurations not released at once — slots of two
# counts (an older count's slot left held or expired, a ref pushed by hand),
# or slots beside a plain lease NAME — as an error in the text report, in
# --json with both refs named, in the step summary and annotations; it is
# exactly the state in which acquire --slots refuses NAME (exit 78). Released
# refs of another count are history, not an anomaly. --reap releases an
# older count's expired slots, after which the name is clean and acquire
# --slots takes it again. --prune-released archives a released slot (its
# generation continues when it is created again) and migrate --apply
# migrates a slot's pre-bump payload, each by the slot's name.
. "$(dirname "$0")/lease_lib.sh"

# push_as FROM TO: a copy of lease FROM's tip as lease TO (its name
# rewritten), as a manual push or an older configuration leaves it
push_as() {
  git --git-dir="$S" cat-file commit "refs/leases/$1" | sed "s/$1/$2/g" >"$TMPDIR/c"
  c=$(git --git-dir="$S" hash-object -t commit -w "$TMPDIR/c")
  git --git-dir="$S" update-ref "refs/leases/$2" "$c" ""
}
# mismatches: the entries of $TMPDIR/out (reconcile --json) with the
# anomaly, one "name slots other other_slots" line each
mismatches() {
  jq -r '.leases[] | .name as $n | .anomalies[] | select(.id == "slot-count-mismatch")
    | "\($n) \(.slots) \(.other) \(.other_slots) \(.severity)"' "$TMPDIR/out"
}

# ---- two counts held at once: db@?of2 by acquire, db@1of3 pushed by hand
expect_rc 0 "$R" --json acquire db --slots 2
n2=$(jout name)
t2=$(jout lease.lease_token)
push_as "$n2" db@1of3
# acquire --slots refuses the name with either count ...
err_is 78 "not 2" "$R" acquire db --slots 2 --owner bob
err_is 78 "not 3" "$R" acquire db --slots 3 --owner bob
# ... and reconcile says why, on the ref walked second, naming the first
expect_rc 1 "$R" reconcile
grep -q '^db@[12]of[23] .*slot-count-mismatch(error)' "$TMPDIR/out" || fail "text report: no mismatch"
grep -q "slot-count-mismatch: db has slots of two counts not released" "$TMPDIR/out" ||
  fail "text report: no message"
expect_rc 0 "$R" --json reconcile --fail-on never
[ "$(mismatches | wc -l)" -eq 1 ] || fail "want one mismatch entry: $(mismatches)"
case "$n2" in
  db@1of2) want="db@1of3 3 db@1of2 2 error" ;; # db@1of2 sorts first
  *) want="db@2of2 2 db@1of3 3 error" ;;
esac
[ "$(mismatches)" = "$want" ] || fail "mismatch: '$(mismatches)', want '$want'"
jq -e '.counts.error == 1' "$TMPDIR/out" >/dev/null || fail "counts: $(cat "$TMPDIR/out")"
# the step summary and the annotations render it like any anomaly
expect_rc 1 env GITHUB_ACTIONS=true GITHUB_STEP_SUMMARY="$TMPDIR/sum.md" "$R" reconcile
grep -q 'slot\\-count\\-mismatch\|slot-count-mismatch' "$TMPDIR/sum.md" || fail "summary: $(cat "$TMPDIR/sum.md")"
grep -q '^::error title=reflease reconcile%3A refs/leases/db@.*slot-count-mismatch' "$TMPDIR/err" ||
  fail "annotation: $(cat "$TMPDIR/err")"

# ---- released: the old count is history; the new count is free to take
expect_rc 0 "$R" release "$n2" --lease-token "$t2"
expect_rc 0 "$R" --json reconcile
[ -z "$(mismatches)" ] || fail "a released slot of 2 beside db@1of3 reported: $(mismatches)"
expect_rc 0 "$R" --json acquire db --slots 3 --owner bob
[ "$(jout name)" != db@1of3 ] || fail "bob took the pushed slot db@1of3"

# ---- a plain lease beside slots: acquire NAME does not look at NAME@…
expect_rc 0 "$R" --json acquire pool --slots 2
np=$(jout name)
expect_rc 0 "$R" acquire pool-a # walked between pool and pool@…
expect_rc 0 "$R" acquire pool
err_is 78 "pool is a plain lease (refs/leases/pool is held)" "$R" acquire pool --slots 2
expect_rc 1 "$R" --json reconcile
[ "$(mismatches)" = "$np 2 pool null error" ] || fail "plain beside slots: '$(mismatches)'"

# ---- an older count's expired slots beside a new count's held one
faketime -f '-1h' "$R" acquire q --slots 2 --ttl 60 >/dev/null
faketime -f '-1h' "$R" acquire q --slots 2 --ttl 60 --owner bob >/dev/null
err_is 78 "q has 2 slots" "$R" acquire q --slots 3 # expired is not released
expect_rc 0 "$R" --json acquire q3 --slots 3
push_as "$(jout name)" q@1of3
expect_rc 1 "$R" --json reconcile
# walked q@1of2, q@1of3, q@2of2: each after the first names one of the other count
[ "$(mismatches | grep '^q@' | tr '\n' ,)" = "q@1of3 3 q@1of2 2 error,q@2of2 2 q@1of3 3 error," ] ||
  fail "expired older count: '$(mismatches)'"
# --reap releases both expired slots (the mismatch was what it found)
expect_rc 0 "$R" --json reconcile --reap --fail-on never
jq -e '[.reaped[].name | select(startswith("q@"))] == ["q@1of2", "q@2of2"]' "$TMPDIR/out" >/dev/null ||
  fail "reap: $(cat "$TMPDIR/out")"
expect_rc 0 "$R" --json reconcile --fail-on never
if mismatches | grep -q '^q@'; then fail "after the reap: $(mismatches)"; fi
expect_rc 0 "$R" --json acquire q --slots 3
case "$(jout name)" in q@[23]of3) ;; *) fail "acquire q --slots 3 after the reap: $(cat "$TMPDIR/out")" ;; esac

# ---- prune and migrate take a slot as a lease of its own
t=$("$R" acquire one --slots 1 --print-token)
expect_rc 0 "$R" release one@1of1 --lease-token "$t"
expect_rc 0 "$R" --json status one@1of1
g=$(jout lease.transitions)
expect_rc 0 faketime -f '+2d' "$R" reconcile --prune-released 1 --fail-on never
git --git-dir="$S" for-each-ref 'refs/leases-archive/one@1of1/' | grep -q . || fail "one@1of1 not archived"
[ -z "$(git --git-dir="$S" for-each-ref refs/leases/one@1of1)" ] || fail "one@1of1 not deleted"
expect_rc 0 "$R" --json acquire one --slots 1
[ "$(jout name)" = one@1of1 ] || fail "acquire one --slots 1: $(cat "$TMPDIR/out")"
[ "$(jout lease.transitions)" = $((g + 1)) ] || fail "the slot's generation does not continue past its archive ($g)"
# a pre-bump payload on a slot (1.0.0, no ttl_seconds) is migrated by its name
git --git-dir="$S" cat-file commit refs/leases/one@1of1 |
  sed 's/,"ttl_seconds":300//; s/"sdlc_version":"1.2.0"/"sdlc_version":"1.0.0"/' >"$TMPDIR/c"
git --git-dir="$S" update-ref refs/leases/one@1of1 "$(git --git-dir="$S" hash-object -t commit -w "$TMPDIR/c")"
expect_rc 0 "$R" migrate --apply
grep -q '^one@1of1 *1.0.0 *1.2.0 *commit-time *migrated' "$TMPDIR/out" || fail "migrate: $(cat "$TMPDIR/out")"
expect_rc 0 "$R" --json status one@1of1
[ "$(jout lease.ttl_seconds)" = 300 ] || fail "after migrate: $(cat "$TMPDIR/out")"
echo "ok"
