#!/bin/sh
# shellcheck disable=SC1091,SC2015  # sourced helper; A && B || fail is intended
# test: seconds 25
# Issue 29 item 2: `reflease gc` keeps a local store small. Heartbeats that
# replace heartbeats (protocol.md §2) leave the replaced commits unreachable;
# gc packs what is reachable and prunes what is unreachable once it is older
# than the grace (default 1 h: a write whose CAS is still to come is never
# pruned), and changes nothing a reader sees. The clock is shifted with
# libfaketime, git's too (gc two hours on). (Concurrent writers beside gc:
# t_local_maintenance.sh.)
. "$(dirname "$0")/lease_lib.sh"
command -v faketime >/dev/null || fail "faketime (libfaketime) is required"
G() { git --git-dir="$S" "$@"; }
loose() { G count-objects -v | sed -n 's/^count: //p'; }

expect_rc 0 "$R" acquire gc1 --ttl 600 --json
T=$(jout lease.lease_token)
k=1
: >"$TMPDIR/replaced"
while [ "$k" -le 20 ]; do
  expect_rc 0 faketime -f "+$((k * 60))s" "$R" heartbeat gc1 --lease-token "$T" --json
  [ "$(jout status)" = renewed ] || fail "heartbeat $k: $(jout status)"
  # each heartbeat but the last is replaced by the next: unreachable
  [ "$k" -eq 20 ] || jout oid >>"$TMPDIR/replaced"
  k=$((k + 1))
done
# how many of the replaced heartbeats the object store still has
present() {
  n=0
  while read -r o; do G cat-file -e "$o^{commit}" 2>/dev/null && n=$((n + 1)); done <"$TMPDIR/replaced"
  echo "$n"
}
[ "$(present)" -eq 19 ] || fail "replaced heartbeats in the store before gc: $(present)"
[ "$(jout lease.heartbeats)" = 20 ] || fail "heartbeats counted: $(jout lease.heartbeats)"
[ "$(G rev-list --count refs/leases/gc1)" -eq 2 ] || fail "reachable: $(G rev-list --count refs/leases/gc1)"
tip=$(G rev-parse refs/leases/gc1)
before=$(loose)
[ "$before" -ge 21 ] || fail "loose objects before gc: $before"

# default grace: everything is younger than an hour, nothing unreachable goes
expect_rc 0 "$R" gc --json
[ "$(jout status)" = packed ] && [ "$(jout grace_seconds)" = 3600 ] || fail "gc --json"
# kept: loose (Debian 12's git 2.39) or in a cruft pack (gc.cruftPacks, a newer git's
# default: Debian 13); either way every one is still there
[ "$(present)" -eq 19 ] || fail "gc pruned objects younger than the grace: $(present) of 19 left"
kept=$(loose)
[ "$kept" -lt "$before" ] || fail "gc packed nothing: $kept loose"

# two hours later (git itself under faketime: loose mtimes and a cruft
# pack's .mtimes alike) they go; the lease reads the same
expect_rc 0 faketime -f +7200s "$R" gc
[ "$(present)" -eq 0 ] || fail "unreachable objects older than the grace kept: $(present) of 19"
[ "$(loose)" -eq 0 ] || fail "loose objects left after gc: $(loose)"
[ "$(G rev-parse refs/leases/gc1)" = "$tip" ] || fail "gc moved the ref"
G fsck --strict --no-dangling >"$TMPDIR/fsck" 2>&1 || { cat "$TMPDIR/fsck"; fail "git fsck"; }
expect_rc 0 faketime -f +1200s "$R" status gc1 --json
[ "$(jout status)" = live ] && [ "$(jout lease.heartbeats)" = 20 ] || fail "status after gc"
expect_rc 0 "$R" history gc1 --json
expect_rc 0 faketime -f +1260s "$R" heartbeat gc1 --lease-token "$T" --json
[ "$(jout lease.heartbeats)" = 21 ] || fail "heartbeat after gc: $(jout lease.heartbeats)"

# git's ref walk is no snapshot: beside writers, git gc can stop on a ref it
# read mid-update ("unable to parse object: REF", seen in CI beside
# t_local_maintenance's writers). A git that stops so once, on a ref that
# reads: gc runs git gc again and succeeds; git is run as it is found on PATH.
REALGIT=$(command -v git)
mkdir -p "$TMPDIR/fakebin"
cat >"$TMPDIR/fakebin/git" <<EOF2
#!/bin/sh
# git, but its first gc (or every one, with \$TMPDIR/always) stops as a ref walk does
case " \$* " in
*" gc "*)
  echo gc >>"$TMPDIR/gc-runs"
  echo "LC_ALL=\${LC_ALL-unset} LANG=\${LANG-unset} LANGUAGE=\${LANGUAGE-unset}" >>"$TMPDIR/gc-env"
  if [ -e "$TMPDIR/always" ] || [ ! -e "$TMPDIR/stopped" ]; then
    : >"$TMPDIR/stopped"
    # as git says it: in German (de.po) unless LC_ALL=C overrides LANGUAGE
    case \${LC_ALL-}:\${LANGUAGE-} in
    C:* | *:) echo "fatal: unable to parse object: refs/leases/gc1" >&2
      echo "fatal: failed to run prune" >&2 ;;
    *) echo "Schwerwiegend: Konnte Objekt 'refs/leases/gc1' nicht parsen." >&2
      echo "Schwerwiegend: failed to run prune" >&2 ;;
    esac
    exit 128
  fi ;;
esac
exec "$REALGIT" "\$@"
EOF2
chmod +x "$TMPDIR/fakebin/git"
# gc through that git: RC wanted, git gc runs wanted, what stderr must say
fake_gc() {
  : >"$TMPDIR/gc-runs"
  expect_rc "$1" env PATH="$TMPDIR/fakebin:$PATH" "$R" gc
  [ "$(wc -l <"$TMPDIR/gc-runs")" -eq "$2" ] ||
    fail "git gc runs: $(wc -l <"$TMPDIR/gc-runs") (want $2)"
  grep -qF "$3" "$TMPDIR/err" || { cat "$TMPDIR/err"; fail "gc did not say: $3"; }
}
fake_gc 0 2 'refs/leases/gc1 moved while git gc read it (it reads now); git gc again (2 of 3)'
# ... every time: three runs, then exit 70 naming the ref
: >"$TMPDIR/always"
fake_gc 70 3 'stopped 3 times on refs that moved while it read them (last refs/leases/gc1)'
# a ref at an object the store does not have is damage, not a race: real git
# stops on it, gc says so at once (65) and runs git gc once
printf '%s\n' 0123456789abcdef0123456789abcdef01234567 >"$S/refs/leases/gone"
rm -f "$TMPDIR/always"
: >"$TMPDIR/stopped"
fake_gc 65 1 'refs/leases/gone points at 0123456789abcdef0123456789abcdef01234567, an object the store'

# G1 (issue 40): git runs in the C locale whatever the user's, so the retry
# and the damage report read git's own wording: under German, with git's
# real translations (Debian's git ships de), real git stops on the missing
# object and gc still names it (65), not "git gc failed" (70)
! grep -qv '^LC_ALL=C LANG=unset LANGUAGE=unset$' "$TMPDIR/gc-env" ||
  fail "G1: git gc ran in the caller's locale: $(sort -u "$TMPDIR/gc-env")"
# German needs git's de.po and a libc that honours LANGUAGE under
# LANG=C.UTF-8 (Debian 12's glibc 2.36 does; Debian 13's 2.41 treats C.UTF-8
# as C and ignores LANGUAGE, and a minimal root has no de_DE locale): where
# git does not speak German, the locale half is skipped, saying so
de_git() {
  env -u LC_ALL -u LC_MESSAGES LANG=C.UTF-8 LANGUAGE=de git --git-dir="$S" \
    cat-file -t 0123456789abcdef0123456789abcdef01234567 2>&1 | grep -q Schwerwiegend
}
if [ -f /usr/share/locale/de/LC_MESSAGES/git.mo ] && de_git; then
  (
    unset LC_ALL LC_MESSAGES
    export LANG=C.UTF-8 LANGUAGE=de
    : >"$TMPDIR/gc-env"
    : >"$TMPDIR/stopped"
    fake_gc 65 1 'refs/leases/gone points at 0123456789abcdef0123456789abcdef01234567, an object the store'
    grep -q '^LC_ALL=C LANG=unset LANGUAGE=unset$' "$TMPDIR/gc-env" || fail "G1: env $(cat "$TMPDIR/gc-env")"
    # and a ref that moved under git, in German: run again, as in English
    rm -f "$S/refs/leases/gone" "$TMPDIR/stopped"
    fake_gc 0 2 'refs/leases/gc1 moved while git gc read it'
  ) || exit 1
else
  echo "G1: git does not speak German here (no de.po, or LANGUAGE ignored under C.UTF-8): the locale half is skipped"
fi
rm -f "$S/refs/leases/gone"

# bad input, and a store whose server maintains itself
expect_rc 64 "$R" gc --grace soon
expect_rc 64 "$R" gc extra
echo "t_local_gc: ok"
