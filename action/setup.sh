#!/usr/bin/env bash
# The action's first step: install what building reflease needs (Debian/Ubuntu,
# apt through scripts/install-deps.sh --build; quick when already installed) and
# output `cache-key`, the key of the cached binary: the distribution, the
# architecture and a hash of every source file the binary is built from.
set -euo pipefail
root=${GITHUB_ACTION_PATH:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"

if [ "$(uname -s)" != Linux ] || ! command -v dpkg-query >/dev/null 2>&1; then
  echo "::error title=reflease::the reflease action runs on Linux runners with apt (Debian or Ubuntu)"
  exit 1
fi
sh scripts/install-deps.sh --build

os=unknown
if [ -r /etc/os-release ]; then
  # shellcheck disable=SC1091
  os=$(. /etc/os-release && printf '%s-%s' "${ID:-linux}" "${VERSION_ID:-0}")
fi
srcs=(Makefile)
for d in mk lib cmd migrations; do
  [ -d "$d" ] && srcs+=("$d")
done
hash=$(find "${srcs[@]}" -type f ! -name '*.o' ! -name '*.d' -print0 | LC_ALL=C sort -z |
  xargs -0 sha256sum | sha256sum | cut -c1-32)
key="reflease-$os-$(uname -m)-$hash"
echo "reflease: build cache key $key"
if [ -n "${GITHUB_OUTPUT:-}" ]; then
  echo "cache-key=$key" >>"$GITHUB_OUTPUT"
fi
