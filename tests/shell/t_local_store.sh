#!/bin/sh
# shellcheck disable=SC1091,SC2015  # sourced helper; A && B || fail is intended
# Issue 14 items 3 and 4 (local store, real git): the store is what the user
# named — local:PATH is PATH itself (a bare repository, a working tree's top
# or its .git), never a search upward; `init` on an existing repository only
# sets its config ("configured") and adds no file to its working tree;
# created and existing stores get the same settings. Clear errors: a D/F ref
# conflict (F10) exits 78 naming the other ref, another user's store explains
# safe.directory, a stale reflease-delete.lock / packed-refs.lock is reported
# by reconcile and removed by --reap and blocks no delete.
. "$(dirname "$0")/lease_lib.sh"
G() { git --git-dir="$S" "$@"; }
# run in directory $1 with no store given (the default store)
in_dir() { d=$1; shift; (cd "$d" && exec env -u REFLEASE_STORE "$@"); }

# --- item 3: what local:PATH names
W="$TMPDIR/work"
git init -q "$W"
echo hello >"$W/file"
git -C "$W" add file
git -C "$W" -c user.name=t -c user.email=t@t commit -qm init
mkdir -p "$W/sub/dir"
expect_rc 78 "$R" --store "local:$W/sub/dir" status x
grep -q "$W/sub/dir" "$TMPDIR/err" || fail "78 does not name PATH"
expect_rc 78 "$R" --store "local:$S/refs" status x
grep -q "$S/refs" "$TMPDIR/err" || fail "78 does not name PATH"
expect_rc 0 "$R" --store "local:$W" status x
expect_rc 0 "$R" --store "local:$W/.git" status x
# the default store (no --store) is the repository the user stands in
expect_rc 0 in_dir "$W/sub/dir" "$R" acquire d --ttl 60
git -C "$W" rev-parse -q --verify refs/leases/d >/dev/null || fail "default store missed"
mkdir -p "$TMPDIR/nowhere"
expect_rc 78 in_dir "$TMPDIR/nowhere" "$R" status x
grep -q "no git repository here" "$TMPDIR/err" || fail "no repository: reason"

# init on an existing working tree: configured, nothing added to it
before=$(cd "$W" && find . -path ./.git -prune -o -print | sort)
expect_rc 0 "$R" init "$W"
grep -q "^configured" "$TMPDIR/out" || fail "init on a repository did not say configured"
after=$(cd "$W" && find . -path ./.git -prune -o -print | sort)
[ "$before" = "$after" ] || fail "init added files to the working tree"
[ -z "$(git -C "$W" status --porcelain)" ] || fail "working tree not clean after init"
[ "$(git -C "$W" config core.logAllRefUpdates)" = true ] || fail "existing: setting"
expect_rc 0 "$R" --json init "$W/.git"
[ "$(jout status)" = configured ] || fail "init .git: $(jout status)"
expect_rc 0 "$R" --json init "$S"
[ "$(jout status)" = configured ] || fail "init on a store: $(jout status)"
# inside a working tree: refused, nothing created
expect_rc 78 "$R" init "$W/sub/dir"
grep -q "inside the git repository" "$TMPDIR/err" || fail "init inside a work tree: reason"
[ -z "$(ls -A "$W/sub/dir")" ] || fail "init wrote into a working tree"
expect_rc 78 "$R" init "$W/sub/new/store.git"
[ ! -e "$W/sub/new" ] || fail "init created a directory in a working tree"
# created: a bare repository with the same settings
expect_rc 0 "$R" --json init "$TMPDIR/new.git"
[ "$(jout status)" = initialized ] || fail "init new: $(jout status)"
[ "$(git --git-dir="$TMPDIR/new.git" rev-parse --is-bare-repository)" = true ] || fail "not bare"
[ "$(git --git-dir="$TMPDIR/new.git" config core.logAllRefUpdates)" = true ] || fail "new: setting"

# --- item 4: a foreign ref below the name (D/F conflict, F10)
G update-ref refs/leases/a/b "$(G hash-object -w -t blob /dev/null)"
expect_rc 78 "$R" acquire a --ttl 60
grep -q "refs/leases/a/b" "$TMPDIR/err" || fail "D/F: the other ref is not named"
G pack-refs --all --prune
expect_rc 78 "$R" acquire a --ttl 60
grep -q "refs/leases/a/b" "$TMPDIR/err" || fail "D/F packed: the other ref is not named"
G update-ref -d refs/leases/a/b
expect_rc 0 "$R" acquire a --ttl 60

# --- a symbolic ref under refs/leases/: a clear reason, permanent
G symbolic-ref refs/leases/sym refs/heads/main
expect_rc 65 "$R" acquire sym
grep -q "symbolic ref to refs/heads/main" "$TMPDIR/err" || fail "symbolic ref: reason"

# --- stale store locks: reported, reaped, and no delete waits for the old one
t=$(tok p --ttl 60)
expect_rc 0 "$R" release p --lease-token "$t"
: >"$S/reflease-delete.lock"
: >"$S/packed-refs.lock"
touch -d '5 minutes ago' "$S/reflease-delete.lock" "$S/packed-refs.lock"
expect_rc 0 "$R" --json reconcile --fail-on never
python3 - "$TMPDIR/out" <<'PY' || fail "stale store locks not reported"
import json, sys
d = json.load(open(sys.argv[1]))
ids = {l["name"]: [a["id"] for a in l["anomalies"]] for l in d["leases"]}
for n in ("reflease-delete.lock", "packed-refs.lock"):
    assert ids.get(n) == ["stale-ref-lock"], (n, ids)
PY
expect_rc 0 "$R" --json reconcile --reap --fail-on never
[ ! -e "$S/reflease-delete.lock" ] && [ ! -e "$S/packed-refs.lock" ] || fail "not reaped"
: >"$S/reflease-delete.lock"
expect_rc 0 "$R" reconcile --prune-released 0 --fail-on never
grep -q "pruned 1" "$TMPDIR/out" || fail "a stale reflease-delete.lock blocked a prune"
rm -f "$S/reflease-delete.lock"

# --- another user's store: safe.directory explained (needs root to chown)
O="$TMPDIR/other"
"$R" init "$O" >/dev/null
if [ "$(id -u)" = 0 ] && chown -R nobody "$O" 2>/dev/null; then
  expect_rc 78 env HOME="$TMPDIR" "$R" --store "local:$O" status x
  grep -q "safe.directory" "$TMPDIR/err" && grep -q "owned by another user" "$TMPDIR/err" ||
    fail "another user's store: reason"
  HOME="$TMPDIR" git config --global --add safe.directory "$O"
  expect_rc 0 env HOME="$TMPDIR" "$R" --store "local:$O" status x
else
  echo "SKIP another user's store: needs root (chown)"
fi
echo ok
