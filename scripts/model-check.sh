#!/bin/sh
# Model-check the lease protocol (docs/model/lease.pml) with SPIN: every
# property on the correct model must hold, every deliberately broken variant
# must produce a counterexample for the property it breaks.
#
# Usage: sh scripts/model-check.sh [MODEL.pml]
# Environment: MODEL_KEEP=DIR keeps each run's output (and trails) in DIR;
#              MODEL_ONLY=NAME runs only the runs whose name contains NAME.
# Prints one line per run and "model: N passed, N failed"; exits non-zero on
# any unexpected result.  Generated files (pan.*) live in a temporary
# directory, never in the repository.
set -u

PML=${1:-docs/model/lease.pml}
DEPTH=${MODEL_DEPTH:-10000} # bounded search depth (-m); runs reach ~260
HASHW=${MODEL_HASHW:-24}    # hash table 2^W slots
MEMLIM=${MODEL_MEMLIM:-2048} # MB

for tool in spin gcc; do
  command -v "$tool" >/dev/null 2>&1 || {
    echo "model: '$tool' not found (Debian: apt-get install -y spin gcc; or make deps)" >&2
    exit 2
  }
done
[ -f "$PML" ] || { echo "model: no model file $PML" >&2; exit 2; }
case $PML in /*) ;; *) PML=$(pwd)/$PML ;; esac

TMP=$(mktemp -d "${TMPDIR:-/tmp}/model.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT INT TERM

pass=0
fail=0
start=$(date +%s)

# run NAME EXPECT(ok|cex) DEFINES...
run() {
  name=$1
  expect=$2
  shift 2
  if [ -n "${MODEL_ONLY:-}" ]; then
    case $name in *"$MODEL_ONLY"*) ;; *) return 0 ;; esac
  fi
  dir=$TMP/$name
  mkdir -p "$dir"
  t0=$(date +%s)
  cp "$PML" "$dir/lease.pml"
  if ! (cd "$dir" && spin -a "$@" lease.pml >spin.out 2>&1); then
    echo "model: $name: FAIL (spin -a failed)"
    sed 's/^/  /' "$dir/spin.out" | head -20
    fail=$((fail + 1))
    return 0
  fi
  # the runs expected to hold explore millions of states: optimise; the
  # counterexample searches stop early: compile faster
  opt=-O1
  [ "$expect" = ok ] && opt=-O2
  if ! (cd "$dir" && gcc "$opt" -w -DSAFETY -DCOLLAPSE -DMEMLIM="$MEMLIM" -o pan pan.c >gcc.out 2>&1); then
    echo "model: $name: FAIL (gcc failed)"
    sed 's/^/  /' "$dir/gcc.out" | head -20
    fail=$((fail + 1))
    return 0
  fi
  (cd "$dir" && ./pan -m"$DEPTH" -w"$HASHW" >pan.out 2>&1)
  t1=$(date +%s)
  out=$dir/pan.out
  errors=$(sed -n 's/.*errors: \([0-9][0-9]*\).*/\1/p' "$out" | tail -1)
  states=$(sed -n 's/^ *\([0-9][0-9]*\) states, stored.*/\1/p' "$out" | tail -1)
  depth=$(sed -n 's/.*depth reached \([0-9][0-9]*\),.*/\1/p' "$out" | tail -1)
  elapsed=$(sed -n 's/^pan: elapsed time \([0-9.e+-]*\) seconds.*/\1/p' "$out" | tail -1)
  figures="${states:-?} states, depth ${depth:-?}, pan ${elapsed:-?} s, run $((t1 - t0)) s"
  verdict=FAIL
  detail=""
  if grep -q 'max search depth too small' "$out"; then
    detail="search depth $DEPTH too small: the check is incomplete"
  elif grep -q 'out of memory' "$out"; then
    detail="out of memory"
  elif [ "$expect" = ok ]; then
    if [ "${errors:-x}" = 0 ]; then
      verdict=ok
      detail="no errors"
    else
      detail="unexpected counterexample: $(grep -m1 -E 'assertion violated|invalid end state|pan:1' "$out")"
    fi
  else
    if [ "${errors:-0}" != 0 ] && grep -q 'assertion violated' "$out"; then
      verdict=ok
      detail="counterexample as expected: $(sed -n 's/^pan:1: \(assertion violated.*\) (at depth.*/\1/p' "$out" | head -1 | cut -c1-72)"
      # the shortest readable account of the counterexample, kept on request
      (cd "$dir" && spin -t "$@" lease.pml 2>&1 | sed -n 's/^ *MSC: //p' >trail.txt)
      if [ -n "${MODEL_VERBOSE:-}" ]; then sed 's/^/    /' "$dir/trail.txt"; fi
    else
      detail="expected a counterexample, none found (errors: ${errors:-?})"
    fi
  fi
  if [ "$verdict" = ok ]; then
    pass=$((pass + 1))
    echo "model: $name: ok: $detail ($figures)"
  else
    fail=$((fail + 1))
    echo "model: $name: FAIL: $detail ($figures)"
    sed 's/^/  /' "$out" | grep -v '^  *$' | head -30
  fi
  if [ -n "${MODEL_KEEP:-}" ]; then
    mkdir -p "$MODEL_KEEP/$name"
    cp "$dir"/pan.out "$MODEL_KEEP/$name/" 2>/dev/null
    cp "$dir"/*.trail "$dir"/trail.txt "$MODEL_KEEP/$name/" 2>/dev/null
  fi
  return 0
}

# Reach checks: scenarios the properties depend on do occur (not vacuous).
run reach-takeover cex -DREACH_TAKEOVER=1
run reach-settled cex -DREACH_SETTLED=1
run reach-lostsince cex -DREACH_LOSTSINCE=1
run reach-notdue cex -DREACH_NOTDUE=1
# issue 29: a heartbeat replacing a heartbeat needs three operations of one
# client (acquire, heartbeat, heartbeat); the properties are checked at OPS=2
# (OPS=3 exceeds this check's time and memory: docs/model/README.md)
run reach-replaced cex -DREACH_REPLACED=1 -DOPS=3
# The protocol as written (protocol.md section 5): every property holds.
run correct-a-fencing ok -DPROP_A
run correct-b-release ok -DPROP_B
run correct-c-transitions ok -DPROP_C
run correct-d-outcomes ok -DPROP_D
run correct-e-belief ok -DPROP_E
# Broken variants: each must fail the property it targets.
run broken-sameid-a cex -DPROP_A -DBROKEN_SAMEID
run broken-relowner-a cex -DPROP_A -DBROKEN_RELOWNER
run broken-relowner-b cex -DPROP_B -DBROKEN_RELOWNER
run broken-delcreate-c cex -DPROP_C -DBROKEN_DELCREATE
run broken-nolag-d cex -DPROP_D -DBROKEN_NOLAG
run broken-settlemoved-d cex -DPROP_D -DBROKEN_SETTLEMOVED
# Finding (docs/model/README.md): when a holder shortens its TTL, a landed
# write reported as no success (too little TTL left) leaves the holder's
# deadline after the stored expires_at; the proposed fix closes it.
run finding-shortttl-e cex -DPROP_E -DVARTTL
run fixed-shortttl-e ok -DPROP_E -DVARTTL -DFIX_SHORTTTL

# Fair waiting (issue 28): docs/model/fair.pml, ticketed waiters; FIFO and
# mutual exclusion hold, a waiter that ignores older tickets is caught.
PML=$(cd "$(dirname "$0")/.." && pwd)/docs/model/fair.pml
run fair-fifo ok
run fair-broken-nocheck cex -DBROKEN_NOCHECK

end=$(date +%s)
echo "model: $pass passed, $fail failed ($((end - start)) s)"
[ "$fail" -eq 0 ]
