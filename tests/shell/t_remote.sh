#!/bin/sh
# Every CLI command on the remote backend (protocol.md §9 "remote") against
# real servers this script starts on 127.0.0.1: git daemon (git://), git
# http-backend behind lighttpd (http://), and file://. TTLs >= 60 s (the
# remote minimum); faketime moves the clock for a due heartbeat.
set -eu
: "${REFLEASE:?}" "${TMPDIR:?}"
command -v lighttpd >/dev/null 2>&1 || PATH=$PATH:/usr/sbin
root=$TMPDIR/srv
mkdir -p "$root"
export XDG_CACHE_HOME="$TMPDIR/cache"
export REFLEASE_OWNER=shell-owner REFLEASE_HOST=shell-host
unset http_proxy HTTP_PROXY https_proxy HTTPS_PROXY all_proxy ALL_PROXY 2>/dev/null || true

dpid=""
hpid=""
cleanup() {
  if [ -n "$dpid" ]; then kill "$dpid" 2>/dev/null || true; fi
  if [ -n "$hpid" ]; then kill "$hpid" 2>/dev/null || true; fi
}
trap cleanup EXIT INT TERM

fail() { echo "FAIL: $*" >&2; exit 1; }

# init creates the served repository; http-backend may receive-pack into it.
"$REFLEASE" init "$root/s.git" >/dev/null
git -C "$root/s.git" config http.receivepack true

base=$(( 20000 + $$ % 20000 ))
port=""
for p in $base $((base + 1)) $((base + 2)) $((base + 3)) $((base + 4)); do
  git daemon --enable=receive-pack --export-all --reuseaddr --base-path="$root" \
    --listen=127.0.0.1 --port="$p" "$root" >"$TMPDIR/daemon.log" 2>&1 &
  dpid=$!
  i=0
  while [ $i -lt 100 ]; do
    if git ls-remote "git://127.0.0.1:$p/s.git" >/dev/null 2>&1; then port=$p; break; fi
    kill -0 "$dpid" 2>/dev/null || break
    sleep 0.05; i=$((i + 1))
  done
  [ -n "$port" ] && break
  kill "$dpid" 2>/dev/null || true; dpid=""
done
[ -n "$port" ] || fail "git daemon did not start"

hport=""
for p in $((base + 10)) $((base + 11)) $((base + 12)) $((base + 13)) $((base + 14)); do
  cat >"$TMPDIR/lighttpd.conf" <<EOF
server.document-root = "$root"
server.bind = "127.0.0.1"
server.port = $p
server.errorlog = "$TMPDIR/lighttpd.err"
server.modules = ("mod_alias", "mod_cgi", "mod_setenv")
alias.url = ("/git/" => "/usr/lib/git-core/git-http-backend/")
cgi.assign = ("" => "")
setenv.add-environment = ("GIT_PROJECT_ROOT" => "$root", "GIT_HTTP_EXPORT_ALL" => "1")
EOF
  lighttpd -D -f "$TMPDIR/lighttpd.conf" >"$TMPDIR/lighttpd.log" 2>&1 &
  hpid=$!
  i=0
  while [ $i -lt 100 ]; do
    if git ls-remote "http://127.0.0.1:$p/git/s.git" >/dev/null 2>&1; then hport=$p; break; fi
    kill -0 "$hpid" 2>/dev/null || break
    sleep 0.05; i=$((i + 1))
  done
  [ -n "$hport" ] && break
  kill "$hpid" 2>/dev/null || true; hpid=""
done
[ -n "$hport" ] || fail "lighttpd did not start"

"$REFLEASE" version >/dev/null || fail "version"

n=0
for url in "git://127.0.0.1:$port/s.git" "http://127.0.0.1:$hport/git/s.git" "file://$root/s.git"; do
  n=$((n + 1))
  R() { "$REFLEASE" --store "remote:$url" --verify-timeout 1 "$@"; }
  a=job$n-a b=job$n-b c=job$n-c
  echo "== $url"

  R list >/dev/null || fail "list ($url)"
  # A TTL under the remote minimum is refused before any I/O.
  if R acquire "$a" --ttl 30 2>/dev/null; then fail "ttl 30 accepted ($url)"; fi

  tok=$(R --json acquire "$a" --ttl 60 | jq -r .lease.lease_token)
  [ ${#tok} -eq 32 ] || fail "acquire: no token ($url)"
  R status "$a" | grep -q live || fail "status live ($url)"
  # Held by us: a second acquire answers already_held (exit 3).
  set +e; R acquire "$a" --ttl 60 >/dev/null 2>&1; rc=$?; set -e
  [ $rc -eq 3 ] || fail "second acquire exit $rc ($url)"

  R transition "$a" --lease-token "$tok" --to working >/dev/null || fail "transition ($url)"
  st=$(R --json heartbeat "$a" --lease-token "$tok" | jq -r .status)
  [ "$st" = not_due ] || fail "early heartbeat: $st ($url)"
  # (an ASan build must accept libfaketime preloaded ahead of its runtime)
  st=$(ASAN_OPTIONS="${ASAN_OPTIONS:-}:verify_asan_link_order=0" faketime -f +20s "$REFLEASE" --store "remote:$url" --verify-timeout 1 --json \
       heartbeat "$a" --lease-token "$tok" | jq -r .status)
  [ "$st" = renewed ] || fail "due heartbeat: $st ($url)"
  R reacquire "$a" --lease-token "$tok" >/dev/null || fail "reacquire ($url)"
  R release "$a" --lease-token "$tok" >/dev/null || fail "release ($url)"
  R status "$a" | grep -q released || fail "status released ($url)"

  R acquire "$b" --ttl 60 >/dev/null || fail "acquire b ($url)"
  set +e; R break "$b" >/dev/null 2>&1; rc=$?; set -e
  [ $rc -ne 0 ] || fail "break without --force over a live lease succeeded ($url)"
  R break "$b" --force >/dev/null || fail "break --force ($url)"
  R --json status "$b" | jq -e '.lease.phase == "released"' >/dev/null || fail "broken ($url)"

  # shellcheck disable=SC2016 # expanded by the child shell
  out=$(R run "$c" --ttl 60 -- sh -c 'echo "in:$REFLEASE_LEASE_NAME:${#REFLEASE_LEASE_TOKEN}"')
  [ "$out" = "in:$c:32" ] || fail "run: '$out' ($url)"
  R status "$c" | grep -q released || fail "run did not release ($url)"

  R list | grep -q "$a" || fail "list misses $a ($url)"
  [ "$(R --json list | jq '[.leases[] | select(.name | startswith("job'$n'-"))] | length')" = 3 ] ||
    fail "list count ($url)"

  # The server's own history: every write landed, in order.
  git -C "$root/s.git" log --format=%s "refs/leases/$a" | awk '{print $2}' | tr '\n' ' ' |
    grep -q '^release reacquire heartbeat transition acquire $' ||
    fail "history of $a: $(git -C "$root/s.git" log --format=%s "refs/leases/$a")"
done

# Caches hold no temporary push refs afterwards.
for d in "$XDG_CACHE_HOME"/reflease/*.git; do
  [ -z "$(git -C "$d" for-each-ref refs/reflease/out/)" ] || fail "push ref left in $d"
done
echo "t_remote: ok"
