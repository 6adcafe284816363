# Helpers for the N-slot shell tests (sourced; not a test itself; issue 27).
# slots_pool LABEL PROCS SLOTS TTL: PROCS real processes each `run pool
# --slots SLOTS --wait 120 --ttl TTL` a command that counts itself in and
# out under flock(1) (independently of reflease) and holds for 1 s; fails
# unless every one got in and never more than SLOTS ran at once. Sets
# SLOTS_MAX (the most seen at once). Needs $R, $TMPDIR and fail().
slots_pool() {
  sp_label=$1 sp_procs=$2 sp_slots=$3 sp_ttl=$4
  sp_c="$TMPDIR/count.$sp_label"
  echo "0 0" >"$sp_c"
  cat >"$TMPDIR/guarded.sh" <<'G'
#!/bin/sh
set -eu
C=$1
flock "$C.lock" sh -c 'read -r cur max <"$1"; cur=$((cur + 1)); [ "$cur" -gt "$max" ] && max=$cur; echo "$cur $max" >"$1"' _ "$C"
echo "$REFLEASE_LEASE_NAME" >>"$C.names"
sleep 1
flock "$C.lock" sh -c 'read -r cur max <"$1"; echo "$((cur - 1)) $max" >"$1"' _ "$C"
G
  sp_pids=""
  sp_i=1
  while [ "$sp_i" -le "$sp_procs" ]; do
    REFLEASE_OWNER="w$sp_i" "$R" run pool --slots "$sp_slots" --wait 120 --ttl "$sp_ttl" -- \
      sh "$TMPDIR/guarded.sh" "$sp_c" >"$TMPDIR/$sp_label.w$sp_i.out" 2>"$TMPDIR/$sp_label.w$sp_i.err" &
    sp_pids="$sp_pids $!"
    sp_i=$((sp_i + 1))
  done
  sp_failed=0
  for sp_p in $sp_pids; do wait "$sp_p" || sp_failed=$((sp_failed + 1)); done
  [ "$sp_failed" -eq 0 ] || { cat "$TMPDIR/$sp_label".w*.err >&2; fail "$sp_label: $sp_failed of $sp_procs run --slots $sp_slots failed"; }
  read -r sp_cur SLOTS_MAX <"$sp_c"
  [ "$sp_cur" -eq 0 ] || fail "$sp_label: counter left at $sp_cur"
  [ "$SLOTS_MAX" -le "$sp_slots" ] || fail "$sp_label: $SLOTS_MAX guarded commands ran at once on $sp_slots slots"
  [ "$SLOTS_MAX" -ge 2 ] || fail "$sp_label: only $SLOTS_MAX at once: the slots did not run side by side"
  [ "$(wc -l <"$sp_c.names")" -eq "$sp_procs" ] || fail "$sp_label: not every process got in: $(cat "$sp_c.names")"
  if grep -qv "^pool@[1-9][0-9]*of$sp_slots\$" "$sp_c.names"; then fail "$sp_label: slot names: $(cat "$sp_c.names")"; fi
  echo "$sp_label: $sp_procs processes on $sp_slots slots: at most $SLOTS_MAX at once, all got in"
}
