#!/bin/sh
# reconcile on the real binary (cli.md "reconcile", "GitHub Actions"):
# --json matches cli.md, exit status follows --fail-on, --reap, the markdown
# summary (capped, "N more"), annotations (capped per level, payload text
# escaped so it can never act as a workflow command), history --json.
set -eu
fail() { echo "FAIL: $*" >&2; exit 1; }

R="$TMPDIR/store"
"$REFLEASE" init "$R" >/dev/null
export REFLEASE_STORE="local:$R" REFLEASE_OWNER=tester REFLEASE_HOST=h1
unset GITHUB_ACTIONS GITHUB_STEP_SUMMARY || true
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@x GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@x
EMPTY=$(git -C "$R" hash-object -w -t tree /dev/null)
now=$(date +%s)
ts() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ; }
n=0
# payload NAME PHASE ACQ EXP TTL  (TTL "" = pre-bump 1.0.0)
payload() {
  n=$((n + 1))
  if [ -n "$5" ]; then v=1.1.0 t=",\"ttl_seconds\":$5"; else v=1.0.0 t=""; fi
  printf '{"acquired_at":"%s","expires_at":"%s","host":"h1","lease_token":"%s","name":"%s","nonce":"%016d","owner":"alice","phase":"%s","sdlc_version":"%s","transitions":0%s}' \
    "$(ts "$3")" "$(ts "$4")" aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa "$1" "$n" "$2" "$v" "$t"
}
# put NS NAME OP JSON: a commit over the current tip, ref moved
put() {
  ref="refs/$1/$2"
  parent=$(git -C "$R" rev-parse -q --verify "$ref" 2>/dev/null || true)
  msg=$(printf '%s: %s working by alice on h1\n\n%s\n' "$2" "$3" "$4")
  if [ -n "$parent" ]; then
    oid=$(git -C "$R" commit-tree "$EMPTY" -p "$parent" -m "$msg")
  else
    oid=$(git -C "$R" commit-tree "$EMPTY" -m "$msg")
  fi
  git -C "$R" update-ref "$ref" "$oid"
}

# --- the main namespace -----------------------------------------------------------------
"$REFLEASE" acquire -- fine >/dev/null
put leases fast acquire "$(payload fast working $((now - 4)) $((now + 296)) 300)"
put leases fast heartbeat "$(payload fast working $((now - 4)) $((now + 298)) 300)"
put leases fast heartbeat "$(payload fast working $((now - 4)) $((now + 300)) 300)"
put leases old acquire "$(payload old working $((now - 2000)) $((now - 1000)) 300)"
put leases bad acquire "$(payload bad 'x\r\n::error::pwned%,:' $((now - 5)) $((now + 295)) 300)"
put leases pre acquire "$(payload pre working $((now - 5)) $((now + 295)) '')"

out=$("$REFLEASE" reconcile --json) && st=0 || st=$?
[ "$st" -eq 1 ] || fail "default --fail-on error: exit $st, want 1 (malformed payload)"
printf "%s\n" "$out" | jq -e . >/dev/null || fail "--json output does not parse: $out"
[ "$(printf "%s\n" "$out" | wc -l)" -eq 1 ] || fail "--json: more than one line on stdout"
printf "%s\n" "$out" | jq -e '
  (keys | contains(["namespace","scanned","now","leases","counts","reaped","skipped","pruned"])) and
  .namespace == "leases" and .scanned == 5 and (.now | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$")) and
  .counts == {"ok": 1, "info": 1, "warning": 2, "error": 1} and
  .reaped == [] and .skipped == [] and .pruned == [] and
  ([.leases[].name] == ["bad","fast","fine","old","pre"]) and
  (.leases[] | select(.name == "fine") | .anomalies == [] and .phase == "claimed" and
     .owner == "tester" and (.oid | test("^[0-9a-f]{40}$")) and (.expires_at | type) == "string") and
  (.leases[] | select(.name == "fast") | .anomalies == [{"id": "heartbeat-rate-above-floor",
     "severity": "warning", "method": "exact", "interval_seconds": 2, "floor_seconds": 30,
     "message": .anomalies[0].message}] and (.anomalies[0].message | type) == "string") and
  (.leases[] | select(.name == "old") | [.anomalies[] | {id, severity}] == [{"id": "expired", "severity": "warning"}]) and
  (.leases[] | select(.name == "pre") | [.anomalies[] | {id, severity}] == [{"id": "pre-bump-payload", "severity": "info"}]) and
  (.leases[] | select(.name == "bad") | [.anomalies[].id] == ["malformed-payload"] and .phase == null)
' >/dev/null || fail "--json does not match cli.md: $out"

# --fail-on levels
for lv in error:1 warning:1 info:1 never:0; do
  "$REFLEASE" reconcile --fail-on "${lv%%:*}" >/dev/null && st=0 || st=$?
  [ "$st" -eq "${lv##*:}" ] || fail "--fail-on ${lv%%:*}: exit $st, want ${lv##*:}"
done
"$REFLEASE" reconcile --fail-on fatal >/dev/null 2>&1 && st=0 || st=$?
[ "$st" -eq 64 ] || fail "--fail-on fatal: exit $st, want 64"
# a namespace with only a warning and an info
put clean w acquire "$(payload w working $((now - 2000)) $((now - 1000)) 300)"
put clean p acquire "$(payload p working $((now - 5)) $((now + 295)) '')"
for lv in error:0 warning:1 info:1 never:0; do
  "$REFLEASE" --namespace clean reconcile --fail-on "${lv%%:*}" >/dev/null && st=0 || st=$?
  [ "$st" -eq "${lv##*:}" ] || fail "clean ns --fail-on ${lv%%:*}: exit $st, want ${lv##*:}"
done
# --grace hides a lateness below it
"$REFLEASE" --namespace clean reconcile --json --grace 5000 --fail-on warning >/dev/null ||
  fail "--grace 5000 should hide expired (1000 s late)"

# human table: control characters from payloads never reach the terminal
"$REFLEASE" reconcile >"$TMPDIR/human" || true
grep -q '^fast .*heartbeat-rate-above-floor(warning)' "$TMPDIR/human" || fail "human table: $(cat "$TMPDIR/human")"
if grep -q '^::' "$TMPDIR/human"; then fail "human output has a line starting with ::"; fi

# --- GitHub Actions: summary and annotations ----------------------------------------------
S="$TMPDIR/summary.md"
GITHUB_ACTIONS=true GITHUB_STEP_SUMMARY="$S" "$REFLEASE" reconcile --json >/dev/null 2>"$TMPDIR/err" || true
grep -q '^## reflease reconcile' "$S" || fail "no step summary written"
grep -q '^|---|---|---|---|---|$' "$S" || fail "summary table header: $(cat "$S")"
# shellcheck disable=SC2016
grep -q '^| bad | ? | ? | - | \*\*error\*\* `malformed-payload`' "$S" || fail "summary row: $(cat "$S")"
grep -q 'heartbeat\\-rate\\-above\\-floor\|heartbeat-rate-above-floor' "$S" || fail "summary lacks the floor anomaly"
grep -q '^::error title=reflease reconcile%3A refs/leases/bad::bad malformed-payload: ' "$TMPDIR/err" ||
  fail "no error annotation: $(cat "$TMPDIR/err")"
grep -q '%0D%0A::error::pwned%25' "$TMPDIR/err" || fail "payload text not escaped: $(cat "$TMPDIR/err")"
# every line starting with :: is one of ours; payload text never starts a command
if grep '^::' "$TMPDIR/err" | grep -v '^::\(error\|warning\|notice\) title=reflease reconcile' >/dev/null; then
  fail "foreign workflow command on stderr: $(cat "$TMPDIR/err")"
fi
if grep -q '^::error::pwned' "$S" "$TMPDIR/err"; then fail "injected command survived"; fi

# at most 10 annotations per level, the rest summarised
i=0
while [ $i -lt 13 ]; do
  put many "e$i" acquire "$(payload "e$i" working $((now - 2000)) $((now - 1000)) 300)"
  i=$((i + 1))
done
GITHUB_ACTIONS=true GITHUB_STEP_SUMMARY="$TMPDIR/s2.md" "$REFLEASE" --namespace many reconcile \
  >/dev/null 2>"$TMPDIR/err2" || true
[ "$(grep -c '^::warning title=reflease reconcile%3A' "$TMPDIR/err2")" -eq 10 ] || fail "want 10 warning annotations: $(cat "$TMPDIR/err2")"
grep -q '^::warning title=reflease reconcile::3 more warning anomalies' "$TMPDIR/err2" || fail "no 'N more' annotation"
# the summary stays under its cap with an "N more" line
REFLEASE_SUMMARY_MAX=1500 "$REFLEASE" --namespace many reconcile --summary "$TMPDIR/s3.md" >/dev/null || true
sz=$(wc -c <"$TMPDIR/s3.md")
[ "$sz" -lt 1500 ] || fail "summary $sz bytes, cap 1500"
grep -q 'more leases with anomalies not shown' "$TMPDIR/s3.md" || fail "no 'N more' line: $(cat "$TMPDIR/s3.md")"

# --- --reap --------------------------------------------------------------------------------
out=$("$REFLEASE" --namespace clean reconcile --reap --json --fail-on never)
printf "%s\n" "$out" | jq -e '[.reaped[].name] == ["w"] and .skipped == [] and
  (.reaped[0].released_oid | test("^[0-9a-f]{40}$"))' >/dev/null || fail "reap: $out"
out=$("$REFLEASE" --namespace clean reconcile --json --fail-on never)
printf "%s\n" "$out" | jq -e '(.leases[] | select(.name == "w") | .phase == "released" and .anomalies == [])' \
  >/dev/null || fail "after reap: $out"
"$REFLEASE" --namespace clean --json status w | jq -e '.status == "released"' >/dev/null || fail "status after reap"

# --- history -------------------------------------------------------------------------------
out=$("$REFLEASE" history --json fast)
printf "%s\n" "$out" | jq -e '.name == "fast" and (.items | length) == 3 and
  .items[0].op == "heartbeat" and .items[0].is_heartbeat and .items[0].interval_seconds == 2 and
  .items[0].interval_method == "exact" and .items[2].op == "acquire" and
  (.items[0].lease | has("lease_token") | not)' >/dev/null || fail "history --json: $out"
"$REFLEASE" history fast | head -1 | grep -q 'heartbeat +2s (exact)' || fail "history human"
echo "t_reconcile: ok"
