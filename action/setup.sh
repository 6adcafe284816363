#!/usr/bin/env bash
# The action's set-up (dist/main.mjs runs it first): prints on stdout the key of the cached bundle
# (build/bundle: reflease and its shared libraries, make bundle): the
# distribution and its release, the architecture and a hash of every file the
# bundle is built from. Nothing is installed here: on a cache hit the job
# needs neither apt nor a compiler; action/build.sh installs and builds on a
# miss.
set -euo pipefail
root=${GITHUB_ACTION_PATH:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"

if [ "$(uname -s)" != Linux ]; then
  echo "::error title=reflease::the reflease action runs on Linux runners (Debian or Ubuntu)"
  exit 1
fi

os=unknown
if [ -r /etc/os-release ]; then
  # shellcheck disable=SC1091
  os=$(. /etc/os-release && printf '%s-%s' "${ID:-linux}" "${VERSION_ID:-0}")
fi
srcs=(Makefile scripts/bundle.sh scripts/install-deps.sh)
for d in mk lib cmd migrations; do
  [ -d "$d" ] && srcs+=("$d")
done
hash=$(find "${srcs[@]}" -type f ! -name '*.o' ! -name '*.d' -print0 | LC_ALL=C sort -z |
  xargs -0 sha256sum | sha256sum | cut -c1-32)
key="reflease-$os-$(uname -m)-$hash"
echo "reflease: build cache key $key" >&2
printf '%s\n' "$key"
