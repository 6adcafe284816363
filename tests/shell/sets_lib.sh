# The set contention run of issue 27 (sourced by t_sets*.sh; not a test
# itself): P processes each take random pairs of 4 names as one set for DUR
# seconds against $REFLEASE_STORE. Checked independently of reflease:
#  - exclusion: the holder's own command counts itself in and out of a
#    counter file per name under flock(1); a count above 1 is two holders;
#  - no partial hold: every token a worker got is, in the refs' history
#    (read with git), the acquire of exactly its pair's two names, and every
#    acquire commit's token is one a worker got for that pair;
#  - progress: every process acquires at least once (no deadlock, no
#    livelock).
# Needs: R (the binary), TMPDIR, fail(); sets_run P DUR TTL WAIT and
# sets_check_history GITDIR.

# sets_worker ID DUR TTL WAIT: one contending process
sets_worker() {
  id=$1 end=$(($(date +%s) + $2)) ttl=$3 wt=$4
  : >"$TMPDIR/w$id.log"
  while [ "$(date +%s)" -lt "$end" ]; do
    a=$(awk -v s="$id$(date +%N)" 'BEGIN { srand(s); print int(rand() * 4) }')
    b=$(( (a + 1 + $(awk -v s="$id$(date +%N)x" 'BEGIN { srand(s); print int(rand() * 3) }')) % 4 ))
    t=$("$R" acquire "n$a" "n$b" --ttl "$ttl" --wait "$wt" --print-token 2>>"$TMPDIR/w$id.err") || {
      echo "miss n$a n$b" >>"$TMPDIR/w$id.log"; continue; }
    echo "got $t n$a n$b" >>"$TMPDIR/w$id.log"
    # the holder's command: in, a short hold, out — counted per name
    for n in "n$a" "n$b"; do
      # shellcheck disable=SC2016  # expanded by the inner sh
      flock "$TMPDIR/c.$n.lock" sh -c 'v=$(($(cat "$1") + 1)); echo "$v" >"$1"; [ "$v" -eq 1 ] || echo "two holders of $2: $v" >>"$3"' \
        sh "$TMPDIR/c.$n" "$n" "$TMPDIR/violations"
    done
    sleep 0.0$(( 1$(date +%N | cut -c1-2) % 9 + 1 ))
    for n in "n$a" "n$b"; do
      # shellcheck disable=SC2016  # expanded by the inner sh
      flock "$TMPDIR/c.$n.lock" sh -c 'echo $(($(cat "$1") - 1)) >"$1"' sh "$TMPDIR/c.$n"
    done
    "$R" release "n$a" "n$b" --lease-token "$t" --strict >/dev/null 2>>"$TMPDIR/w$id.err" ||
      echo "release failed n$a n$b" >>"$TMPDIR/violations"
  done
}

# sets_run P DUR TTL WAIT: P workers for DUR s; fails on a violation or a
# worker that never acquired. Prints a summary line.
sets_run() {
  : >"$TMPDIR/violations"
  for n in n0 n1 n2 n3; do echo 0 >"$TMPDIR/c.$n"; done
  i=0 pids=
  while [ "$i" -lt "$1" ]; do
    sets_worker "$i" "$2" "$3" "$4" &
    pids="$pids $!"
    i=$((i + 1))
  done
  # shellcheck disable=SC2086  # the pids, one word each
  wait $pids
  [ ! -s "$TMPDIR/violations" ] || fail "$(cat "$TMPDIR/violations")"
  total=0
  i=0
  while [ "$i" -lt "$1" ]; do
    g=$(grep -c '^got ' "$TMPDIR/w$i.log" || true)
    [ "$g" -gt 0 ] || { cat "$TMPDIR/w$i.err" >&2; fail "worker $i never acquired"; }
    total=$((total + g))
    i=$((i + 1))
  done
  echo "sets: $1 processes, $2 s: $total set acquires, no two holders"
}

# sets_check_history GITDIR: every worker's token is the acquire of exactly
# its pair, and every acquire in the history is a worker's (no partial hold).
sets_check_history() {
  cat "$TMPDIR"/w*.log | grep '^got ' >"$TMPDIR/got" || true
  for n in n0 n1 n2 n3; do
    git --git-dir="$1" log --format='%B%x00' "refs/leases/$n" 2>/dev/null || true
  done | python3 -c '
import json, sys
got = {}
for line in open(sys.argv[1]):
    _, tok, a, b = line.split()
    if tok in got:
        sys.exit("token %s returned twice" % tok)
    got[tok] = {a, b}
seen = {}
for msg in sys.stdin.read().split("\0"):
    msg = msg.strip()
    if not msg or " acquire " not in msg.split("\n", 1)[0]:
        continue
    p = json.loads(msg.split("\n\n", 1)[1])
    seen.setdefault(p["lease_token"], set()).add(p["name"])
for tok, names in seen.items():
    if got.get(tok) != names:
        sys.exit("partial or unknown set write: token %s on %s, a worker got %s"
                 % (tok, sorted(names), sorted(got.get(tok, []))))
for tok, names in got.items():
    if seen.get(tok) != names:
        sys.exit("token %s of %s not in the history as that pair: %s"
                 % (tok, sorted(names), sorted(seen.get(tok, []))))
print("history: %d set acquires, each on exactly its pair" % len(seen))
' "$TMPDIR/got" || fail "history check"
}
