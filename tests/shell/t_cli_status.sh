#!/bin/sh
# shellcheck disable=SC1091,SC2015  # sourced helper; A && B || fail is intended
# Issue 19: what `status` and `list` show and how `status` exits.
# - a released lease reads "released ... at T", never "expires ... (0s)/(-1s)";
#   an expired one "expired T (... ago)", a live one "expires T (in ...)";
# - `list` prints a header, like reconcile;
# - plain `status` exits 0 in every state; `status --fail-if-held` exits 3 only
#   while another identity holds the lease live (lock-action's fail_if_locked).
. "$(dirname "$0")/lease_lib.sh"
cd "$TMPDIR" || exit 1

# absent
expect_rc 0 "$R" status s1
expect_rc 0 "$R" status s1 --fail-if-held
grep -q "^s1: absent" "$TMPDIR/out" || fail "absent: $(cat "$TMPDIR/out")"
# live, held by alice (this identity) and seen by bob
T=$(tok s1 --ttl 60)
expect_rc 0 "$R" status s1
grep -q "^s1: live — claimed by alice on h1, expires .* (in [0-9hms]*), generation 0$" "$TMPDIR/out" ||
  fail "live line: $(cat "$TMPDIR/out")"
expect_rc 0 "$R" status s1 --fail-if-held
expect_rc 0 "$R" --owner bob status s1
expect_rc 3 "$R" --owner bob status s1 --fail-if-held
grep -q "^s1: live" "$TMPDIR/out" || fail "--fail-if-held still shows the lease"
expect_rc 3 "$R" --host h2 status s1 --fail-if-held # same owner, other host: another identity
expect_rc 3 "$R" --owner bob --json status --fail-if-held s1
[ "$(jout status)" = live ] || fail "JSON with --fail-if-held"
# expired (later): free for --fail-if-held
expect_rc 0 faketime -f +120s "$R" --owner bob status s1 --fail-if-held
grep -q "^s1: expired — claimed by alice on h1, expired .* ([0-9hms]* ago), generation 0$" "$TMPDIR/out" ||
  fail "expired line: $(cat "$TMPDIR/out")"
# released
expect_rc 0 "$R" release s1 --lease-token "$T"
for who in alice bob; do
  expect_rc 0 "$R" --owner "$who" status s1 --fail-if-held
  grep -q "^s1: released — released by alice on h1 at [0-9TZ:-]*, generation 0$" "$TMPDIR/out" ||
    fail "released line: $(cat "$TMPDIR/out")"
  ! grep -q "(0s)\|(-[0-9]*s)\|expires" "$TMPDIR/out" || fail "released shows an expiry: $(cat "$TMPDIR/out")"
done
expect_rc 0 "$R" release s1 --lease-token "$T" # already_released, the same display
! grep -q "(0s)\|(-1s)" "$TMPDIR/out" || fail "already_released shows (0s)"
expect_rc 64 "$R" status s1 --fail-if-helt

# list: a header, then one line per lease
expect_rc 0 "$R" acquire s2 --ttl 60
expect_rc 0 "$R" list
head -n 1 "$TMPDIR/out" | grep -q "^NAME  *PHASE  *STATUS  *OWNER  *EXPIRES_AT  *HOST$" || fail "list header: $(head -n 1 "$TMPDIR/out")"
[ "$(wc -l <"$TMPDIR/out")" -eq 3 ] || fail "list lines: $(cat "$TMPDIR/out")"
grep -q "^s2  *claimed  *live  *alice  *[0-9TZ:-]*  *h1$" "$TMPDIR/out" || fail "list row: $(cat "$TMPDIR/out")"
expect_rc 0 "$R" list --json
[ "$(jout namespace)" = leases ] || fail "list --json"
# N3 (issue 40): a lease of a newer schema (2.0.0) keeps the table's columns:
# "?" and "-" in them, the reason on its own line below
G() { git --git-dir="$S" "$@"; }
G cat-file commit refs/leases/s2 | sed '1,/^$/d' | sed 's/"sdlc_version":"[0-9.]*"/"sdlc_version":"2.0.0"/' >"$TMPDIR/msg"
grep -q '"sdlc_version":"2.0.0"' "$TMPDIR/msg" || fail "N3: no payload to bump: $(cat "$TMPDIR/msg")"
G update-ref refs/leases/n3 "$(G commit-tree "$(G hash-object -t tree -w /dev/null)" <"$TMPDIR/msg")"
expect_rc 0 "$R" list
grep -q "^n3  *?  *unsupported-version  *?  *-  *-$" "$TMPDIR/out" || fail "N3: row: $(cat "$TMPDIR/out")"
grep -A1 "^n3 " "$TMPDIR/out" | tail -n 1 | grep -q "^    sdlc_version: major version 2 is unsupported" || fail "N3: reason line: $(cat "$TMPDIR/out")"
# every row's OWNER starts in the header's OWNER column
col=$(head -n 1 "$TMPDIR/out" | awk '{ print index($0, "OWNER") }')
for n in s2 n3; do
  line=$(grep "^$n " "$TMPDIR/out")
  [ "$(printf '%s\n' "$line" | cut -c"$col")" != " " ] || fail "N3: $n's OWNER is not under OWNER: $(cat "$TMPDIR/out")"
done
echo "t_cli_status: ok"
