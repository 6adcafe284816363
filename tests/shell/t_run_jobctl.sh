#!/bin/sh
# shellcheck disable=SC1091,SC2015,SC2086,SC2154  # sourced helpers; A && B || fail is intended; $R is a word list
# Job control under `run` (issue 23, protocol.md §6): when CMD is stopped by
# SIGTSTP (Ctrl-Z) or SIGTTIN/SIGTTOU, run stops itself too, as sudo does, so
# the shell sees its job stopped and gives the prompt back; on SIGCONT (fg,
# bg) run continues CMD's tree. Before the fix only CMD stopped: run kept
# heartbeating and the shell never got its prompt back.
. "$(dirname "$0")/lease_lib.sh"
. "$(dirname "$0")/fence_lib.sh"

D=$TMPDIR/jc; mkdir -p "$D"
P=""
trap '[ -z "$P" ] || kill -KILL "$P" 2>/dev/null || true' EXIT
# ---- Ctrl-Z as the terminal sends it: SIGTSTP to CMD's process group
$R run jc --ttl 30 -- sh -c "echo \$\$ >'$D/cmd.pid'; while [ ! -e '$D/done' ]; do sleep 0.05; done" \
  >"$D/out" 2>"$D/err" &
P=$!
wait_until 20 "CMD started" test -s "$D/cmd.pid"
C=$(cat "$D/cmd.pid")
kill -TSTP -"$C"
# (the states at the end of the wait in a failure: did CMD stop at all?)
i=0
until [ "$(pstate "$P")" = T ]; do
  i=$((i + 1))
  [ "$i" -lt 200 ] || { cat "$D/err"; fail "run did not stop itself within 10 s of CMD's SIGTSTP (run's state $(pstate "$P"), CMD's $(pstate "$C"))"; }
  sleep 0.05
done
[ "$(pstate "$C")" = T ] || fail "CMD is not stopped (state $(pstate "$C"))"
# `fg`/`bg`: the shell continues run's process group; run continues CMD's tree
kill -CONT "$P"
wait_until 10 "CMD continued after run was" sh -c "[ \"\$(sed -n 's/^[0-9]* (.*) \\([A-Za-z]\\) .*/\\1/p' /proc/$C/stat)\" != T ]"
is_live jc || fail "the lease is not held after the resume"
: >"$D/done"
wait_rc "$P"
[ "$rc" -eq 0 ] || fail "run exit $rc, want CMD's 0: $(cat "$D/err")"
[ "$("$R" status jc --json | jget status)" = released ] || fail "not released"

# ---- the same on a real terminal (a pty): an interactive shell runs `run --
# cat`; the keyboard reaches cat; Ctrl-Z gives the prompt back; `fg` gives
# cat the keyboard again; EOF ends it and run exits 0
cat >"$TMPDIR/ptyjc.py" <<'PY'
import os, pty, sys, select, time, re, signal
R = sys.argv[1]
pid, fd = pty.fork()
if pid == 0:
    os.environ['PS1'] = 'PROMPT$ '
    os.execvp('sh', ['sh', '-i'])
buf = b''
def expect(pat, secs):
    global buf
    end = time.monotonic() + secs
    while True:
        m = re.search(pat, buf)
        if m:
            buf = buf[m.end():]
            return True
        left = end - time.monotonic()
        if left <= 0:
            sys.stderr.write('TIMEOUT waiting for %r; got %r\n' % (pat, buf[-400:]))
            return False
        r, _, _ = select.select([fd], [], [], left)
        if r:
            try:
                d = os.read(fd, 4096)
            except OSError:
                d = b''
            if not d:
                sys.stderr.write('EOF waiting for %r; got %r\n' % (pat, buf[-400:]))
                return False
            buf += d
def send(s):
    os.write(fd, s.encode())
ok = expect(rb'PROMPT\$ ', 10)
send(R + ' run jc2 --ttl 30 -- cat\n')
# cat echoes what it reads: the keyboard reaches CMD
ok = ok and expect(rb'cat\r?\n', 10)
send('hello\n')
ok = ok and expect(rb'hello\r?\nhello', 10)
send('\x1a')  # Ctrl-Z
ok = ok and expect(rb'PROMPT\$ ', 10) or (sys.stderr.write('no prompt after Ctrl-Z\n') and False)
send('fg\n')
send('again\n')
ok = ok and expect(rb'again\r?\n(.|\n)*again', 10)
send('\x04')  # EOF: cat ends, run releases
send('echo RC=$?\n')
ok = ok and expect(rb'RC=0', 20)
if not ok:
    send('\x03')
    send('kill -KILL %1 2>/dev/null\n')  # leave no run behind
    expect(rb'PROMPT\$ ', 5)
send('exit\n')
end = time.monotonic() + 5  # until the shell has gone (EOF on the pty)
while time.monotonic() < end:
    if select.select([fd], [], [], 0.5)[0]:
        try:
            if not os.read(fd, 4096):
                break
        except OSError:
            break
os.kill(pid, signal.SIGKILL)
sys.exit(0 if ok else 1)
PY
timeout 120 python3 "$TMPDIR/ptyjc.py" "$R" || fail "Ctrl-Z under run on a terminal (see above)"
[ "$("$R" status jc2 --json | jget status)" = released ] || fail "jc2: not released"
echo ok
