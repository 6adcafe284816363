#!/bin/sh
# shellcheck disable=SC1091,SC2015  # sourced helper; A && B || fail is intended
# Issue 19: shell ergonomics.
# - `acquire --print-token`: stdout is only the token on success; nothing on
#   stdout and exit 3 when held (the reason on stderr); not with --json;
# - the README's `set -o pipefail` advice: without it, `--json | jq` hides exit 3;
# - `reflease help [COMMAND]`, `COMMAND --help`, `-V` / `--version`.
. "$(dirname "$0")/lease_lib.sh"
cd "$TMPDIR" || exit 1

expect_rc 0 "$R" acquire t1 --ttl 60 --print-token
grep -qE '^[0-9a-f]{32}$' "$TMPDIR/out" && [ "$(wc -l <"$TMPDIR/out")" -eq 1 ] ||
  fail "--print-token stdout: $(cat "$TMPDIR/out")"
[ "$(cat "$TMPDIR/out")" = "$(git --git-dir="$S" log -1 --format=%b refs/leases/t1 | jget lease_token)" ] ||
  fail "the printed token is not the lease's"
[ ! -s "$TMPDIR/err" ] || fail "stderr on success: $(cat "$TMPDIR/err")"
expect_rc 3 "$R" --owner bob acquire t1 --print-token
[ ! -s "$TMPDIR/out" ] || fail "stdout when held: $(cat "$TMPDIR/out")"
grep -q "t1: held by alice on h1 until" "$TMPDIR/err" || fail "held reason: $(cat "$TMPDIR/err")"
expect_rc 3 "$R" --owner bob acquire t1 --print-token --wait 1
[ ! -s "$TMPDIR/out" ] || fail "stdout after --wait ran out"
expect_rc 64 "$R" --json acquire t2 --print-token
grep -q -- "--print-token and --json" "$TMPDIR/err" || fail "conflict message: $(cat "$TMPDIR/err")"
[ -z "$(git --git-dir="$S" for-each-ref refs/leases/t2)" ] || fail "wrote t2"
# as a shell would use it
tok=$("$R" --owner carol acquire t3 --print-token) || fail "tok=\$(...) failed"
expect_rc 0 "$R" --owner carol heartbeat t3 --lease-token "$tok"
if tok=$("$R" --owner dave acquire t3 --print-token 2>/dev/null); then fail "held acquire succeeded"; fi
[ -z "$tok" ] || fail "held acquire gave '$tok'"
# the pitfall the README names: jq's status hides reflease's without pipefail
if command -v jq >/dev/null 2>&1 && command -v bash >/dev/null 2>&1; then
  bash -c "tok=\$('$R' --owner dave --json acquire t3 | jq -r .lease.lease_token); [ \"\$tok\" = null ]" ||
    fail "the jq pitfall no longer happens: update the README"
  if bash -c "set -o pipefail; tok=\$('$R' --owner dave --json acquire t3 | jq -r .lease.lease_token)"; then
    fail "set -o pipefail did not report exit 3"
  fi
fi

# help and version
expect_rc 0 "$R" help
grep -q "^Commands:" "$TMPDIR/out" && grep -q "^  help " "$TMPDIR/out" || fail "help: $(cat "$TMPDIR/out")"
"$R" --help >"$TMPDIR/main-help"
cmp -s "$TMPDIR/out" "$TMPDIR/main-help" || fail "help and --help differ"
for c in acquire status reconcile help; do
  expect_rc 0 "$R" help "$c"
  "$R" "$c" --help >"$TMPDIR/cmd-help"
  cmp -s "$TMPDIR/out" "$TMPDIR/cmd-help" || fail "help $c and $c --help differ"
  grep -q "^usage: reflease $c" "$TMPDIR/out" || fail "help $c: $(head -n 1 "$TMPDIR/out")"
done
expect_rc 64 "$R" help nosuch
grep -q "unknown command 'nosuch' (run 'reflease help' for the list)" "$TMPDIR/err" || fail "help nosuch"
expect_rc 64 "$R" help acquire extra
expect_rc 0 "$R" version
cp "$TMPDIR/out" "$TMPDIR/version"
grep -q "^reflease [0-9]" "$TMPDIR/version" || fail "version: $(cat "$TMPDIR/version")"
for v in -V --version; do
  expect_rc 0 "$R" "$v"
  cmp -s "$TMPDIR/out" "$TMPDIR/version" || fail "$v differs from version"
done
expect_rc 0 "$R" --json -V
[ "$(jout version)" != "<absent>" ] || fail "--json -V"
echo "t_cli_shell: ok"
