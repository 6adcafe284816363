#!/bin/sh
# The Node client's npm tarball (clients/node, issue 42 item 1), made and
# checked as npm would publish it: `npm pack` of the package, then its
# contents — exactly the package's files (index.js, index.d.ts, README.md,
# package.json: no test files, no node_modules), an ES module entry (type
# module, exports "." with "types" and "default" files that are in the
# tarball), its version the Makefile's VERSION (a tag vX publishes X), and the
# tarball installed into a scratch project: `import('reflease')` gives the
# client's names, and with a tsc (TSC=path; @types/node from clients/node's
# npm ci) a consumer file type-checks against the packed declarations alone
# (NodeNext resolution through "exports"). make check runs it (tests/shell/t_node_pack.sh); the release
# workflow runs it before `npm publish` (.github/workflows/release.yml).
#   sh scripts/node-pack-check.sh OUTDIR   the tarball is left in OUTDIR
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
pkg="$here/clients/node"
out=${1:?usage: node-pack-check.sh OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
fail() { echo "node-pack-check: $*" >&2; exit 1; }

(cd "$pkg" && npm pack --json --pack-destination "$out" --loglevel=error) >"$out/pack.json" || fail "npm pack failed"
tgz=$(node -e 'const p = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"))[0];
  console.log(p.filename)' "$out/pack.json")
tgz="$out/$(basename "$tgz")"
[ -f "$tgz" ] || fail "npm pack made no $tgz"
files=$(tar -tzf "$tgz" | sort | tr '\n' ' ')
[ "$files" = "package/README.md package/index.d.ts package/index.js package/package.json " ] ||
  fail "the tarball holds $files(want README.md index.d.ts index.js package.json, no tests)"

rm -rf "$out/unpacked" "$out/consumer"
mkdir -p "$out/unpacked" "$out/consumer/node_modules"
tar -C "$out/unpacked" -xzf "$tgz"
version=$(sed -n 's/^VERSION *:*= *//p' "$here/Makefile" | head -n 1)
node - "$out/unpacked/package" "$version" <<'JS' || fail "package.json of the tarball"
const fs = require('fs');
const [dir, version] = process.argv.slice(2);
const p = JSON.parse(fs.readFileSync(`${dir}/package.json`, 'utf8'));
const need = (ok, what) => { if (!ok) { console.error(`node-pack-check: ${what}`); process.exit(1); } };
need(p.name === 'reflease', `name ${p.name}, want reflease`);
need(p.version === version, `version ${p.version}, but the Makefile's VERSION is ${version} (a tag v${version} publishes it)`);
need(p.type === 'module', `type ${p.type}, want module (an ES module entry)`);
const e = p.exports && p.exports['.'];
need(e && e.types && e.default, 'exports "." names no types and default');
for (const f of [e.types, e.default, p.main, p.types]) need(f && fs.existsSync(`${dir}/${f}`), `${f} is not in the tarball`);
need(/\.d\.ts$/.test(e.types) && /\.js$/.test(e.default), `exports "." types ${e.types}, default ${e.default}`);
need(!p.dependencies || Object.keys(p.dependencies).length === 0, 'the client has runtime dependencies');
JS
mv "$out/unpacked/package" "$out/consumer/node_modules/reflease"
cat >"$out/consumer/package.json" <<'EOF'
{ "name": "consumer", "private": true, "type": "module" }
EOF
# shellcheck disable=SC2016 # JavaScript, not shell
(cd "$out/consumer" && node --input-type=module -e '
import * as r from "reflease";
for (const n of ["Reflease", "acquireLease", "heartbeatLease", "transitionLease", "reacquireLease", "releaseLease", "CASFailed", "LeaseHeldError", "EXIT", "describeExit"])
  if (!(n in r)) { console.error(`node-pack-check: import("reflease") has no ${n}`); process.exit(1); }
') || fail "import of the packed module"
if [ -n "${TSC:-}" ]; then
  # a Node project's types (@types/node, which the declarations use) beside the package
  ln -s "$pkg/node_modules/@types" "$out/consumer/node_modules/@types"
  cat >"$out/consumer/consumer.ts" <<'EOF'
import { Reflease, LeaseHeldError, type LeaseResult } from 'reflease';
const c = new Reflease({ binary: 'reflease' });
export async function take(): Promise<string | null> {
  try {
    const a: LeaseResult = await c.acquire('db', { ttl: 60 });
    return a.token ?? null;
  } catch (e) {
    if (e instanceof LeaseHeldError) return null;
    throw e;
  }
}
EOF
  # skipLibCheck: the consumer's use of the types is checked here; the
  # declarations' own check (skipLibCheck false) is t_node_client.sh's
  cat >"$out/consumer/tsconfig.json" <<'EOF'
{ "compilerOptions": { "target": "ES2022", "module": "NodeNext", "moduleResolution": "NodeNext",
  "strict": true, "noEmit": true, "skipLibCheck": true, "types": ["node"] }, "files": ["consumer.ts"] }
EOF
  (cd "$out/consumer" && "$TSC" -p tsconfig.json) || fail "tsc on a consumer of the packed declarations"
fi
echo "node-pack-check: $(basename "$tgz"): ok"
