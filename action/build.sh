#!/usr/bin/env bash
# The action's build step, on a cache miss only: install what building
# reflease needs (Debian/Ubuntu packages through apt: scripts/install-deps.sh
# --build) and build the self-contained bundle that the cache keeps
# (make bundle: build/bundle/bin/reflease + build/bundle/lib/), with plain
# flags whatever the job's environment says (SANITIZE, COVERAGE select other
# builds).
set -euo pipefail
root=${GITHUB_ACTION_PATH:-$(cd "$(dirname "$0")/.." && pwd)}
if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "::error title=reflease::building reflease needs a Debian or Ubuntu runner (apt)"
  exit 1
fi
sh "$root/scripts/install-deps.sh" --build
make -C "$root" -j "$(nproc)" SANITIZE= COVERAGE= bundle
