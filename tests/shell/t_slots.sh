#!/bin/sh
# shellcheck disable=SC1091  # sourced helper
# test: seconds 19
# N-slot leases (issue 27, protocol.md "Slots") on a local store: 8 real
# processes on `run pool --slots 3` never have more than 3 guarded commands
# running at once — counted by the commands themselves under flock(1), not
# by reflease — and every one of them gets in; the slot count is a
# configuration each acquire must repeat (exit 78 naming both counts, also
# when two counts race); a slot is an ordinary lease for status, list,
# history, heartbeat, release and reconcile.
. "$(dirname "$0")/lease_lib.sh"

# ---- never more than N holders, and each gets in
. "$(dirname "$0")/slots_lib.sh"
slots_pool local 8 3 30

# ---- the count is stored: another N is a configuration error naming both
t=$("$R" acquire db --slots 2 --print-token)
err_is 78 "db has 2 slots (refs/leases/db@" "$R" acquire db --slots 3
grep -qF "is held), not 3" "$TMPDIR/err" || fail "the error does not name 3: $(cat "$TMPDIR/err")"
err_is 78 "db has 2 slots" "$R" run db --slots 5 -- true
t2=$("$R" acquire db --slots 2 --print-token --owner bob)
expect_rc 3 "$R" acquire db --slots 2 --owner carol
grep -qF "all 2 slots of db are held" "$TMPDIR/out" || fail "held: $(cat "$TMPDIR/out")"
expect_rc 0 "$R" list
[ "$(grep -c '^db@[12]of2 ' "$TMPDIR/out")" -eq 2 ] || fail "list does not show both slots"
# a plain lease and slots of one name do not mix
"$R" acquire plain >/dev/null
err_is 78 "plain is a plain lease (refs/leases/plain is held)" "$R" acquire plain --slots 2
# a slot's own name is taken only through --slots
err_is 64 "db@1of2 is slot 1 of db's 2 slots" "$R" acquire db@1of2
err_is 64 "--slots" "$R" acquire db --slots 0
err_is 64 "--slots" "$R" acquire db --slots 65
err_is 64 "--slots takes one NAME (2 given)" "$R" acquire db prod --slots 3
err_is 64 "'@' only in a slot name" "$R" status db@0of2
long=$(printf 'a%.0s' $(seq 1 96))
err_is 64 "too long for 10 slots" "$R" acquire "$long" --slots 10
# B72 (issue 40): the rule and the remedy, whole; the long name not spelled out
err_is 64 "a lease name has at most 100 bytes, so with --slots 10 NAME may have at most 93 bytes: use a shorter NAME" "$R" acquire "$long" --slots 10
! grep -q "$long" "$TMPDIR/err" || fail "B72: the name is spelled out: $(cat "$TMPDIR/err")"
! grep -q '\.\.\.$' "$TMPDIR/err" || fail "B72: the message is cut: $(cat "$TMPDIR/err")"

# ---- a slot is an ordinary lease: by its name and its token
for s in db@1of2 db@2of2; do
  if "$R" heartbeat "$s" --lease-token "$t" --ttl 60 >/dev/null 2>&1; then mine=$s; fi
done
[ -n "${mine:-}" ] || fail "no slot answers to the first token"
expect_rc 0 "$R" --json status "$mine"
[ "$(jout status)" = live ] || fail "status $mine: $(cat "$TMPDIR/out")"
expect_rc 0 "$R" release "$mine" --lease-token "$t"
expect_rc 0 "$R" history "$mine"
grep -q release "$TMPDIR/out" || fail "history of $mine lacks the release"
# the freed slot is taken again, the other still has bob's token
expect_rc 0 "$R" --json acquire db --slots 2 --owner carol
[ "$(jout name)" = "$mine" ] || fail "carol did not get the freed slot $mine"
other=db@1of2; [ "$mine" = db@1of2 ] && other=db@2of2
expect_rc 0 "$R" heartbeat "$other" --lease-token "$t2" --ttl 60
expect_rc 0 "$R" reconcile
[ "$(grep -c '^db@[12]of2 ' "$TMPDIR/out")" -eq 2 ] || fail "reconcile does not list the slots"

# ---- two counts racing: never both hold (each looks again after its write)
k=1
while [ "$k" -le 10 ]; do
  "$R" acquire "race$k" --slots 2 >/dev/null 2>&1 &
  a=$!
  "$R" acquire "race$k" --slots 3 --owner bob >/dev/null 2>&1 &
  b=$!
  ra=0; rb=0
  wait "$a" || ra=$?
  wait "$b" || rb=$?
  [ "$ra" -eq 0 ] && [ "$rb" -eq 0 ] && fail "race$k: --slots 2 and --slots 3 both acquired"
  [ "$ra" -eq 78 ] || [ "$rb" -eq 78 ] || fail "race$k: exits $ra and $rb, no configuration error"
  k=$((k + 1))
done
# ---- reconcile, reap, prune and migrate take slots as leases of their own;
# N changes once the old slots are gone
pt=$("$R" acquire db --print-token) # a plain acquire does not look at slots
# ... reconcile does: the held slots beside the held plain db are an error
expect_rc 1 "$R" --json reconcile
python3 - "$TMPDIR/out" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
names = {l["name"] for l in doc["leases"]}
for n in ("db", "db@1of2", "db@2of2", "pool@1of3"):
    assert n in names, (n, names)
mism = {l["name"]: a["other"] for l in doc["leases"] for a in l["anomalies"]
        if a["id"] == "slot-count-mismatch"}
assert mism == {"db@1of2": "db", "db@2of2": "db"}, mism
PY
expect_rc 0 "$R" migrate
grep -q "db@1of2" "$TMPDIR/out" || fail "migrate does not show the slots: $(cat "$TMPDIR/out")"
expect_rc 0 "$R" release db --lease-token "$pt"
# an hour later: the slots are expired, reaped, then pruned (archived)
expect_rc 0 faketime -f '+1h' "$R" --json reconcile --reap
python3 - "$TMPDIR/out" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
reaped = sorted(r["name"] if isinstance(r, dict) else r for r in doc["reaped"])
assert "db@1of2" in reaped and "db@2of2" in reaped, reaped
PY
expect_rc 0 faketime -f '+1h' "$R" reconcile --prune-released 0
[ -z "$(git -C "$S" for-each-ref 'refs/leases/db*')" ] || fail "db's refs not pruned: $(git -C "$S" for-each-ref 'refs/leases/db*')"
git -C "$S" for-each-ref 'refs/leases-archive/db@1of2/' | grep -q . || fail "slot db@1of2 not archived"
expect_rc 0 "$R" --json acquire db --slots 3
case "$(jout name)" in db@[123]of3) ;; *) fail "acquire db --slots 3 after the prune: $(cat "$TMPDIR/out")" ;; esac
# every slot released: the count may change (released slots hold nothing)
expect_rc 0 "$R" release "$(jout name)" --lease-token "$(jout lease.lease_token)"
expect_rc 0 "$R" --json acquire db --slots 4
case "$(jout name)" in db@[1234]of4) ;; *) fail "acquire db --slots 4 once all are released: $(cat "$TMPDIR/out")" ;; esac
err_is 78 "db has 4 slots" "$R" acquire db --slots 3
echo "ok"
