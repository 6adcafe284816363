#!/bin/sh
# shellcheck disable=SC1091,SC2154,SC2015  # sourced helpers; fpid and base set by fakegh_start; A && B || fail is intended
# Issue 39 item 5, budget awareness: reflease reads x-ratelimit-limit,
# -remaining, -used, -resource and -reset on every GitHub answer; when under
# 10 % of a budget remains it warns once per process on stderr, naming the
# budget, what is left, when it resets (RFC 3339) and that the leases of the
# repository compete for it (in a GitHub Actions step also as a ::warning
# annotation); `reconcile --json` reports the budgets it saw, and its job
# summary shows them. The fake announces a low budget through
# /_fakegh/ratelimit (GitHub's header names, cited in tests/support/fakegh.c).
set -eu
. "$(dirname "$0")/lease_lib.sh"
. "$(dirname "$0")/fakegh_lib.sh"
fakegh_start
trap 'kill "$fpid" 2>/dev/null || true' EXIT INT TERM
export GITHUB_API_URL="$base" GITHUB_TOKEN=ghp_budget REFLEASE_STORE=github:octo/leases
export REFLEASE_OWNER=alice REFLEASE_HOST=runner-1
unset GITHUB_GRAPHQL_URL REFLEASE_GITHUB_TOKEN GITHUB_ACTIONS GITHUB_STEP_SUMMARY || true
budget() { curl -sf -XPOST "$base/_fakegh/ratelimit" -d "$1" >/dev/null; }

# plenty left: no warning
budget '{"limit":1000,"remaining":500,"resource":"core"}'
expect_rc 0 "$REFLEASE" acquire plenty --ttl 60
! grep -q "GitHub request budget" "$TMPDIR/err" || fail "warned with 50 % left: $(cat "$TMPDIR/err")"

# under 10 %: one warning for a whole command of several requests (acquire:
# read, commit, create, re-read), naming the budget, what is left, the reset
budget '{"limit":1000,"remaining":60,"resource":"core"}'
expect_rc 0 "$REFLEASE" acquire low --ttl 60
n=$(grep -c "GitHub request budget" "$TMPDIR/err" || true)
[ "$n" -eq 1 ] || fail "want one warning, got $n: $(cat "$TMPDIR/err")"
grep -q "reflease: warning: GitHub request budget: the core budget (REST requests) has [0-9]* of 1000 left, under 10 %; it resets at 20[0-9-]*T[0-9:]*Z. The leases of octo/leases compete for it" "$TMPDIR/err" ||
  fail "warning text: $(cat "$TMPDIR/err")"

# in a GitHub Actions step: the same warning as a ::warning annotation
expect_rc 0 env GITHUB_ACTIONS=true "$REFLEASE" status low
grep -q "^::warning title=reflease GitHub request budget::GitHub request budget: the core budget" "$TMPDIR/err" ||
  fail "no annotation: $(cat "$TMPDIR/err")"
[ "$(grep -c '^::warning' "$TMPDIR/err")" -eq 1 ] || fail "annotations: $(cat "$TMPDIR/err")"

# reconcile --json reports the budgets it saw; its job summary shows them
: >"$TMPDIR/summary.md"
expect_rc 0 env GITHUB_ACTIONS=true GITHUB_STEP_SUMMARY="$TMPDIR/summary.md" "$REFLEASE" --json reconcile
python3 - "$TMPDIR/out" <<'PY' || fail "reconcile --json budgets: $(cat "$TMPDIR/out")"
import json, sys, re
doc = json.load(open(sys.argv[1]))
b = {x["resource"]: x for x in doc["budgets"]}
assert "core" in b and b["core"]["limit"] == 1000 and b["core"]["remaining"] < 100, b
assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$", b["core"]["reset"]), b
assert "used" in b["core"], b
PY
grep -q "GitHub request budgets (the leases of this repository compete for them): \`core\` [0-9]* of 1000 left (resets 20" "$TMPDIR/summary.md" ||
  fail "summary: $(cat "$TMPDIR/summary.md")"
echo ok
