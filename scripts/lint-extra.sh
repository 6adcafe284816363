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
# Functions that read in one sitting (issue 38 item 4): no function body in
# lib/ or cmd/ is over 120 lines (from the opening brace at column 0 to the
# closing one, as clang-format lays a function out). The ones still over it
# are listed with the length they may not exceed: the list only shrinks.
long_ok=''
# shellcheck disable=SC2046
v=$(awk -v MAX=120 -v OK="$long_ok" '
  BEGIN { n = split(OK, a, /[ \n]+/); for (i = 1; i <= n; i++) { split(a[i], p, ":"); ok[p[1] ":" p[2]] = p[3] } }
  FNR == 1 { inside = 0; prev = "" }
  /^\{/ && !inside { inside = 1; start = FNR; name = prev; sub(/\(.*/, "", name)
                     k = split(name, w, /[ *]+/); name = w[k]; next }
  /^\}/ && inside { inside = 0; len = FNR - start - 1
                    if (len > MAX && !(FILENAME ":" name in ok && len <= ok[FILENAME ":" name]))
                      printf "%s:%d: %s is %d lines\n", FILENAME, start, name, len
                    next }
  !inside && /^[A-Za-z_]/ { prev = $0 }' $(ls lib/*/*.c cmd/reflease/*.c))
if [ -n "$v" ]; then
  printf '%s\n' "$v"
  echo "lint: a function over 120 lines in lib/ or cmd/ (split it by concern, issue 38)"; exit 1
fi
