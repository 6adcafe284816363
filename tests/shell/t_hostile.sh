#!/bin/sh
# shellcheck disable=SC1091,SC2015  # sourced helper; A && B || fail is intended
# test: seconds 91
# Hostile input on the real binary (issue 8; protocol.md §1 is a security
# boundary: a crafted name or namespace must never address a ref outside
# refs/<ns>/). Every crafted name and namespace, given to acquire, heartbeat,
# release, status, break and run, exits 64 with a message naming the rule,
# and `git for-each-ref` (plus the files under refs/ and packed-refs) shows
# nothing written and no branch moved (F08, F10). Then oversized, deeply
# nested and non-commit payloads already in the store are refused cleanly:
# exit 65 from status and the writers, reported by list, never a crash (F27:
# break still frees them).
. "$(dirname "$0")/lease_lib.sh"

G() { git --git-dir="$S" "$@"; }
E=$(G hash-object -w -t tree /dev/null)
# a branch and a tag that a crafted name might try to move
M=$(echo base | GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t G commit-tree "$E")
G update-ref refs/heads/main "$M"
G update-ref refs/tags/v1 "$M"
T=$(tok held)
[ -n "$T" ] || fail "setup"
snapshot() {
  G for-each-ref --format='%(objectname) %(refname)'
  (cd "$S" && find refs -print | LC_ALL=C sort && cat HEAD && { [ ! -f packed-refs ] || cat packed-refs; })
}
before=$(snapshot)
z=0123456789abcdef0123456789abcdef
n=0

# refuse RULE NAME: every command exits 64, names RULE, writes nothing
refuse() {
  rule=$1 name=$2
  n=$((n + 1))
  for cmd in "acquire" "heartbeat --lease-token $T" "release --lease-token $T" "status" \
             "break --force" "run"; do
    if [ "$cmd" = run ]; then
      # shellcheck disable=SC2086
      expect_rc 64 "$R" run --ttl 60 -- "$name" true
    else
      # shellcheck disable=SC2086
      expect_rc 64 "$R" $cmd -- "$name"
    fi
    has_text "$rule" "$TMPDIR/err" || fail "case $n ($cmd): message does not name '$rule'"
  done
  [ "$(snapshot)" = "$before" ] || fail "case $n wrote something"
}
long=$(printf 'x%.0s' $(seq 101))
ok100=$(printf 'y%.0s' $(seq 100))
refuse "must not contain '/'" '../heads/main'
refuse "must not contain '/'" 'refs/heads/x'
refuse "must not contain '/'" 'refs/heads/main'
refuse "must not contain '/'" 'x/'
refuse "must not contain '/'" '/etc/passwd'
refuse "must not contain '/'" 'a.lock/b'
refuse "must not end with '.lock'" 'x.lock'
refuse "must not end with '.lock'" 'main.lock'
refuse "must not contain '..'" 'a..b'
refuse "must start with a letter or digit" '..'
refuse "must start with a letter or digit" '.'
refuse "must start with a letter or digit" '.hidden'
refuse "must start with a letter or digit" '-x'
refuse "must start with a letter or digit" '--force'
refuse "must start with a letter or digit" '_x'
refuse "must not end with '.'" 'x.'
refuse "must not end with '.'" 'x.lock.'
refuse "must not be empty" ''
refuse "at most 100 bytes" "$long"
refuse "at most 100 bytes" "${long}${long}${long}"
refuse "byte 0x40 at offset 1" 'a@{1}'
refuse "byte 0x40 at offset 0" '@{-1}'
refuse "byte 0x40 at offset 0" '@'
refuse "byte 0x7e at offset 4" 'main~1'
refuse "byte 0x5e at offset 4" 'main^{}'
refuse "byte 0x3a at offset 4" 'HEAD:x'
refuse "byte 0x2a at offset 1" 'x*'
refuse "byte 0x3f at offset 1" 'x?'
refuse "byte 0x5b at offset 1" 'x[a]'
refuse "byte 0x5c at offset 1" 'x\y'
refuse "byte 0x20 at offset 3" 'two words'
refuse "byte 0x20 at offset 1" 'x '
refuse "byte 0x20 at offset 0" ' x'
refuse "byte 0x09 at offset 1" "$(printf 'a\tb')"
refuse "byte 0x0a at offset 1" "$(printf 'a\nb')"
refuse "byte 0x0d at offset 1" "$(printf 'a\rb')"
refuse "byte 0x1b at offset 1" "$(printf 'a\033[31mb')"
refuse "byte 0x7f at offset 1" "$(printf 'a\177')"
refuse "byte 0x01 at offset 1" "$(printf 'a\001')"
refuse "byte 0xc3 at offset 1" "$(printf 'r\303\251sum\303\251')"
refuse "byte 0xe2 at offset 1" "$(printf 'x\342\200\256txt')"   # U+202E right-to-left override
refuse "byte 0xe2 at offset 1" "$(printf 'x\342\200\213y')"     # U+200B zero-width space
refuse "byte 0xc0 at offset 1" "$(printf 'x\300\257y')"         # overlong '/'
refuse "byte 0xff at offset 1" "$(printf 'x\377')"
# the boundary itself: 100 bytes is a name, 101 is not
expect_rc 0 "$R" status -- "$ok100"

# namespaces, by flag and by environment, with a valid name
refuse_ns() {
  rule=$1 ns=$2
  n=$((n + 1))
  for cmd in "acquire x" "heartbeat x --lease-token $T" "release x --lease-token $T" \
             "status x" "break x --force" "list"; do
    # shellcheck disable=SC2086
    expect_rc 64 "$R" --namespace "$ns" $cmd
    has_text "$rule" "$TMPDIR/err" || fail "ns case $n ($cmd): message does not name '$rule'"
  done
  # by environment too (an empty REFLEASE_NAMESPACE counts as unset: the default)
  if [ -n "$ns" ]; then
    for cmd in "acquire x" "list"; do
      # shellcheck disable=SC2086
      expect_rc 64 env REFLEASE_NAMESPACE="$ns" "$R" $cmd
      has_text "$rule" "$TMPDIR/err" || fail "ns case $n (env, $cmd): message does not name '$rule'"
    done
  fi
  expect_rc 64 "$R" --namespace "$ns" run x -- true
  [ "$(snapshot)" = "$before" ] || fail "ns case $n wrote something"
}
refuse_ns "'heads' is reserved" heads
refuse_ns "'tags' is reserved" tags
refuse_ns "'remotes' is reserved" remotes
refuse_ns "'notes' is reserved" notes
refuse_ns "'pull' is reserved" pull
refuse_ns "'stash' is reserved" stash
refuse_ns "must not end with '-archive'" leases-archive
refuse_ns "must not be empty" ''
refuse_ns "byte 0x2f at offset 5" 'heads/main'
refuse_ns "must start with a lowercase letter" '../heads'
refuse_ns "must start with a lowercase letter" 'Leases'
refuse_ns "must start with a lowercase letter" '1abc'
refuse_ns "byte 0x5f at offset 1" 'a_b'
refuse_ns "byte 0x20 at offset 1" 'a b'
refuse_ns "at most 32 bytes" "$(printf 'n%.0s' $(seq 33))"
refuse_ns "byte 0xc3 at offset 1" "$(printf 'l\303\251ases')"
refuse_ns "byte 0x0a at offset 6" "$(printf 'leases\nheads')"
[ "$n" -ge 30 ] || fail "only $n cases"

# a name starting with '-' without '--' is an unknown option, not a name
expect_rc 64 "$R" acquire -x
expect_rc 64 "$R" status --lease-token
[ "$(snapshot)" = "$before" ] || fail "wrote something"

# ---- payloads already in the store: oversized, deeply nested, not a commit ----
plant() { c=$(GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t G commit-tree "$E" <"$TMPDIR/msg") && G update-ref "refs/leases/$1" "$c"; }
py() { python3 -c "$1" >"$TMPDIR/msg"; }
py 'print("big: acquire claimed by a on h\n\n{\"name\":\"big\",\"owner\":\"" + "x" * 20000 + "\"}")'
plant big
py 'print("huge: acquire claimed by a on h\n\n" + "[" * 2000000 + "]" * 2000000)'
plant huge
py 'print("deep: acquire claimed by a on h\n\n" + "[" * 8000 + "]" * 8000)'
plant deep
py 'print("nest: x\n\n{\"name\":\"nest\",\"x\":" + "{\"a\":" * 1000 + "1" + "}" * 1000 + "}")'
plant nest
py 'print("wide: x\n\n{\"name\":\"wide\",\"x\":[" + ",".join(["1"] * 7000) + "]}")'
plant wide
py 'print("dup: x\n\n{\"name\":\"dup\",\"name\":\"dup\"}")'
plant dup
printf 'nul: x\n\n{"name":"nul\000"}' >"$TMPDIR/msg"
c=$(G hash-object -t commit -w --literally --stdin <<EOF
tree $E
author t <t@t> 1 +0000
committer t <t@t> 1 +0000

nul: x

{"name":"nul$(printf '\001')"}
EOF
)
G update-ref refs/leases/nul "$c"
G update-ref refs/leases/blob "$(echo hi | G hash-object -w --stdin)"
G update-ref refs/leases/tree "$E"
for b in big huge deep nest wide dup nul blob tree; do
  expect_rc 65 "$R" status "$b"
  expect_rc 65 "$R" --json status "$b"
  [ "$(jout status)" = error ] || fail "status $b --json"
  expect_rc 65 "$R" acquire "$b"
  expect_rc 65 "$R" heartbeat "$b" --lease-token "$z"
  expect_rc 65 "$R" transition "$b" --lease-token "$z" --to working
  expect_rc 65 "$R" release "$b" --lease-token "$z"
done
expect_rc 0 "$R" list
for b in big huge deep nest wide dup nul blob tree; do
  grep -q "^$b  *? *malformed" "$TMPDIR/out" || fail "list does not report $b as malformed"
done
grep -q '^held  *claimed  *live' "$TMPDIR/out" || fail "list lost the good lease"
expect_rc 0 "$R" --json list
[ "$(jout namespace)" = leases ] || fail "list --json"
# F27: break --force frees an unreadable lease by CAS; it is readable
# afterwards. Without --force it is refused: nothing readable shows it free
# (issue 23).
expect_rc 65 "$R" break huge
grep -q "needs --force" "$TMPDIR/err" || fail "break huge without --force"
expect_rc 0 "$R" break huge --force
expect_rc 0 "$R" --json status huge
[ "$(jout status)" = released ] || fail "break did not free the oversized lease"
[ "$(G rev-parse refs/heads/main)" = "$M" ] || fail "main moved"
echo "ok: $n crafted names and namespaces"
