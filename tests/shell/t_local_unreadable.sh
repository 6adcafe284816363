#!/bin/sh
# shellcheck disable=SC1091,SC2015  # sourced helper; A && B || fail is intended
# Issue 14 item 2 (F27): every unreadable tip is recoverable. A lease ref
# whose object is missing (pruned by `git prune` racing a write, a broken
# copy), a ref at a blob (not a commit), a symbolic ref and a payload no build
# reads: status / acquire / break exit 65 (permanent, never 75) with the
# reason, reconcile reports each under its own anomaly id, and
# `break --force` replaces each by CAS on the oid observed, with
# transitions = 1 + the highest readable value in the chain or archives.
. "$(dirname "$0")/lease_lib.sh"
G() { git --git-dir="$S" "$@"; }
trans() { "$R" --json status "$1" | jget lease.transitions; }

# m: three tenures (transitions 2), archived by a prune, taken again (3);
# then its tip object vanishes: the chain below it cannot be read any more,
# the archive still says 2
for _ in 1 2 3; do
  t=$(tok m --ttl 60)
  expect_rc 0 "$R" release m --lease-token "$t"
done
[ "$(trans m)" = 2 ] || fail "setup: transitions $(trans m)"
expect_rc 0 "$R" reconcile --prune-released 0
t=$(tok m --ttl 60)
[ "$(trans m)" = 3 ] || fail "setup: transitions $(trans m) after the archive"
tip=$(G rev-parse refs/leases/m)
# the tip alone is gone (its loose file, as `git prune` racing the write
# would leave it)
find "$S/objects" -type f -path "*/${tip%"${tip#??}"}/${tip#??}" -delete
G cat-file -e "$tip" 2>/dev/null && fail "setup: $tip still readable"

# b: a ref at a blob; s: a symbolic ref (dangling); g: a payload no build reads
blob=$(echo "not a lease" | G hash-object -w --stdin)
G update-ref refs/leases/b "$blob"
G symbolic-ref refs/leases/s refs/heads/nowhere
tg=$(tok g --ttl 60)
expect_rc 0 "$R" release g --lease-token "$tg"
garbage=$(G commit-tree -p "$(G rev-parse refs/leases/g)" -m "g: garbage" "$(G hash-object -t tree -w /dev/null)")
G update-ref refs/leases/g "$garbage"

for n in m b s g; do
  expect_rc 65 "$R" status "$n"
  cat "$TMPDIR/out" "$TMPDIR/err" | grep -q "unreadable payload" || fail "$n: no reason"
  expect_rc 65 "$R" --owner bob acquire "$n"
  expect_rc 65 "$R" --owner bob heartbeat "$n" --lease-token "$t"
done
"$R" status m 2>&1 | grep -q "object $tip is missing" || fail "missing object not named"
"$R" status s 2>&1 | grep -q "symbolic ref to refs/heads/nowhere" || fail "symbolic ref not named"

expect_rc 1 "$R" --json reconcile
python3 - "$TMPDIR/out" <<'PY' || fail "reconcile anomaly ids"
import json, sys
d = json.load(open(sys.argv[1]))
ids = {l["name"]: [a["id"] for a in l["anomalies"]] for l in d["leases"]}
want = {"m": "missing-object", "b": "not-a-commit", "s": "symbolic-ref", "g": "malformed-payload"}
for n, i in want.items():
    assert ids.get(n) == [i], (n, ids.get(n))
PY
# --reap does not touch them (they are not expired leases); break --force does
expect_rc 1 "$R" reconcile --reap
for n in m b s g; do
  before=$(G rev-parse "refs/leases/$n" 2>/dev/null || echo sym)
  expect_rc 0 "$R" --json break --force "$n"
  [ "$(jout status)" = broken ] || fail "$n: $(jout status)"
  expect_rc 0 "$R" --json status "$n"
  [ "$(jout status)" = released ] || fail "$n not released"
  [ "$(G symbolic-ref -q "refs/leases/$n" || true)" = "" ] || fail "$n still symbolic"
  [ "$(G rev-parse "refs/leases/$n")" != "$before" ] || fail "$n unchanged"
done
# transitions continue after the highest readable value: m's archive has 2,
# its tip (3) is the missing object, which may have issued one more than its
# parent: -> 4, above every generation issued (issue 23, F34); g's parent
# was released at 0 -> 1
[ "$(trans m)" = 4 ] || fail "m: transitions $(trans m), want 4"
[ "$(trans g)" = 1 ] || fail "g: transitions $(trans g), want 1"
[ "$(trans b)" = 0 ] || fail "b: transitions $(trans b), want 0"
# an archive's value counts too: prune b, make it unreadable, break it
expect_rc 0 "$R" reconcile --prune-released 0
G for-each-ref refs/leases-archive/b/ | grep -q . || fail "b not archived"
G update-ref refs/leases/b "$blob"
expect_rc 0 "$R" break --force b
[ "$(trans b)" = 1 ] || fail "b after archive: transitions $(trans b), want 1"
# every name is usable again
for n in m b s g; do expect_rc 0 "$R" --owner bob acquire "$n" --ttl 60; done
expect_rc 0 "$R" reconcile
G fsck --no-dangling >"$TMPDIR/fsck" 2>&1 || { cat "$TMPDIR/fsck"; fail "git fsck"; }
echo ok
