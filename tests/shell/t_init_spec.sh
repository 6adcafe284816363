#!/bin/sh
# shellcheck disable=SC1091,SC2015  # sourced helper; A && B || fail is intended
# Issue 23: `reflease init` takes the store spelling --store takes.
# `init local:PATH` makes the repository at PATH (never a directory named
# "local:PATH"); github: and remote: stores are not made by init: exit 64
# saying what to do, nothing created.
. "$(dirname "$0")/lease_lib.sh"
cd "$TMPDIR" || exit 1
expect_rc 0 "$R" init "local:$TMPDIR/a.git"
git --git-dir="$TMPDIR/a.git" rev-parse --is-bare-repository | grep -q true || fail "no repository at a.git"
[ ! -e "$TMPDIR/local:$TMPDIR" ] && [ ! -e "local:$TMPDIR" ] && [ ! -e local: ] || fail "a directory named local: was made"
grep -q "use --store local:$TMPDIR/a.git)" "$TMPDIR/out" || fail "init local: output"
# relative, and --json
expect_rc 0 "$R" --json init local:b.git
[ "$(jout path)" = b.git ] && [ "$(jout status)" = initialized ] || fail "init local:b.git --json"
[ -d b.git/refs ] || fail "no repository at b.git"
expect_rc 0 "$R" --store local:b.git acquire x
# configuring an existing one through local: too
expect_rc 0 "$R" init local:b.git
grep -q "^configured" "$TMPDIR/out" || fail "init local: of an existing store"
expect_rc 64 "$R" init local:
for spec in github:o/r remote:https://example.invalid/r.git; do
  expect_rc 64 "$R" init "$spec"
  grep -q "init makes local stores only" "$TMPDIR/err" || fail "$spec: no explanation"
  grep -q -- "--store $spec" "$TMPDIR/err" || fail "$spec: does not say what to use"
done
[ -z "$(find . -maxdepth 1 -name 'github:*' -o -maxdepth 1 -name 'remote:*')" ] || fail "init made a directory for a github:/remote: spec"
# a directory really named local:x is ./local:x
expect_rc 0 "$R" init ./local:x
[ -d "./local:x/refs" ] || fail "./local:x"
echo ok
