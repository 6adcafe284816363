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
# mkca DIR: a test CA made by openssl (test-only keys, never committed) and,
# in DIR, its certificate for localhost and 127.0.0.1 (for fakegh --tls-cert
# DIR/srv.pem --tls-key DIR/srv.key; DIR/ca.pem is the CA to trust)
mkca() {
  mkdir -p "$1"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -subj "/CN=reflease test CA $1" -keyout "$1/ca.key" -out "$1/ca.pem" 2>/dev/null
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -subj /CN=localhost -keyout "$1/srv.key" -out "$1/srv.csr" 2>/dev/null
  printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n' >"$1/ext"
  openssl x509 -req -in "$1/srv.csr" -CA "$1/ca.pem" -CAkey "$1/ca.key" -CAcreateserial \
    -days 2 -extfile "$1/ext" -out "$1/srv.pem" 2>/dev/null
}
