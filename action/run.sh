#!/usr/bin/env bash
# The reflease action's command step (action.yml): runs one reflease command
# from the INPUT_* variables that action.yml maps from the action's inputs.
#
# Safety: inputs arrive only as environment variables and are passed to the
# binary as separate argv words; nothing here evaluates them. INPUT_ARGS is
# split on blanks (spaces, tabs, newlines) by `read -ra`: no quotes, no
# globbing, no expansion. The lease token travels in REFLEASE_LEASE_TOKEN and
# the GitHub token in REFLEASE_GITHUB_TOKEN, never on a command line.
#
# Outputs (cli.md, GitHub Actions): the binary itself appends lease-token,
# status, oid and expires-at to $GITHUB_OUTPUT for the lease commands; for
# run they are read from its --json-file; for reconcile and migrate status is
# ok (exit 0), found (exit 1: something at or above --fail-on) or error.
# A failure is also an ::error annotation; each lease command adds one line to
# the job summary (reconcile and migrate write their own summary).
#
# The name input is one lease or a set (cli.md "Sets", issue 27): names
# separated by blanks, newlines or commas ("db prod", "db, prod", a YAML
# block), passed to the binary as separate words after `--`, in the order
# given; a set's result (--json on stdout, or run's --json-file) goes to
# $REFLEASE_ACTION_JSON when the JavaScript gives one, which reads its members.
#
# acquire with heartbeat true starts `reflease heartbeat NAME... --every ttl/3`
# detached (setsid, nohup) with its pid, exit status, log and token (mode 600)
# under $RUNNER_TEMP/reflease-heartbeat.<namespace>.<name>.* (a set: one
# keeper of the whole set, one atomic set heartbeat each time, under
# ...<namespace>.set-<hash of the sorted names>.*); release stops it first,
# and uses that token when no lease-token input is given.
set -uo pipefail

root=${GITHUB_ACTION_PATH:-$(cd "$(dirname "$0")/.." && pwd)}
bin="$root/build/bundle/bin/reflease" # make bundle (action/build.sh, or the cache)
tmp=${RUNNER_TEMP:-${TMPDIR:-/tmp}}

cmd=${INPUT_COMMAND:-}
# the names, split on blanks, newlines and commas (a lease name has none of them)
names=()
words=()
IFS=$' \t\n\r,' read -ra words -d '' <<<"${INPUT_NAME:-}" || true
for w in "${words[@]}"; do [ -z "$w" ] || names+=("$w"); done
name="${names[*]}" # for messages: the names as given, one blank apart
ttl=${INPUT_TTL:-}
phase=${INPUT_PHASE:-}
wait_s=${INPUT_WAIT:-}
fair=${INPUT_FAIR:-false}
ns=${INPUT_NAMESPACE:-}
heartbeat=${INPUT_HEARTBEAT:-false}
extra=()
# -d '': read every line (a multi-line `args:` too); read's status is 1 at end of input.
read -ra extra -d '' <<<"${INPUT_ARGS:-}" || true

# ---- workflow commands --------------------------------------------------------------

# Escape text for a workflow command's message (%, CR, LF), so no text can end
# the command early or start another one.
esc() {
  local v=$1
  v=${v//'%'/%25}
  v=${v//$'\r'/%0D}
  v=${v//$'\n'/%0A}
  printf '%s' "$v"
}
# ... and for a property value (title=...), where ':' and ',' are separators too.
esc_prop() {
  local v
  v=$(esc "$1")
  v=${v//:/%3A}
  v=${v//,/%2C}
  printf '%s' "$v"
}
annotate() { # LEVEL TITLE MESSAGE
  printf '::%s title=%s::%s\n' "$1" "$(esc_prop "$2")" "$(esc "$3")"
}
output() { # KEY VALUE (one line; values are ids, hex and timestamps)
  [ -n "${GITHUB_OUTPUT:-}" ] || return 0
  printf '%s=%s\n' "$1" "${2//$'\n'/ }" >>"$GITHUB_OUTPUT"
}
summary() { # LINE
  [ -n "${GITHUB_STEP_SUMMARY:-}" ] || return 0
  printf '%s\n' "$1" >>"$GITHUB_STEP_SUMMARY"
}
usage_error() {
  annotate error "reflease $cmd" "$1"
  echo "reflease action: $1" >&2
  output status error
  exit 64
}

# The meaning of an exit status (cli.md, Exit status).
meaning() {
  case $1 in
  1) echo "found something at or above --fail-on" ;;
  3) echo "the lease is held" ;;
  4) echo "not the holder, or the lease expired or was lost" ;;
  64) echo "usage error" ;;
  65) echo "malformed payload" ;;
  69) echo "store unreachable" ;;
  70) echo "internal error" ;;
  75) echo "temporary failure (CAS conflict, not verified, rate limited)" ;;
  77) echo "permission denied (does the job have contents: write?)" ;;
  78) echo "configuration error" ;;
  129 | 130 | 143) echo "interrupted" ;;
  *) echo "exit status $1" ;;
  esac
}

# ---- inputs ---------------------------------------------------------------------------

# The commands the command input accepts (scripts/action-check.mjs compares this
# list with action.yml's and the README's).
commands="acquire heartbeat transition release break run status list reconcile migrate gc"
case $cmd in
acquire | heartbeat | transition | release | break | run | status)
  [ -n "$name" ] || usage_error "command $cmd needs the name input"
  ;;
list | reconcile | migrate | gc) ;;
'') usage_error "the command input is required" ;;
*) usage_error "unknown command '$cmd' (${commands// /, })" ;;
esac
case ${heartbeat,,} in
true) heartbeat=true ;;
false | '') heartbeat=false ;;
*) usage_error "heartbeat must be true or false, not '$heartbeat'" ;;
esac
if [ "$heartbeat" = true ] && [ "$cmd" != acquire ]; then
  annotate warning "reflease $cmd" "heartbeat: true applies to command acquire only; ignored"
fi
seconds() { # INPUT VALUE: empty, or whole seconds (the binary checks the range)
  case $2 in
  *[!0-9]*) usage_error "$1 must be whole seconds, not '$2'" ;;
  esac
}
# Names end up in file names under RUNNER_TEMP: check their alphabet here (the
# binary checks every rule of protocol.md §1, and that no name is given twice).
for n in "${names[@]}"; do
  case $n in *[!A-Za-z0-9._@-]* | .*) usage_error "invalid lease name '$n' (protocol.md §1: [A-Za-z0-9._-], and a slot's NAME@iofN; several names are separated by blanks, newlines or commas)" ;; esac
done
set_n=${#names[@]}
if [ "$set_n" -gt 1 ]; then
  case $cmd in
  break | status) usage_error "command $cmd takes one name, not a set of $set_n ($name); sets are for acquire, heartbeat, transition, release and run" ;;
  esac
fi
case $ns in *[!a-z0-9-]*) usage_error "invalid namespace '$ns' (protocol.md §1: [a-z][a-z0-9-]*)" ;; esac
seconds ttl "$ttl"
seconds wait "$wait_s"
slots=${INPUT_SLOTS:-}
case $slots in *[!0-9]*) usage_error "slots must be a whole number (1-64), not '$slots'" ;; esac
if [ -n "$slots" ] && [ "$cmd" != acquire ] && [ "$cmd" != run ]; then
  usage_error "slots applies to commands acquire and run (name the slot held, NAME@iofN, for the others)"
fi
if [ -n "$slots" ] && [ "$set_n" -gt 1 ]; then
  usage_error "slots takes one name, not a set of $set_n ($name): a set's members are plain leases (cli.md \"Sets\")"
fi
case $fair in
true) [ -n "$wait_s" ] || usage_error "fair: true needs the wait input (the queue is for waiting)" ;;
false | '') fair=false ;;
*) usage_error "fair: '$fair' is neither true nor false" ;;
esac
[ "$fair" = false ] || [ -z "$slots" ] || usage_error "fair: true and slots do not go together (the queue is for one lease)"
[ "$fair" = false ] || [ "$set_n" -le 1 ] || usage_error "fair: true queues for one lease, not a set of $set_n ($name)"
[ -x "$bin" ] || usage_error "reflease is not built at $bin"
# The store input (README.md, "Which store"): git = git pushes to this
# repository on its GitHub server (remote:), the token only for that URL.
case ${INPUT_STORE:-api} in
api) ;;
git)
  [ -n "${GITHUB_REPOSITORY:-}" ] || usage_error "store git needs GITHUB_REPOSITORY"
  export REFLEASE_STORE="remote:${GITHUB_SERVER_URL:-https://github.com}/$GITHUB_REPOSITORY"
  export REFLEASE_GIT_TOKEN="${REFLEASE_GITHUB_TOKEN:-}"
  ;;
*) usage_error "store must be api or git, not '$INPUT_STORE'" ;;
esac

# A matrix job's legs share repository, run, attempt and job: the matrix index
# tells them apart (protocol.md §5: the Action passes it in REFLEASE_OWNER).
if [ -z "${REFLEASE_OWNER:-}" ] && [ "${GITHUB_ACTIONS:-}" = true ] &&
  [ "${REFLEASE_JOB_TOTAL:-1}" -gt 1 ] 2>/dev/null; then
  export REFLEASE_OWNER="${GITHUB_REPOSITORY:-?}/${GITHUB_RUN_ID:-?}/${GITHUB_RUN_ATTEMPT:-1}/${GITHUB_JOB:-?}/${REFLEASE_JOB_INDEX:-0}"
fi
if [ -n "${INPUT_LEASE_TOKEN:-}" ]; then
  export REFLEASE_LEASE_TOKEN="$INPUT_LEASE_TOKEN"
fi

base=("$bin")
[ -z "$ns" ] || base+=(--namespace "$ns")
argv=("${base[@]}")
ttlopt=()
[ -z "$ttl" ] || ttlopt=(--ttl "$ttl")
opts=("${ttlopt[@]}")

# ---- the background heartbeat ---------------------------------------------------------

# The heartbeat's files: by the lease's name; a set's by a hash of its sorted
# names (a set names up to 16 leases of up to 100 bytes each, more than a file
# name holds), so that a release naming the set in another order finds them.
# hbnames: the names the heartbeat is given (a set's sorted).
hb_files() {
  local key=$name
  hbnames=("${names[@]}")
  if [ "${#names[@]}" -gt 1 ]; then
    mapfile -t hbnames < <(printf '%s\n' "${names[@]}" | LC_ALL=C sort)
    key="set-$(printf '%s\n' "${hbnames[@]}" | sha256sum | cut -c1-32)"
  fi
  hb="$tmp/reflease-heartbeat.${ns:-${REFLEASE_NAMESPACE:-leases}}.$key"
}
hb_files

# Is PID our heartbeat process for this lease or set (not a recycled pid)?
is_heartbeat() {
  local c
  [ -r "/proc/$1/cmdline" ] || return 1
  c=$(tr '\0' ' ' <"/proc/$1/cmdline")
  case $c in *" heartbeat "*" -- ${hbnames[*]} ") return 0 ;; esac
  return 1
}

# Stop the background heartbeat of this lease, if one was started; report how it
# ended. Exit 143 is our own SIGTERM; anything else means it had stopped by itself.
stop_heartbeat() {
  local pid rc i
  [ -f "$hb.pid" ] || return 0
  pid=$(cat "$hb.pid")
  if [ ! -f "$hb.rc" ] && is_heartbeat "$pid"; then
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 300; i++)); do
      [ -f "$hb.rc" ] && break
      sleep 0.1
    done
    if [ ! -f "$hb.rc" ] && is_heartbeat "$pid"; then
      kill -KILL "$pid" 2>/dev/null || true
    fi
  fi
  rc=$(cat "$hb.rc" 2>/dev/null || echo unknown)
  echo "reflease: background heartbeat of $name stopped (exit $rc); its log:"
  tail -n 20 "$hb.log" 2>/dev/null | sed 's/^/  | /'
  case $rc in
  143 | 130 | 129) ;;
  *)
    annotate warning "reflease heartbeat $name" \
      "the background heartbeat had already stopped: $(meaning "$rc") (exit $rc)"
    ;;
  esac
  rm -f "$hb.pid" "$hb.rc" "$hb.log" "$hb.token"
}

start_heartbeat() {
  local token every i t=${ttl:-300}
  token=$(sed -n 's/^lease-token=//p' "${GITHUB_OUTPUT:-/dev/null}" | tail -n 1)
  if [ -z "$token" ]; then
    annotate error "reflease acquire $name" "heartbeat: no lease token to heartbeat with"
    return 70
  fi
  every=$((t / 3))
  stop_heartbeat
  rm -f "$hb.pid" "$hb.rc"
  # for a release step that does not pass lease-token (same job, same runner)
  (umask 077 && printf '%s\n' "$token" >"$hb.token")
  # a set: the whole set kept by one keeper (cli.md "Sets"), its names sorted
  local keep=("${base[@]}" heartbeat "${ttlopt[@]}" --every "$every" -- "${hbnames[@]}")
  # Not a step any more once detached: no step outputs or summary from it, and no
  # descriptor of the step's (the runner waits for the step's output pipes to close).
  # shellcheck disable=SC2016 # the inner script expands its own arguments
  REFLEASE_LEASE_TOKEN=$token GITHUB_OUTPUT='' GITHUB_STEP_SUMMARY='' \
    setsid nohup bash -c '
      f=$1; shift
      "$@" &
      echo $! >"$f.pid.tmp" && mv "$f.pid.tmp" "$f.pid"
      wait $!
      echo $? >"$f.rc.tmp" && mv "$f.rc.tmp" "$f.rc"' \
    reflease-heartbeat "$hb" "${keep[@]}" </dev/null >"$hb.log" 2>&1 &
  for ((i = 0; i < 50; i++)); do
    [ -f "$hb.pid" ] && break
    sleep 0.1
  done
  sleep 0.5
  if [ ! -f "$hb.pid" ] || [ -f "$hb.rc" ]; then
    cat "$hb.log" >&2 2>/dev/null
    annotate error "reflease acquire $name" "the background heartbeat did not start"
    return 70
  fi
  echo "reflease: heartbeat of $name every ${every}s in the background (pid $(cat "$hb.pid"), log $hb.log); command: release stops it"
  summary "  - heartbeat every ${every}s in the background until \`release\`"
}

# ---- the command ----------------------------------------------------------------------

case $cmd in
acquire)
  [ -z "$phase" ] || opts+=(--phase "$phase")
  [ -z "$wait_s" ] || opts+=(--wait "$wait_s")
  [ -z "$slots" ] || opts+=(--slots "$slots")
  [ "$fair" = false ] || opts+=(--fair)
  argv+=(acquire "${opts[@]}" "${extra[@]}" -- "${names[@]}")
  ;;
heartbeat | release | status | break)
  if [ "$cmd" = release ]; then
    if [ -z "${INPUT_LEASE_TOKEN:-}" ] && [ -s "$hb.token" ]; then
      REFLEASE_LEASE_TOKEN=$(cat "$hb.token")
      export REFLEASE_LEASE_TOKEN
    fi
    stop_heartbeat
  fi
  [ "$cmd" = heartbeat ] || opts=()
  argv+=("$cmd" "${opts[@]}" "${extra[@]}" -- "${names[@]}")
  ;;
transition)
  [ -n "$phase" ] || usage_error "command transition needs the phase input"
  argv+=(transition --to "$phase" "${extra[@]}" -- "${names[@]}")
  ;;
run)
  [ ${#extra[@]} -gt 0 ] || usage_error "command run needs the command to run in the args input"
  # a reflease whose run keeps one lease would read the second name as the command
  if [ "$set_n" -gt 1 ] && ! "$bin" run --help 2>&1 | grep -q 'run NAME \[NAME'; then
    usage_error "this reflease's run keeps one lease (run NAME): a set of $set_n ($name) needs run NAME [NAME...]"
  fi
  [ -z "$wait_s" ] || opts+=(--wait "$wait_s")
  [ -z "$slots" ] || opts+=(--slots "$slots")
  [ "$fair" = false ] || opts+=(--fair)
  jf=${REFLEASE_ACTION_JSON:-$tmp/reflease-run.$$.json}
  rm -f "$jf"
  argv+=(run "${opts[@]}" --json-file "$jf" -- "${names[@]}" -- "${extra[@]}")
  ;;
list | reconcile | migrate | gc)
  argv+=("$cmd" "${extra[@]}")
  ;;
esac
# a set's result: its JSON object (members, blocked_by) for the JavaScript,
# which shows it in the log and sets the members output
outto=""
if [ "$set_n" -gt 1 ] && [ "$cmd" != run ] && [ -n "${REFLEASE_ACTION_JSON:-}" ]; then
  outto=$REFLEASE_ACTION_JSON
  argv=("${argv[@]:0:${#base[@]}}" --json "${argv[@]:${#base[@]}}")
fi

# The binary runs as a child that the step's signals reach: the runner signals
# the step's process alone (SIGINT on cancel, SIGTERM 7.5 s later, then the
# tree is killed 2.5 s after that), and a shell waiting for a foreground
# command passes nothing on. So the binary runs in the background, with SIGINT
# and SIGQUIT not ignored (a background job's default without job control),
# and each of SIGINT, SIGTERM, SIGHUP is forwarded to it; reflease then stops
# what it runs and releases (cli.md, Exit status: 129, 130, 143).
child=""
# shellcheck disable=SC2317 # called from the traps
forward() { [ -z "$child" ] || kill -"$1" "$child" 2>/dev/null || true; }
trap 'forward INT' INT
trap 'forward TERM' TERM
trap 'forward HUP' HUP
run_bin() { # ERRFILE|- CMD...: the exit status in rc; stdout to $outto when set
  local errto=$1
  shift
  if [ -n "${outto:-}" ]; then
    (trap - INT QUIT && exec "$@") <&0 >"$outto" 2>"$errto" &
  elif [ "$errto" = - ]; then
    (trap - INT QUIT && exec "$@") <&0 &
  else
    (trap - INT QUIT && exec "$@") <&0 2>"$errto" &
  fi
  child=$!
  wait "$child"
  rc=$?
  # a wait that a forwarded signal interrupted: the binary is still ending
  while kill -0 "$child" 2>/dev/null; do
    wait "$child"
    rc=$?
  done
  child=""
}

# A field of a JSON result by its path from the top (a.b; a set's object has its
# members' fields inside): a string or number, else empty.
jfield() { # FILE PATH
  "${REFLEASE_NODE:-node}" -e 'let v;
try { v = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); } catch { process.exit(0); }
for (const k of process.argv[2].split(".")) v = v == null ? v : v[k];
if (typeof v === "string" || typeof v === "number") process.stdout.write(String(v));' "$1" "$2"
}

outbefore=0
[ -z "${GITHUB_OUTPUT:-}" ] || outbefore=$(grep -c '^status=' "$GITHUB_OUTPUT" 2>/dev/null)
errf="$tmp/reflease-stderr.$$"
if [ "$cmd" = run ]; then
  # the guarded command's output stays live; the result comes from --json-file
  run_bin - "${argv[@]}"
  field() { jfield "$jf" "$1"; }
  st=$(field status)
  reason=$(field reason)
  # a wait that a signal ended writes the wait's object: error code interrupted, no reason
  [ -n "$reason" ] || [ "$(field error.code)" != interrupted ] || reason=interrupted
  cmd_code=$(field command.exit_code)
  cmd_sig=$(field command.signal)
  output status "${st:-error}"
  output oid "$(field oid)"
  output expires-at "$(field lease.expires_at)"
  [ -n "${REFLEASE_ACTION_JSON:-}" ] || rm -f "$jf"
else
  run_bin "$errf" "${argv[@]}"
  cat "$errf" >&2
fi

# ---- status, annotations, summary -----------------------------------------------------

case $cmd in
list | reconcile | migrate | gc)
  case $rc in 0) st=ok ;; 1) st=found ;; *) st=error ;; esac
  output status "$st"
  ;;
run) ;;
*)
  st=error
  if [ -n "${GITHUB_OUTPUT:-}" ]; then
    outafter=$(grep -c '^status=' "$GITHUB_OUTPUT" 2>/dev/null)
    if [ "${outafter:-0}" -gt "${outbefore:-0}" ]; then
      st=$(sed -n 's/^status=//p' "$GITHUB_OUTPUT" | tail -n 1)
    else
      output status error
    fi
  fi
  ;;
esac

if [ "$cmd" = release ] && [ "$st" = not_owner ]; then
  annotate warning "reflease release $name" \
    "nothing released: the lease token is not the current one (or none was given)"
fi
failed=$((rc != 0))
case $cmd in
reconcile | migrate) [ "$rc" -ne 1 ] || failed=0 ;; # the binary annotated what it found
esac
if [ "$failed" -eq 1 ] && [ "$cmd" = run ]; then
  # what happened, from run's --json-file: the command's own exit status is
  # never read as one of reflease's (a script exiting 3 is not "held")
  case $reason in
  exited)
    if [ -n "$cmd_sig" ]; then
      what="the command was killed by signal $cmd_sig"
    else
      what="the command exited with status ${cmd_code:-$rc} (its own status)"
    fi
    if [ "$st" = released ]; then
      what="$what; the lease was acquired and released"
    else
      what="$what; the lease was acquired, its release: ${st:-unknown}"
    fi
    ;;
  lost) what="the lease was lost while the command ran: the command was stopped (exit $rc); lease status ${st:-unknown}" ;;
  interrupted)
    if [ -n "$cmd_code$cmd_sig" ]; then
      what="interrupted by a signal (exit $rc): the command was stopped; lease status ${st:-unknown}"
    else
      what="interrupted by a signal (exit $rc) before the command started; lease status ${st:-unknown}"
    fi
    ;;
  not_acquired) what="not acquired: $(meaning "$rc") (exit $rc)" ;;
  *) what="$(meaning "$rc") (exit $rc)" ;;
  esac
  annotate error "reflease run $name" "reflease run $name: $what"
elif [ "$failed" -eq 1 ]; then
  why=""
  [ ! -f "$errf" ] || why=$(grep -v '^::' "$errf" | sed '/^[[:space:]]*$/d' | tail -n 1)
  blocker=""
  [ -z "$outto" ] || blocker=$(jfield "$outto" blocked_by)
  if [ -n "$blocker" ]; then
    # a set stopped by one member: name it, and say why (the set's message)
    why=$(jfield "$outto" message)
    [ -n "$why" ] || why=$(jfield "$outto" error.message)
    why="the set is stopped by $blocker${why:+: $why}"
  fi
  annotate error "reflease $cmd${name:+ $name}" \
    "reflease $cmd${name:+ $name}: $(meaning "$rc") (exit $rc)${why:+: $why}"
fi
rm -f "$errf"

case $cmd in
list | reconcile | migrate | gc) ;;
*)
  exp=""
  [ -z "${GITHUB_OUTPUT:-}" ] || exp=$(sed -n 's/^expires-at=//p' "$GITHUB_OUTPUT" | tail -n 1)
  summary "- **reflease $cmd** \`$name\`: $st${exp:+, expires $exp} (exit $rc)"
  ;;
esac

if [ "$cmd" = acquire ] && [ -n "$slots" ] && [ "$rc" -eq 0 ]; then
  # the slot held is the lease kept and released (protocol.md "Slots")
  held=$(sed -n 's/^lease-name=//p' "${GITHUB_OUTPUT:-/dev/null}" | tail -n 1)
  if [ -n "$held" ]; then
    name=$held
    names=("$held")
    hb_files
  fi
fi
if [ "$cmd" = acquire ] && [ "$heartbeat" = true ] && [ "$rc" -eq 0 ]; then
  if ! start_heartbeat; then
    # a lease this job cannot keep alive is given back at once
    REFLEASE_LEASE_TOKEN=$(sed -n 's/^lease-token=//p' "${GITHUB_OUTPUT:-/dev/null}" | tail -n 1) \
      "${base[@]}" release -- "${names[@]}" >&2 || true
    output status error
    rc=70
  fi
fi
exit "$rc"
