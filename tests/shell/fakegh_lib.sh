# shellcheck shell=sh disable=SC2034  # fpid and base are set for the sourcing test
# The fake GitHub server for shell tests (sourced; not a test itself).
# fakegh_start [FAKEGH OPTION...]: start build/tools/fakegh on 127.0.0.1 with
# its port file in $TMPDIR; sets fpid (its pid, for the caller's trap) and
# base (http://127.0.0.1:PORT); fails when it has not started within 5 s.
# fakegh_start_at PORTFILE [FAKEGH OPTION...]: the same with the port file
# PORTFILE (a second fake beside the first; its stderr in PORTFILE.err).
fakegh_start_at() {
  fg_port=$1
  shift
  rm -f "$fg_port"
  "$BUILD/tools/fakegh" "$@" --port-file "$fg_port" >/dev/null 2>"$fg_port.err" &
  fpid=$!
  fg_i=0
  while [ ! -s "$fg_port" ] && [ $fg_i -lt 100 ]; do sleep 0.05; fg_i=$((fg_i + 1)); done
  [ -s "$fg_port" ] || { echo "FAIL: fakegh did not start: $(cat "$fg_port.err")" >&2; exit 1; }
  base="http://127.0.0.1:$(cat "$fg_port")"
}
fakegh_start() { fakegh_start_at "$TMPDIR/port" "$@"; }
