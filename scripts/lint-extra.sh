#!/bin/sh
# Extra lint: shellcheck on the project's shell scripts (POSIX sh unless the
# script's shebang names bash).
set -eu
for f in $(find scripts tests action .ci -type f \( -name '*.sh' -o -path '.ci/run' \) 2>/dev/null | sort); do
  case "$(head -n 1 "$f")" in *bash*) shellcheck "$f" ;; *) shellcheck -s sh "$f" ;; esac
done
