#!/bin/sh
# test: seconds 20
# Every CLI command (migrate and reconcile too) on the remote backend (protocol.md §9 "remote") against
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
# shellcheck disable=SC1091  # sourced helper
. "$(dirname "$0")/gitsrv_lib.sh"
ts() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ; }

# init creates the served repository; http-backend may receive-pack into it.
"$REFLEASE" init "$root/s.git" >/dev/null
git -C "$root/s.git" config http.receivepack true
git -C "$root/s.git" config receive.denyNonFastForwards true # as `git init --shared` sets it
empty=$(git -C "$root/s.git" hash-object -w -t tree /dev/null)

git_daemon_start "$root" s.git || fail "git daemon did not start"
dpid=$GITD_PID port=$GITD_PORT

GITSRV_PID=""
git_http_start "$root" || fail "lighttpd did not start"
hpid=$GITSRV_PID hport=$GITSRV_PORT

"$REFLEASE" version >/dev/null || fail "version"

n=0
for url in "git://127.0.0.1:$port/s.git" "http://127.0.0.1:$hport/git/s.git" "file://$root/s.git"; do
  n=$((n + 1))
  R() { "$REFLEASE" --store "remote:$url" --verify-timeout 1 "$@"; }
  # R with the clock moved by $1 (an ASan build must accept libfaketime
  # preloaded ahead of its runtime)
  F() {
    off=$1; shift
    faketime -f "$off" \
      "$REFLEASE" --store "remote:$url" --verify-timeout 1 "$@"
  }
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
  st=$(F +20s --json heartbeat "$a" --lease-token "$tok" | jq -r .status)
  [ "$st" = renewed ] || fail "due heartbeat: $st ($url)"
  # the next one replaces it (protocol.md §2), a non-fast-forward update the
  # server takes with receive.denyNonFastForwards set (refs/heads/* only)
  st=$(F +40s --json heartbeat "$a" --lease-token "$tok" | jq -r '.status + " " + (.lease.heartbeats | tostring)')
  [ "$st" = "renewed 2" ] || fail "second due heartbeat: $st ($url)"
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

  # migrate: a pre-bump (1.0.0) payload written behind reflease's back is
  # planned, applied once, and a second run writes nothing.
  m=job$n-m
  now=$(date +%s)
  json="{\"acquired_at\":\"$(ts $((now - 50)))\",\"expires_at\":\"$(ts $((now + 250)))\",\"host\":\"h\",\"lease_token\":\"0123456789abcdef0123456789abcdef\",\"name\":\"$m\",\"nonce\":\"0011223344556677\",\"owner\":\"o\",\"phase\":\"working\",\"sdlc_version\":\"1.0.0\",\"transitions\":0}"
  cm=$(printf '%s: acquire working by o on h\n\n%s\n' "$m" "$json" |
       GIT_AUTHOR_NAME=reflease GIT_AUTHOR_EMAIL=reflease@localhost \
       GIT_COMMITTER_NAME=reflease GIT_COMMITTER_EMAIL=reflease@localhost \
       git -C "$root/s.git" commit-tree "$empty")
  git -C "$root/s.git" update-ref "refs/leases/$m" "$cm"
  R migrate | grep -q "$m" || fail "migrate plan misses $m ($url)"
  [ "$(git -C "$root/s.git" rev-parse "refs/leases/$m")" = "$cm" ] || fail "plan wrote ($url)"
  R migrate --apply >/dev/null || fail "migrate --apply ($url)"
  R --json status "$m" | jq -e '.lease.sdlc_version == "1.2.0"' >/dev/null ||
    fail "not migrated ($url)"
  tip=$(git -C "$root/s.git" rev-parse "refs/leases/$m")
  R migrate --apply >/dev/null || fail "second migrate --apply ($url)"
  [ "$(git -C "$root/s.git" rev-parse "refs/leases/$m")" = "$tip" ] ||
    fail "second migrate wrote ($url)"

  R list | grep -q "$a" || fail "list misses $a ($url)"
  [ "$(R --json list | jq '[.leases[] | select(.name | startswith("job'$n'-"))] | length')" = 4 ] ||
    fail "list count ($url)"

  # The server's own history: every write landed, in order.
  git -C "$root/s.git" log --format=%s "refs/leases/$a" | awk '{print $2}' | tr '\n' ' ' |
    grep -q '^release reacquire heartbeat transition acquire $' ||
    fail "history of $a: $(git -C "$root/s.git" log --format=%s "refs/leases/$a")"

  # reconcile: a sweep, a reap of an expired lease (the clock 200 s on), a
  # prune of released leases into archive refs (3 days on); one ls-remote and
  # one fetch each, CAS writes through the same pushes.
  r=job$n-r
  R acquire "$r" --ttl 60 >/dev/null || fail "acquire r ($url)"
  R reconcile >/dev/null || fail "reconcile ($url)"
  F +200s reconcile --reap >/dev/null || fail "reconcile --reap ($url)"
  R --json status "$r" | jq -e '.lease.phase == "released"' >/dev/null || fail "not reaped ($url)"
  F +3d reconcile --prune-released 1 >/dev/null || fail "reconcile --prune-released ($url)"
  for x in "$a" "$b" "$c" "$r"; do
    [ -z "$(git -C "$root/s.git" for-each-ref "refs/leases/$x")" ] || fail "$x not pruned ($url)"
    [ -n "$(git -C "$root/s.git" for-each-ref "refs/leases-archive/$x/")" ] ||
      fail "$x not archived ($url)"
  done
done

# Caches hold no temporary push refs afterwards.
for d in "$XDG_CACHE_HOME"/reflease/*.git; do
  [ -z "$(git -C "$d" for-each-ref refs/reflease/out/)" ] || fail "push ref left in $d"
done
echo "t_remote: ok"
