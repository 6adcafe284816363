#!/bin/sh
# test: seconds 22
# reflease migrate against real processes (protocol.md §8, field case F28):
# a holder's process heartbeats pre-bump (1.0) leases with the 1.1 client in
# a loop while `migrate --apply` runs. No lease is lost, no migrate commit
# changes an expiry (or any held field), the final state is 1.2, a second run
# writes nothing, and --json parses with the documented fields.
set -eu
R=$REFLEASE
cd "$TMPDIR"
"$R" init store >/dev/null
STORE="local:$TMPDIR/store"
GIT="git --git-dir=$TMPDIR/store"
TOKEN=0123456789abcdef0123456789abcdef
export REFLEASE_OWNER=alice REFLEASE_HOST=host-a
export GIT_AUTHOR_NAME=reflease GIT_AUTHOR_EMAIL=reflease@localhost
export GIT_COMMITTER_NAME=reflease GIT_COMMITTER_EMAIL=reflease@localhost
EMPTY_TREE=$($GIT hash-object -t tree /dev/null)
LEASES=12
ROUNDS=3

fail() { echo "FAIL: $*"; exit 1; }
ts() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ; }

# seed NAME: a 1.0.0 payload written by a pre-bump client (no ttl_seconds),
# expiring in 100 s, committed now (so a 1.1 heartbeat is due at once).
seed() {
  now=$(date +%s)
  json="{\"acquired_at\":\"$(ts $((now - 500)))\",\"expires_at\":\"$(ts $((now + 100)))\",\"host\":\"host-a\",\"lease_token\":\"$TOKEN\",\"name\":\"$1\",\"nonce\":\"0011223344556677\",\"owner\":\"alice\",\"phase\":\"working\",\"sdlc_version\":\"1.0.0\",\"transitions\":3}"
  c=$(printf '%s: heartbeat working by alice on host-a\n\n%s\n' "$1" "$json" | $GIT commit-tree "$EMPTY_TREE")
  $GIT update-ref "refs/leases/$1" "$c" ""
}

# payload of a commit (everything after the first blank line)
payload() { $GIT cat-file commit "$1" | sed '1,/^$/d' | sed '1,/^$/d'; }

# check_chain NAME: the tip is 1.2.0 with the seeded token, and every migrate
# commit keeps every held field of its parent (one git log, one jq).
check_chain() {
  $GIT log --first-parent --format='%s%x09%b' "refs/leases/$1" | grep -v '^$' | jq -R -s -e '
    def held: [.owner, .host, .phase, .lease_token, .transitions, .acquired_at, .expires_at, .name];
    [split("\n")[] | select(length > 0) | split("\t") | {s: .[0], p: (.[1] | fromjson)}] as $c
    | ($c[0].p.sdlc_version == "1.2.0") and ($c[0].p.lease_token == "'"$TOKEN"'")
      and all(range(0; $c | length) as $i | select($c[$i].s | test(": migrate "))
              | ($c[$i].p | held) == ($c[$i + 1].p | held)
                and $c[$i].p.ttl_seconds >= 5 and $c[$i].p.ttl_seconds <= 86400; .)' >/dev/null
}

round=1
while [ "$round" -le "$ROUNDS" ]; do
  i=1
  while [ "$i" -le "$LEASES" ]; do seed "r$round-l$i"; i=$((i + 1)); done

  # the holder: heartbeats every lease of the round with the 1.1 client,
  # sweep after sweep, until told to stop; any failure is recorded
  rm -f stop hb.fail
  (
    while [ ! -e stop ]; do
      i=1
      while [ "$i" -le "$LEASES" ]; do
        out=$("$R" --store "$STORE" heartbeat "r$round-l$i" --lease-token "$TOKEN" --json) ||
          { echo "r$round-l$i: exit $? $out" >>hb.fail; }
        st=$(printf '%s' "$out" | jq -r .status)
        case "$st" in renewed|not_due) ;; *) echo "r$round-l$i: $st" >>hb.fail ;; esac
        i=$((i + 1))
      done
    done
  ) &
  hb=$!
  # two migrators at once, racing the holder and each other
  REFLEASE_LOG=info "$R" --store "$STORE" migrate --apply --json >"other$round.json" 2>>races.log &
  mig2=$!
  rc=0
  REFLEASE_LOG=info "$R" --store "$STORE" migrate --apply --json >"mig$round.json" 2>>races.log || rc=$?
  rc2=0
  wait "$mig2" || rc2=$?
  touch stop
  wait "$hb"
  if [ "$rc" -ne 0 ] || [ "$rc2" -ne 0 ]; then
    cat "mig$round.json" "other$round.json"; fail "round $round: migrate --apply exit $rc/$rc2"
  fi
  [ ! -e hb.fail ] || { cat hb.fail; fail "round $round: the holder lost a lease"; }
    for f in "mig$round.json" "other$round.json"; do
    jq -e '.applied == true and .target == "1.2.0" and .counts.conflict == 0' "$f" >/dev/null ||
      fail "round $round: $(cat "$f")"
  done
  "$R" --store "$STORE" list --json |
    jq -e '[.leases[] | select(.name | startswith("r'"$round"'-"))] | length == '"$LEASES"' and all(.status == "live")' >/dev/null ||
    fail "round $round: a lease is not live"
  i=1
  while [ "$i" -le "$LEASES" ]; do
    check_chain "r$round-l$i" || { $GIT log --format=%B "refs/leases/r$round-l$i"; fail "r$round-l$i: chain check"; }
    i=$((i + 1))
  done
  echo "round $round: $(jq -c .counts "mig$round.json") $(jq -c .counts "other$round.json")"
  round=$((round + 1))
done

echo "lost CAS races settled by re-reading: $(grep -c 're-reading' races.log || true)"

# a second run writes nothing
$GIT for-each-ref >before
"$R" --store "$STORE" migrate --apply --json >again.json
$GIT for-each-ref >after
cmp -s before after || fail "the second run wrote"
jq -e '.counts.migrated == 0 and .counts.would_migrate == 0 and .counts.current == (.leases | length)' again.json >/dev/null ||
  fail "second run: $(cat again.json)"

# --json carries exactly the documented fields; a plan writes nothing
seed plan-me
"$R" --store "$STORE" migrate --json >plan.json
jq -e '(keys == ["applied", "counts", "leases", "target"]) and .applied == false and
       (.counts | keys == ["conflict", "current", "migrated", "skipped_malformed", "skipped_newer", "would_migrate"]) and
       all(.leases[]; (keys - ["message"]) == ["from", "method", "name", "status", "to"]) and
       (.leases[] | select(.name == "plan-me") | .status == "would_migrate" and .method == "commit-time" and .from == "1.0.0" and .to == "1.2.0")' \
  plan.json >/dev/null || fail "plan --json: $(cat plan.json)"
[ "$(payload "$($GIT rev-parse refs/leases/plan-me)" | jq -r .sdlc_version)" = 1.0.0 ] || fail "a plan wrote"

# exit statuses: invalid --to / --assumed-ttl are usage errors; a plan exits
# 0, or 1 with --fail-on info when something would migrate
st=0; "$R" --store "$STORE" migrate --to 9.9.9 >/dev/null 2>&1 || st=$?
[ "$st" -eq 64 ] || fail "--to 9.9.9: exit $st"
st=0; "$R" --store "$STORE" migrate --assumed-ttl 0 >/dev/null 2>&1 || st=$?
[ "$st" -eq 64 ] || fail "--assumed-ttl 0: exit $st"
st=0; "$R" --store "$STORE" migrate --assumed-ttl 5m >/dev/null 2>&1 || st=$?
[ "$st" -eq 64 ] || fail "--assumed-ttl 5m: exit $st"
st=0; "$R" --store "$STORE" migrate --fail-on info >/dev/null || st=$?
[ "$st" -eq 1 ] || fail "--fail-on info with a pending migration: exit $st"

# a malformed payload whose text tries to start a workflow command
bad='{"sdlc_version":"x\n::error::pwned|<b>"}'
c=$(printf 'evil: acquire working by x on y\n\n%s\n' "$bad" | $GIT commit-tree "$EMPTY_TREE")
$GIT update-ref refs/leases/evil "$c" ""

# the markdown summary, also into $GITHUB_STEP_SUMMARY in Actions; annotations
GITHUB_ACTIONS=true GITHUB_STEP_SUMMARY="$TMPDIR/step.md" \
  "$R" --store "$STORE" migrate --apply --summary sum.md >human.txt 2>annot.txt
! grep -q '^::error::pwned' human.txt annot.txt sum.md || fail "payload text became a workflow command"
grep -q '^::warning title=reflease migrate::lease evil%3A skipped_malformed' annot.txt ||
  fail "annotation: $(cat annot.txt)"
# shellcheck disable=SC2016
grep -q '^| `evil` | - | - | - | skipped_malformed | .*pwned\\|&lt;b&gt;' sum.md || fail "summary escaping: $(cat sum.md)"
# shellcheck disable=SC2016
grep -q '^| `plan-me` | 1.0.0 | 1.2.0 | commit-time | migrated |' sum.md || fail "summary: $(cat sum.md)"
cmp -s sum.md step.md || fail "step summary differs from --summary"
grep -q 'plan-me' human.txt || fail "human table"
echo "ok"
