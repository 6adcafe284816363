#!/bin/sh
# shellcheck disable=SC1091,SC2015,SC2016 # sourced helper; A && B || fail is intended; $0 expands in the inner sh
# Issue 42: stdout that cannot be written is exit 74 (EX_IOERR, cli.md "Exit
# status") for every command, as jq checks ferror/fclose on stdout before it
# exits; acquire --print-token whose token line cannot be written releases
# the lease at once (nobody could present the token) and exits 74, also into
# a pipe whose reader went away; --conflict-exit-code N on acquire and on
# status --fail-if-held replaces 3 (flock's "1 on conflict").
. "$(dirname "$0")/lease_lib.sh"
cd "$TMPDIR" || exit 1
phase() { "$R" --json status "$1" | sed -n 's/.*"phase":"\([a-z]*\)".*/\1/p'; }

if [ -w /dev/full ]; then
  # one answer of each kind into a full disk: 74, and the reason on stderr
  err_is 74 "cannot write standard output: " sh -c '"$0" status --json db >/dev/full' "$R"
  err_is 74 "cannot write standard output" sh -c '"$0" status db >/dev/full' "$R"
  err_is 74 "cannot write standard output" sh -c '"$0" list --json >/dev/full' "$R"
  err_is 74 "cannot write standard output" sh -c '"$0" version >/dev/full' "$R"
  err_is 74 "cannot write standard output" sh -c '"$0" --help >/dev/full' "$R"
  # a failure of its own stays the first cause (64 here), not 74
  expect_rc 64 sh -c '"$0" status "bad name" >/dev/full' "$R"
  # --print-token into a full disk: released at once, 74
  err_is 74 "cannot write the token to standard output (No space left on device): releasing pt" \
    sh -c '"$0" acquire pt --print-token >/dev/full' "$R"
  [ "$(phase pt)" = released ] || fail "pt is held with a token nobody has: $("$R" status pt)"
  err_is 74 "releasing s1 and the rest of its set" sh -c '"$0" acquire s1 s2 --print-token >/dev/full' "$R"
  [ "$(phase s1) $(phase s2)" = "released released" ] || fail "the set is held: $("$R" status s2)"
else
  echo "t_cli_stdout: no writable /dev/full: the full-disk part skipped"
fi
# a closed stdout that something is written to: 74; nothing written: the status as it is
expect_rc 74 sh -c '"$0" status db >&-' "$R"
expect_rc 0 "$R" acquire quiet --ttl 60
expect_rc 3 sh -c 'REFLEASE_OWNER=bob "$0" acquire quiet --print-token >&-' "$R"
# --print-token into a pipe whose reader is gone: not a death by SIGPIPE with the lease held
sh -c 'sleep 0.3; "$0" acquire pipe --print-token; echo $? >"$1"' "$R" "$TMPDIR/rc" 2>"$TMPDIR/err" | true
[ "$(cat "$TMPDIR/rc")" = 74 ] || fail "--print-token into a closed pipe: exit $(cat "$TMPDIR/rc")"
grep -q "(Broken pipe): releasing pipe" "$TMPDIR/err" || fail "closed pipe: $(cat "$TMPDIR/err")"
[ "$(phase pipe)" = released ] || fail "pipe is held with a token nobody has"
# a good stdout: 0 as before
expect_rc 0 "$R" status db

# --conflict-exit-code N on acquire: N instead of 3, other statuses kept
expect_rc 0 "$R" acquire held --ttl 60
expect_rc 1 env REFLEASE_OWNER=bob "$R" acquire held --conflict-exit-code 1
has_text "held" "$TMPDIR/out" || fail "the held answer is still printed"
expect_rc 1 env REFLEASE_OWNER=bob "$R" acquire held --wait 0 --conflict-exit-code 1
expect_rc 0 env REFLEASE_OWNER=bob "$R" acquire free --conflict-exit-code 1 --ttl 60
err_is 64 "--conflict-exit-code: '0' is not an exit status in 1..255" "$R" acquire x --conflict-exit-code 0
err_is 64 "--conflict-exit-code: '256' is not an exit status" "$R" acquire x --conflict-exit-code 256
expect_rc 64 "$R" acquire 'bad name' --conflict-exit-code 1
# ... and on status --fail-if-held
expect_rc 9 env REFLEASE_OWNER=bob "$R" status held --fail-if-held --conflict-exit-code 9
expect_rc 0 "$R" status held --fail-if-held --conflict-exit-code 9
expect_rc 0 env REFLEASE_OWNER=bob "$R" status nothing --fail-if-held --conflict-exit-code 9
err_is 64 "--conflict-exit-code goes with --fail-if-held" "$R" status held --conflict-exit-code 9
echo "t_cli_stdout: ok"
