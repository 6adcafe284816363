#!/bin/sh
# shellcheck disable=SC1091,SC2015  # sourced helper; A && B || fail is intended
# Issue 23 (F27, F33): no name in the namespace goes unseen. An empty or garbled loose
# ref file (a crashed writer's residue) and a ref file this user may not
# read are listed (`unreadable`), reported by reconcile (`unreadable-ref`,
# error, naming the file), refused by status / acquire / break without
# --force (65; 77 for permission, naming the file, never 75 "locked"), and
# replaced by `break --force` by a CAS on what the file is observed at. A
# namespace directory that cannot be listed is 77 naming it (never "no
# leases", never 70).
. "$(dirname "$0")/lease_lib.sh"
G() { git --git-dir="$S" "$@"; }

for n in e g ok; do expect_rc 0 "$R" acquire "$n" --ttl 60; done
: >"$S/refs/leases/e"
printf 'zzz\n' >"$S/refs/leases/g"

expect_rc 0 "$R" --json list
python3 - "$TMPDIR/out" <<'PY' || fail "list --json: unreadable refs missing"
import json, sys
d = {l["name"]: l for l in json.load(open(sys.argv[1]))["leases"]}
for n in ("e", "g"):
    assert d[n]["status"] == "unreadable", d[n]
    assert "refs/leases/" + n in d[n]["error"], d[n]
assert d["ok"]["status"] == "live"
PY
expect_rc 0 "$R" list
# listed: a row for the name, the reason on the indented line under it (N4:
# the columns hold, whatever the reason's length)
listed() { # listed NAME PATTERN: NAME's row is unreadable and the next line says PATTERN
  awk -v n="$1" -v p="$2" '$1 == n && / unreadable / { getline; if ($0 ~ "^    " && $0 ~ p) ok = 1 }
    END { exit !ok }' "$TMPDIR/out"
}
listed e "refs/leases/e is empty" || fail "list: e: $(cat "$TMPDIR/out")"
listed g "refs/leases/g is not a ref" || fail "list: g: $(cat "$TMPDIR/out")"

expect_rc 1 "$R" reconcile --fail-on warning
grep -q "scanned 3 " "$TMPDIR/out" || fail "reconcile did not scan every name"
expect_rc 1 "$R" --json reconcile
python3 - "$TMPDIR/out" <<'PY' || fail "reconcile anomaly ids"
import json, sys
d = json.load(open(sys.argv[1]))
ids = {l["name"]: [a["id"] for a in l["anomalies"]] for l in d["leases"]}
assert ids.get("e") == ["unreadable-ref"], ids
assert ids.get("g") == ["unreadable-ref"], ids
PY

for n in e g; do
  expect_rc 65 "$R" status "$n"
  grep -q "refs/leases/$n" "$TMPDIR/out" || fail "$n: status does not name the file"
  expect_rc 65 "$R" --owner bob acquire "$n"
  # nothing readable shows it free: break without --force refuses
  expect_rc 65 "$R" break "$n"
  grep -q "needs --force" "$TMPDIR/err" || fail "$n: break without --force"
  expect_rc 0 "$R" --json break --force "$n"
  [ "$(jout status)" = broken ] || fail "$n: $(jout status)"
  G rev-parse --verify -q "refs/leases/$n" >/dev/null || fail "$n: git cannot read the ref"
  expect_rc 0 "$R" --owner bob acquire "$n" --ttl 60
done
G fsck --no-dangling >"$TMPDIR/fsck" 2>&1 || { cat "$TMPDIR/fsck"; fail "git fsck"; }

# a ref file (and a directory) this user may not read: as another user,
# since root reads everything
if [ "$(id -u)" -ne 0 ]; then
  echo "SKIP permission cases: they need root (to run as the user nobody)"
  echo ok
  exit 0
fi
command -v setpriv >/dev/null 2>&1 && id nobody >/dev/null 2>&1 ||
  { echo "SKIP permission cases: no setpriv or no user nobody"; echo ok; exit 0; }
chmod 711 "$TMPDIR"
mkdir -p "$TMPDIR/nh"
chown -R nobody "$S" "$TMPDIR/nh"
N() { setpriv --reuid nobody --regid "$(id -g nobody)" --clear-groups env HOME="$TMPDIR/nh" "$@"; }
chmod 000 "$S/refs/leases/g"
expect_rc 0 N "$R" list
listed g "cannot read the ref file .*refs/leases/g: Permission denied" ||
  fail "list: unreadable g: $(cat "$TMPDIR/out")"
expect_rc 1 N "$R" reconcile --fail-on warning
grep -q "unreadable-ref: cannot read the ref file" "$TMPDIR/out" || fail "reconcile: g"
for c in "status g" "acquire g" "break g"; do
  # shellcheck disable=SC2086  # word splitting of $c is intended
  expect_rc 77 N "$R" $c
  grep -q "refs/leases/g: Permission denied" "$TMPDIR/out" "$TMPDIR/err" || fail "$c: file not named"
  grep -q "locked" "$TMPDIR/err" && fail "$c: says locked"
done
expect_rc 0 N "$R" --json break --force g
[ "$(jout status)" = broken ] || fail "g: $(jout status)"
expect_rc 0 N "$R" status g
# a namespace directory that cannot be listed: 77 naming it
chmod 000 "$S/refs/leases"
for c in list reconcile "status ok"; do
  # shellcheck disable=SC2086
  expect_rc 77 N "$R" $c
  grep -q "$S/refs/leases" "$TMPDIR/err" || fail "$c: directory not named"
done
chmod 755 "$S/refs/leases"
echo ok
