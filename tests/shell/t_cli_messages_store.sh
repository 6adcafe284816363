#!/bin/sh
# shellcheck disable=SC1091,SC2015  # sourced helper; A && B || fail is intended
# Issue 23 messages: each says what is wrong, once, with the right status.
# An unreadable repository is 77 "exists but ... may not read it" (never
# "`reflease init` makes one"); -v -v shows the store's debug log on local:;
# an overflowing number is "out of range" with its bound; an option without
# its value says so; `held` names the holder once; history signs a negative
# heartbeat interval once; a summary cell has no empty first line.
. "$(dirname "$0")/lease_lib.sh"
cli=$(cd "$(dirname "$0")/../.." && pwd)/docs/cli.md
cd "$TMPDIR" || exit 1

# --- numbers and options ---------------------------------------------------
err_is 64 "--ttl: 99999999999999999999 s is outside this local store's bounds 5..86400 s" \
  "$R" acquire a --ttl 99999999999999999999
err_is 64 "--grace: '99999999999999999999' is out of range: at most 86400 seconds" \
  "$R" reconcile --grace 99999999999999999999
err_is 64 "--timeout: '-99999999999999999999' is out of range: at least 1 seconds" \
  "$R" --timeout -99999999999999999999 status a
err_is 64 "option '--store' needs a value" "$R" --store
err_is 64 "option '--store' needs a value" "$R" status a --store
err_is 64 "option '--ttl' needs a value" "$R" acquire a --ttl
err_is 64 "unknown or ambiguous option '--bogus'" "$R" --bogus status a
[ -z "$(refs)" ] || fail "a rejected option wrote: $(refs)"

# --- -v -v: the store's debug log, one line per transport call -------------
expect_rc 0 "$R" -v -v acquire a --ttl 60
grep -q "debug: local: read_ref refs/leases/a -> ok" "$TMPDIR/err" || fail "-v -v: no read_ref line"
grep -q "debug: local: create_ref refs/leases/a -> ok" "$TMPDIR/err" || fail "-v -v: no create_ref line"
expect_rc 0 "$R" -v status a
grep -q "debug:" "$TMPDIR/err" && fail "-v alone shows the debug log"

# --- held names the holder once ---------------------------------------------
expect_rc 3 "$R" --owner bob acquire a
[ "$(grep -c "alice on h1" "$TMPDIR/out")" = 1 ] || fail "held names the holder twice: $(cat "$TMPDIR/out")"
expect_rc 3 "$R" --owner bob acquire a --wait 1
[ "$(grep -c "alice on h1" "$TMPDIR/out")" = 1 ] || fail "held after a wait: $(cat "$TMPDIR/out")"
grep -q "still held after waiting 1 s" "$TMPDIR/out" || fail "the wait's outcome is gone"

# --- history: a heartbeat time before its parent's is "-Ns", not "+-Ns" ------
t=$(tok h --ttl 60)
expect_rc 0 faketime -f -100m "$R" heartbeat h --ttl 600 --lease-token "$t"
expect_rc 0 "$R" history h
grep -q "heartbeat -[0-9]*s" "$TMPDIR/out" || fail "history: $(cat "$TMPDIR/out")"
grep -q "+-" "$TMPDIR/out" && fail "history prints +-: $(cat "$TMPDIR/out")"

# --- summary: an action without anomalies is not preceded by an empty line --
tp=$(tok p --ttl 60)
expect_rc 0 "$R" release p --lease-token "$tp"
expect_rc 0 "$R" reconcile --prune-released 0 --summary "$TMPDIR/sum.md"
grep -q "^| p | released |.* | pruned |$" "$TMPDIR/sum.md" || fail "summary row: $(grep '^| p ' "$TMPDIR/sum.md")"
grep -q "| <br>" "$TMPDIR/sum.md" && fail "an empty first line in a cell: $(cat "$TMPDIR/sum.md")"

# --- output files: one status for all (78), an empty name is usage (64) ----
err_is 78 "--json-file $TMPDIR/nodir/f.json: cannot write" "$R" run o --json-file "$TMPDIR/nodir/f.json" -- true
err_is 78 "--summary $TMPDIR/nodir/s.md: cannot write" "$R" reconcile --summary "$TMPDIR/nodir/s.md"
err_is 64 "--summary: empty file name" "$R" reconcile --summary ""
err_is 64 "--json-file: empty file name" "$R" run o --json-file "" -- true

# --- docs: what the JSON carries is documented in cli.md --------------------
for st in live expired released malformed unsupported-version unreadable; do
  grep -q "\`$st\`" "$cli" || fail "cli.md does not document list status $st"
done
expect_rc 0 "$R" --json history h
python3 - "$TMPDIR/out" "$cli" <<'PY' || fail "history --json: undocumented keys"
import json, re, sys
d = json.load(open(sys.argv[1]))
doc = open(sys.argv[2]).read()
para = doc[doc.index("`history --json`"):]
para = para[:para.index("\n\n")]
keys = set(d) | {k for it in d["items"] for k in it}
missing = [k for k in sorted(keys) if '"%s"' % k not in para]
assert not missing, missing
assert all("expires_in" not in it.get("lease", {}) for it in d["items"])
assert "without\n`expires_in`" in para or "without `expires_in`" in para
PY

# --- a repository this user may not read: 77, saying so ---------------------
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null 2>&1 && id nobody >/dev/null 2>&1; then
  chmod 711 "$TMPDIR"
  git init -q --bare "$TMPDIR/closed.git"
  mkdir -p "$TMPDIR/nh"
  git config --file "$TMPDIR/nh/.gitconfig" --add safe.directory "$TMPDIR/closed.git"
  chown -R nobody "$TMPDIR/nh"
  N() { setpriv --reuid nobody --regid "$(id -g nobody)" --clear-groups env HOME="$TMPDIR/nh" "$@"; }
  chmod 700 "$TMPDIR/closed.git"
  err_is 77 "exists but this user (uid $(id -u nobody)) may not read it" N "$R" --store "local:$TMPDIR/closed.git" list
  grep -q "reflease init" "$TMPDIR/err" && fail "an unreadable repository: says init makes one"
  chmod 755 "$TMPDIR/closed.git"
  # a directory inside it: 77 naming that directory
  chmod 700 "$TMPDIR/closed.git/refs"
  err_is 77 "$TMPDIR/closed.git/refs" N "$R" --store "local:$TMPDIR/closed.git" list
  grep -q "Permission denied" "$TMPDIR/err" || fail "no cause: $(cat "$TMPDIR/err")"
  chmod 755 "$TMPDIR/closed.git/refs"
else
  echo "SKIP unreadable repository: needs root, setpriv and the user nobody"
fi
echo ok
