#!/bin/sh
# shellcheck disable=SC1091,SC2015,SC2154  # sourced helpers (they set fpid, base); A && B || fail is intended
# Issue 40 item 7: `reflease check` verifies on scratch leases what exclusion
# rests on for a store — a replace from a stale oid is refused
# (cas-stale-rejected; on GitHub: updateRefs with force:true still enforces
# beforeOid), a multi-ref write is all-or-nothing (multi-ref-atomic), the
# store's clock is within the skew margin (clock-skew), the token can write
# (token-can-write) — prints each, and deletes what it wrote. It passes
# against a local store, the fake GitHub and a git daemon, and fails naming
# the property against a fake that ignores beforeOid under force:true.
. "$(dirname "$0")/lease_lib.sh"
. "$(dirname "$0")/fakegh_lib.sh"
. "$(dirname "$0")/gitsrv_lib.sh"
pids=""
trap 'for p in $pids; do kill "$p" 2>/dev/null || true; done' EXIT INT TERM

# what check printed for PROPERTY: its result word
result() { awk -v p="$1" '$2 == p { print $1 }' "$TMPDIR/out"; }
no_scratch() { # the store's refs hold no scratch lease
  ! grep -q reflease-check "$1" || fail "scratch leases left: $(cat "$1")"
}

# --- local
expect_rc 0 "$R" check
for p in token-can-write cas-stale-rejected multi-ref-atomic clock-skew cleanup; do
  [ "$(result $p)" = ok ] || fail "local: $p: $(cat "$TMPDIR/out")"
done
refs >"$TMPDIR/refs"
no_scratch "$TMPDIR/refs"
expect_rc 0 "$R" --json check
[ "$(jout status)" = pass ] && [ "$(jout store)" = local ] || fail "local --json: $(cat "$TMPDIR/out")"

# --- the fake GitHub, as GitHub documents it
fakegh_start --token tok
pids="$pids $fpid"
export GITHUB_TOKEN=tok
unset GITHUB_GRAPHQL_URL REFLEASE_GITHUB_TOKEN GITHUB_ACTIONS 2>/dev/null || true
GITHUB_API_URL=$base expect_rc 0 "$R" --store github:octo/leases check
for p in token-can-write cas-stale-rejected multi-ref-atomic clock-skew cleanup; do
  [ "$(result $p)" = ok ] || fail "github: $p: $(cat "$TMPDIR/out")"
done
grep -q "updateRefs with force:true and a stale beforeOid was refused" "$TMPDIR/out" || fail "github: $(cat "$TMPDIR/out")"
# the fake's refs (GitHub's "list matching references") hold no scratch lease
gh_refs() { curl -sf -H "Authorization: Bearer tok" "$base/repos/octo/leases/git/matching-refs/" >"$1" || fail "cannot list the fake's refs"; }
gh_refs "$TMPDIR/ghrefs"
no_scratch "$TMPDIR/ghrefs"
# --- a server that ignores beforeOid when force is true: check fails, naming it
fakegh_start_at "$TMPDIR/port2" --token tok --ignore-before-oid-when-forced
pids="$pids $fpid"
GITHUB_API_URL=$base expect_rc 1 "$R" --store github:octo/leases check
[ "$(result cas-stale-rejected)" = FAIL ] || fail "broken github: $(cat "$TMPDIR/out")"
grep -q "updateRefs with force:true and a stale beforeOid was applied" "$TMPDIR/out" || fail "broken github: $(cat "$TMPDIR/out")"
[ "$(result cleanup)" = ok ] || fail "broken github: cleanup: $(cat "$TMPDIR/out")"
GITHUB_API_URL=$base expect_rc 1 "$R" --store github:octo/leases --json check
[ "$(jout status)" = fail ] || fail "broken github --json: $(cat "$TMPDIR/out")"
gh_refs "$TMPDIR/ghrefs"
no_scratch "$TMPDIR/ghrefs"

# --- a git daemon (remote:): no atomic multi-ref write there, said as skip
root="$TMPDIR/srv"
mkdir -p "$root"
"$R" init "$root/s.git" >/dev/null
git_daemon_start "$root" s.git || fail "git daemon did not start"
pids="$pids $GITD_PID"
expect_rc 0 "$R" --store "remote:git://127.0.0.1:$GITD_PORT/s.git" check
for p in token-can-write cas-stale-rejected clock-skew cleanup; do
  [ "$(result $p)" = ok ] || fail "git daemon: $p: $(cat "$TMPDIR/out")"
done
[ "$(result multi-ref-atomic)" = skip ] || fail "git daemon: multi-ref-atomic: $(cat "$TMPDIR/out")"
git --git-dir="$root/s.git" for-each-ref >"$TMPDIR/refs"
no_scratch "$TMPDIR/refs"
echo "t_check: ok"
