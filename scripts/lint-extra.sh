#!/bin/sh
# Extra lint: shellcheck on the project's shell scripts (POSIX sh unless the
# script's shebang names bash).
set -eu
for f in $(find scripts tests action .ci -type f \( -name '*.sh' -o -path '.ci/run' \) 2>/dev/null | sort); do
  case "$(head -n 1 "$f")" in *bash*) shellcheck "$f" ;; *) shellcheck -s sh "$f" ;; esac
done
# The walls between the layers (issue 26 item 1): who may include which
# header. The one door (issue 17: in lib/lease only primitives.c calls the
# transport) follows from it: only primitives.c sees the handle's layout
# (store/handle.h), so only it can reach st->t.
sh scripts/lint-includes.sh
# One environment (issue 26): the library reads no environment variable; its
# configuration, clocks and log come in lease_store_options (the CLI maps its
# ENVIRONMENT onto them in cmd/reflease/cli_env.c).
if grep -nE '\b(secure_)?getenv\(' lib/*/*.c lib/*/*.h migrations/*.c; then
  echo "lint: the library reads the environment (take it from lease_store_options)"; exit 1
fi
# One error setter (issue 26 step 2): in lib/ and migrations/ an error message
# is written by lease__error_set() (lib/util/common.c) alone — no other function
# formats into an error buffer, and the old setters stay gone.
if grep -nE '\b(v?snprintf|strn?cpy|memcpy)\((err|errbuf|errmsg|[a-z]+->(err|errbuf|errmsg)|L\(t\)->errbuf)\b' \
     lib/*/*.c lib/*/*.h migrations/*.c | grep -v '^lib/util/common\.c:.*vsnprintf(err, errlen, fmt, ap)'; then
  echo "lint: an error buffer written around lease__error_set() (lib/util/util.h), the one error setter"; exit 1
fi
if grep -nE '\b(seterr|set_err|lease_errf|lease_err_collapse)\b' lib/*/*.c lib/*/*.h lib/include/reflease/*.h \
     cmd/reflease/*.[ch] migrations/*.c; then
  echo "lint: a second error setter (lease__error_set() is the one, issue 26 step 2)"; exit 1
fi
