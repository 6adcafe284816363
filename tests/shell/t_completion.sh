#!/bin/sh
# Issue 41: `reflease completion bash|zsh|fish`, made from the CLI's own
# command and option tables, completes what the CLI accepts.
# - bash: the script sourced, the completion function is registered
#   (complete -p) and, called as bash calls it (COMP_WORDS, COMP_CWORD),
#   completes `reflease acq` to acquire; every command `reflease --help`
#   lists completes from its first three letters, and every option the usage
#   line of `reflease help CMD` names completes after CMD (so the script and
#   --help cannot drift); an option's fixed values (--phase) complete; an
#   option's free value and run's CMD after -- are left to the shell (files);
# - zsh: zsh -n accepts the script and, sourced after compinit, it registers
#   _reflease for reflease; fish: fish -n accepts it and fish's own
#   `complete -C` completes a command, an option and a value;
# - an unknown shell is a usage error (exit 64), nothing on stdout.
set -eu
cd "$TMPDIR" || exit 1
fail() { echo "FAIL: $*" >&2; exit 1; }
for s in bash zsh fish; do command -v "$s" >/dev/null 2>&1 || fail "$s is needed (scripts/install-deps.sh)"; done

"$REFLEASE" completion bash >c.bash
"$REFLEASE" --help | sed -n 's/^  \([a-z][a-z]*\)  .*/\1/p' >commands.txt
[ "$(wc -l <commands.txt)" -ge 15 ] || fail "too few commands in --help"
grep -qx completion commands.txt || fail "--help does not list completion"
# cases: "WORDS... => EXPECTED" (EXPECTED: a word COMPREPLY must hold, or - for empty)
{
  echo "reflease acq => acquire"
  while read -r c; do
    echo "reflease $(printf '%.3s' "$c") => $c"
    "$REFLEASE" help "$c" | head -n 1 | grep -oE -- '--[a-z][a-z-]*' | sort -u | while read -r o; do
      echo "reflease $c x $(printf '%.5s' "$o") => $o"
    done
    echo "reflease --store local:s $c --js => --json"
  done <commands.txt
  echo "reflease acquire x --phase w => working"
  echo "reflease transition x --to rev => review"
  echo "reflease reconcile --fail-on wa => warning"
  echo "reflease help rel => release"
  echo "reflease completion fi => fish"
  echo "reflease acquire x --ttl 3 => -"
  echo "reflease run x -- ls --j => -"
} >cases.txt
[ "$(wc -l <cases.txt)" -ge 60 ] || fail "too few cases: $(wc -l <cases.txt)"
# shellcheck disable=SC2016 # the bash script expands its own variables
bash -c '
  set -u
  . ./c.bash
  complete -p reflease | grep -q -- "-F _reflease reflease" || { echo "not registered: $(complete -p reflease)"; exit 1; }
  n=0
  while IFS= read -r line; do
    read -r -a COMP_WORDS <<<"${line% => *}"
    want=${line##* => }
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMP_LINE=${line% => *}
    COMP_POINT=${#COMP_LINE}
    COMPREPLY=()
    _reflease reflease "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
    if [ "$want" = - ]; then
      [ ${#COMPREPLY[@]} -eq 0 ] || { echo "FAIL: ${line% => *}: wanted nothing, got ${COMPREPLY[*]}"; exit 1; }
    else
      case " ${COMPREPLY[*]} " in *" $want "*) ;; *) echo "FAIL: ${line% => *}: wanted $want, got ${COMPREPLY[*]:-nothing}"; exit 1 ;; esac
    fi
    n=$((n + 1))
  done <cases.txt
  # exactly one candidate for "acq": the word completes in place
  COMP_WORDS=(reflease acq) COMP_CWORD=1 COMPREPLY=()
  _reflease reflease acq reflease
  [ "${COMPREPLY[*]}" = acquire ] || { echo "FAIL: acq gave ${COMPREPLY[*]}"; exit 1; }
  echo "bash: $n cases"' >bash.out 2>&1 || { cat bash.out; fail "bash completion"; }
cat bash.out

"$REFLEASE" completion zsh >_reflease
zsh -n _reflease || fail "zsh -n rejects the zsh script"
head -n 1 _reflease | grep -qx '#compdef reflease' || fail "the zsh script does not start with #compdef"
got=$(zsh -f -c 'autoload -U compinit; compinit -u -D; . ./_reflease; print -r -- ${_comps[reflease]}' 2>&1) ||
  fail "zsh: sourcing the script failed: $got"
[ "$got" = _reflease ] || fail "zsh: reflease completes with '$got', not _reflease"

"$REFLEASE" completion fish >reflease.fish
fish -n reflease.fish || fail "fish -n rejects the fish script"
fish --no-config -c 'source reflease.fish; complete -C "reflease acq"; complete -C "reflease acquire x --ph"; complete -C "reflease acquire x --phase "' >fish.out 2>&1 ||
  { cat fish.out; fail "fish: complete -C"; }
grep -q '^acquire' fish.out || fail "fish: acq did not complete to acquire: $(cat fish.out)"
grep -qx -- '--phase' fish.out || fail "fish: --ph did not complete to --phase: $(cat fish.out)"
grep -qx working fish.out || fail "fish: --phase values: $(cat fish.out)"

set +e
"$REFLEASE" completion tcsh >out 2>err
rc=$?
set -e
[ "$rc" -eq 64 ] || fail "completion tcsh exited $rc, not 64"
[ ! -s out ] || fail "completion tcsh printed on stdout"
grep -q "unknown shell 'tcsh': bash, zsh or fish" err || fail "completion tcsh: $(cat err)"
echo "t_completion: ok"
