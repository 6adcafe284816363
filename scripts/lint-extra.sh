#!/bin/sh
# Extra lint: shellcheck on the project's shell scripts.
set -eu
files=$(find scripts tests .ci -name '*.sh' -o -name run -path '.ci/*' | sort)
# shellcheck disable=SC2086
shellcheck -s sh $files
