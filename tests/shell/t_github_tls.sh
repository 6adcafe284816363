#!/bin/sh
# shellcheck disable=SC1091,SC2154  # the sourced fakegh_lib.sh sets fpid and base
# issue 24 #1: TLS trust like curl and git, on the CLI against the fake GitHub
# over HTTPS (tools/fakegh --tls-cert/--tls-key; libmicrohttpd over GnuTLS)
# with a test CA made here by openssl (test-only keys, never committed). An
# untrusted certificate is exit 78 within 5 s naming the host and the
# problem (never retried as "unreachable"); the same command succeeds with
# SSL_CERT_FILE, CURL_CA_BUNDLE, REFLEASE_CA_BUNDLE or --ca-bundle naming the
# CA, in curl's order (CURL_CA_BUNDLE before SSL_CERT_FILE). A proxy asking
# for credentials (407) or refusing the tunnel (403) is 78 at once too;
# remote:https:// trusts the same CAs.
set -eu
. "$(dirname "$0")/fakegh_lib.sh"
cd "$TMPDIR"
unset CURL_CA_BUNDLE SSL_CERT_FILE SSL_CERT_DIR REFLEASE_CA_BUNDLE GITHUB_GRAPHQL_URL \
  REFLEASE_GITHUB_TOKEN REFLEASE_GITHUB_TOKEN_FILE GITHUB_ACTIONS https_proxy HTTPS_PROXY \
  all_proxy ALL_PROXY || true
export NO_PROXY=localhost,127.0.0.1 no_proxy=localhost,127.0.0.1
mkca good
mkca other
trap 'kill "${fpid:-}" 2>/dev/null || true' EXIT INT TERM
fakegh_start --tls-cert good/srv.pem --tls-key good/srv.key
GITHUB_API_URL="https://localhost:$(cat port)"
export GITHUB_API_URL GITHUB_TOKEN=ghp_tlstest0123456789
export REFLEASE_STORE=github:octo/leases REFLEASE_OWNER=alice REFLEASE_HOST=runner-1

run() { # run EXPECTED_STATUS WHAT -- reflease args...
  want=$1 what=$2; shift 3
  st=0
  t0=$(date +%s)
  "$REFLEASE" --timeout 60 "$@" >out 2>err || st=$?
  took=$(($(date +%s) - t0))
  [ "$st" -eq "$want" ] || { echo "FAIL $what: exit $st, expected $want: $(cat err)"; exit 1; }
}

run 78 "untrusted certificate" -- status tls
[ "$took" -le 5 ] || { echo "FAIL: 78 after ${took}s, not at once"; exit 1; }
grep -q 'localhost' err || { echo "FAIL: the host is not named: $(cat err)"; exit 1; }
grep -qi 'certificate' err || { echo "FAIL: the problem is not named: $(cat err)"; exit 1; }
grep -q -- '--ca-bundle' err || { echo "FAIL: no hint at --ca-bundle: $(cat err)"; exit 1; }

SSL_CERT_FILE=$PWD/good/ca.pem run 0 "SSL_CERT_FILE" -- acquire tls --ttl 120
run 0 "--ca-bundle" -- --ca-bundle good/ca.pem status tls
REFLEASE_CA_BUNDLE=$PWD/good/ca.pem run 0 "REFLEASE_CA_BUNDLE" -- status tls
CURL_CA_BUNDLE=$PWD/good/ca.pem run 0 "CURL_CA_BUNDLE" -- status tls
mkdir -p certdir && cp good/ca.pem certdir/ && openssl rehash certdir 2>/dev/null
SSL_CERT_DIR=$PWD/certdir run 0 "SSL_CERT_DIR" -- status tls
# curl's order: CURL_CA_BUNDLE before SSL_CERT_FILE
CURL_CA_BUNDLE=$PWD/other/ca.pem SSL_CERT_FILE=$PWD/good/ca.pem run 78 "CURL_CA_BUNDLE first" \
  -- status tls
grep -q 'CURL_CA_BUNDLE' err || { echo "FAIL: the bundle used is not named: $(cat err)"; exit 1; }
# another CA's bundle: still 78 at once, naming it
run 78 "another CA" -- --ca-bundle other/ca.pem status tls
[ "$took" -le 5 ] || { echo "FAIL: 78 after ${took}s"; exit 1; }
run 78 "missing bundle" -- --ca-bundle nowhere.pem status tls
grep -q 'nowhere.pem' err || { echo "FAIL: $(cat err)"; exit 1; }
# a variable naming a missing bundle fails https requests only, at once (as curl)
CURL_CA_BUNDLE=$PWD/nowhere.pem run 78 "missing CURL_CA_BUNDLE" -- status tls
[ "$took" -le 5 ] || { echo "FAIL: 78 after ${took}s"; exit 1; }
grep -q 'CURL_CA_BUNDLE=.*nowhere.pem' err || { echo "FAIL: $(cat err)"; exit 1; }
# remote:https:// trusts the same CAs (libgit2's GIT_OPT_SET_SSL_CERT_LOCATIONS):
# untrusted → 78 naming the host; trusted → the TLS handshake passes and the
# fake (no git server) answers 401: exit 77, no certificate complaint
export XDG_CACHE_HOME="$PWD/cache"
rurl="remote:https://localhost:$(cat port)/x.git"
run 78 "remote: untrusted certificate" -- --store "$rurl" --timeout 5 status tls
grep -q 'certificate of localhost' err || { echo "FAIL: remote: $(cat err)"; exit 1; }
run 77 "remote: --ca-bundle" -- --store "$rurl" --ca-bundle good/ca.pem --timeout 5 status tls
if grep -qi 'certificate' err; then echo "FAIL: remote: --ca-bundle: $(cat err)"; exit 1; fi
SSL_CERT_FILE=$PWD/good/ca.pem run 77 "remote: SSL_CERT_FILE" -- --store "$rurl" --timeout 5 \
  status tls

# through a proxy (a second fake, plain http, answering CONNECT): a 407 is 78
# at once naming HTTPS_PROXY; a tunnel refused by the proxy's rules too
gh_pid=$fpid
trap 'kill "$gh_pid" "${fpid:-}" 2>/dev/null || true' EXIT INT TERM
fakegh_start_at "$TMPDIR/pport"
proxy=$base
curl -sf -XPOST "$proxy/_fakegh/fault" -d '{"endpoint":"other","kind":"407","count":1}' >/dev/null
HTTPS_PROXY=$proxy NO_PROXY='' no_proxy='' run 78 "proxy 407" -- --ca-bundle good/ca.pem status tls
[ "$took" -le 5 ] || { echo "FAIL: 407 after ${took}s"; exit 1; }
grep -q 'HTTPS_PROXY' err || { echo "FAIL: 407: $(cat err)"; exit 1; }
grep -q '407' err || { echo "FAIL: 407: $(cat err)"; exit 1; }
HTTPS_PROXY=$proxy NO_PROXY='' no_proxy='' run 78 "proxy 403" -- --ca-bundle good/ca.pem status tls
grep -q 'refused the tunnel' err || { echo "FAIL: 403: $(cat err)"; exit 1; }
echo "t_github_tls: ok"
