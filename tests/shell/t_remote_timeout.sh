#!/bin/sh
# remote: against a server that accepts the connection and never answers
# (protocol.md §9 "remote", network timeouts; issue 24 item 3): --timeout
# bounds the whole operation on every libgit2 release — >= 1.7 through its
# server timeouts set to what is left, 1.5 through reflease's own socket
# stream (lib/store/gitstream.c) — so `status --timeout 5` fails as
# unreachable (exit 69) within about 5 s instead of hanging; git:// and
# http:// both.
set -eu
: "${REFLEASE:?}" "${TMPDIR:?}"
export XDG_CACHE_HOME="$TMPDIR/cache" REFLEASE_OWNER=o REFLEASE_HOST=h
unset http_proxy HTTP_PROXY all_proxy ALL_PROXY 2>/dev/null || true
fail() { echo "FAIL: $*" >&2; exit 1; }

# A server that accepts every connection, reads, and never writes; it stops by
# itself after 150 s, and when this script ends.
python3 -c '
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0))
s.listen(16)
s.settimeout(0.5)
print(s.getsockname()[1], flush=True)
held, end = [], time.time() + 150
while time.time() < end:
    try:
        c, _ = s.accept()
        held.append(c)
    except socket.timeout:
        pass
' >"$TMPDIR/port" &
spid=$!
trap 'kill "$spid" 2>/dev/null || true' EXIT INT TERM
i=0
while [ ! -s "$TMPDIR/port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
port=$(cat "$TMPDIR/port")
[ -n "$port" ] || fail "the silent server did not start"

for url in "git://127.0.0.1:$port/s.git" "http://127.0.0.1:$port/s.git"; do
  t0=$(date +%s)
  set +e
  "$REFLEASE" --store "remote:$url" --timeout 5 status x >"$TMPDIR/out" 2>"$TMPDIR/err"
  rc=$?
  set -e
  took=$(($(date +%s) - t0))
  [ "$rc" -eq 69 ] || fail "$url: exit $rc, expected 69 (unreachable): $(cat "$TMPDIR/err")"
  # the 5 s of --timeout and a second of slack; not the 150 s the server lives
  [ "$took" -le 7 ] || fail "$url: took $took s"
  grep -qi "time" "$TMPDIR/err" || fail "$url: no timeout in the message: $(cat "$TMPDIR/err")"
  echo "t_remote_timeout: $url: exit 69 after $took s: $(head -n 1 "$TMPDIR/err")"
done
# nothing listening: retried within --timeout (as github: is), with a progress
# line at -v after a few seconds instead of giving up at once (issue 23)
closed=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
t0=$(date +%s)
set +e
"$REFLEASE" -v --store "remote:git://127.0.0.1:$closed/s.git" --timeout 5 status x >"$TMPDIR/out" 2>"$TMPDIR/err"
rc=$?
set -e
took=$(($(date +%s) - t0))
[ "$rc" -eq 69 ] || fail "refused: exit $rc, expected 69: $(cat "$TMPDIR/err")"
[ "$took" -ge 3 ] || fail "refused: gave up after $took s, before --timeout 5"
[ "$took" -le 7 ] || fail "refused: took $took s, past --timeout 5"
grep -q 'cannot reach 127.0.0.1 for [0-9]* s' "$TMPDIR/err" || fail "no progress line: $(cat "$TMPDIR/err")"
# the message states its cause alone: nothing was compared (issue 23)
if grep -q 'expected -\|observed absent' "$TMPDIR/err"; then fail "refused: $(cat "$TMPDIR/err")"; fi
grep -q 'Connection refused' "$TMPDIR/err" || fail "refused: no cause: $(cat "$TMPDIR/err")"
echo "t_remote_timeout: ok"
