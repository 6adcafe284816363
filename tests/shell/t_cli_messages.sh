#!/bin/sh
# shellcheck disable=SC1091,SC2015  # sourced helper; A && B || fail is intended
# Issue 19: every message names what is wrong, with the real bounds and unit:
# --ttl against the bounds of the store in use (local 5..86400), --max in
# entries, --prune-released in days, --wait naming 'forever'; a --token-file
# that is a directory says so; no repeated prefix ("invalid lease name: name:",
# "invalid namespace: namespace:"); no empty reason after a colon (a held ref
# lock); a message longer than its buffer ends in "...".
. "$(dirname "$0")/lease_lib.sh"
cd "$TMPDIR" || exit 1

err_is 64 "--ttl: 0 s is outside this local store's bounds 5..86400 s" "$R" acquire a --ttl 0
err_is 64 "--ttl: 4 s is outside this local store's bounds 5..86400 s" "$R" acquire a --ttl 4
err_is 64 "--ttl: 86401 s is outside this local store's bounds 5..86400 s" "$R" acquire a --ttl 86401
err_is 64 "--ttl: -3 s is outside this local store's bounds 5..86400 s" "$R" reacquire a --lease-token 00112233445566778899aabbccddeeff --ttl -3
err_is 64 "--ttl: 'abc' is not a whole number of seconds" "$R" acquire a --ttl abc
# --ttl given before --store: still the bounds of the store named after it
err_is 64 "local store's bounds 5..86400" "$R" acquire a --ttl 1 --store "local:$S"
[ -z "$(refs)" ] || fail "a rejected --ttl wrote: $(refs)"
err_is 64 "--max: '0' is not a whole number of entries in 1..100000000" "$R" history a --max 0
err_is 64 "--prune-released: '-1' is not a whole number of days in 0..36500" "$R" reconcile --prune-released -1
! grep -q seconds "$TMPDIR/err" || fail "--prune-released talks about seconds"
err_is 64 "--wait: 'soon' is neither a whole number of seconds in 0..86400 nor 'forever'" "$R" acquire a --wait soon
err_is 64 "--assumed-ttl: '0' is not a whole number of seconds in 5..86400 on a local store" "$R" migrate --assumed-ttl 0

mkdir tokdir
err_is 78 "--token-file $TMPDIR/tokdir is a directory, not a file holding the token" "$R" --token-file "$TMPDIR/tokdir" status a
: >empty
err_is 78 "is empty; put the GitHub token in it" "$R" --token-file "$TMPDIR/empty" status a

err_is 64 "invalid lease name: must not contain '/'" "$R" acquire a/b
! grep -q "name: name:\|lease name: name" "$TMPDIR/err" || fail "repeated prefix: $(cat "$TMPDIR/err")"
err_is 64 "invalid namespace: must start with a lowercase letter" "$R" --namespace 9x status a
! grep -q "namespace: namespace:" "$TMPDIR/err" || fail "repeated prefix: $(cat "$TMPDIR/err")"

# a held ref lock: the message ends in a reason, not in ": "
mkdir -p "$S/refs/leases" && : >"$S/refs/leases/lk.lock"
err_is 75 "ref lock held by another writer" "$R" acquire lk
! grep -qE ': ( |\(|$)' "$TMPDIR/err" || fail "an empty reason: $(cat "$TMPDIR/err")"
rm -f "$S/refs/leases/lk.lock"

# a message longer than the buffer is marked as cut
long=$(printf '%03000d' 0)
expect_rc 78 "$R" --store "local:$TMPDIR/$long" status a
grep -q '\.\.\.$' "$TMPDIR/err" || fail "a cut message is not marked: $(tail -c 80 "$TMPDIR/err")"
expect_rc 78 "$R" --json --store "local:$TMPDIR/$long" status a
jparse <"$TMPDIR/out"
case $(jv error.message) in *...) ;; *) fail "JSON message not marked as cut" ;; esac

# unknown options and commands say where to look
err_is 64 "unknown option '-Z' (see --help)" "$R" -Z status a
err_is 64 "unknown command 'stauts' (see 'reflease --help')" "$R" stauts a
echo "t_cli_messages: ok"
