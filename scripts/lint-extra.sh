#!/bin/sh
# Extra lint: shellcheck on the project's shell scripts (POSIX sh unless the
# script's shebang names bash).
set -eu
for f in $(find scripts tests action .ci -type f \( -name '*.sh' -o -path '.ci/run' \) 2>/dev/null | sort); do
  case "$(head -n 1 "$f")" in *bash*) shellcheck "$f" ;; *) shellcheck -s sh "$f" ;; esac
done
# One door (issue 17): in lib/lease only primitives.c calls the transport vtable.
if grep -n -- '->t->' lib/lease/*.c lib/lease/*.h | grep -v '^lib/lease/primitives\.c:'; then
  echo "lint: lib/lease reaches the transport outside primitives.c (use lease/door.h)"; exit 1
fi
# Migrations (issue 17): includes run one way. Nothing in lib/ or cmd/ includes
# from migrations/; a step includes lease/migration.h and public reflease/ headers only.
if grep -n '#include ".*migrations/' lib/*/*.c lib/*/*.h lib/include/reflease/*.h cmd/reflease/*.[ch]; then
  echo "lint: lib/ or cmd/ includes from migrations/ (the step interface is lib/lease/migration.h)"; exit 1
fi
if grep -n '#include "' migrations/*.c | grep -v -e '"lease/migration\.h"' -e '"reflease/' \
     -e '^migrations/registry\.c:.*"registry\.inc"'; then
  echo "lint: a migration includes more than lease/migration.h and reflease/ headers"; exit 1
fi
# Layers (issue 17): cmd/ is built with -Ilib/include only; no path around it.
if grep -n '#include "\.\./' cmd/reflease/*.[ch]; then
  echo "lint: cmd/ includes by relative path (it sees the public reflease/ headers only)"; exit 1
fi
# One environment (issue 26): the library reads no environment variable; its
# configuration, clocks and log come in lease_store_options (the CLI maps its
# ENVIRONMENT onto them in cmd/reflease/cli_env.c).
if grep -nE '\b(secure_)?getenv\(' lib/*/*.c lib/*/*.h migrations/*.c; then
  echo "lint: the library reads the environment (take it from lease_store_options)"; exit 1
fi
