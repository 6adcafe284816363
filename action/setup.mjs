// The action's set-up: where the reflease binary comes from, first that works:
// 1. the action's own release (issue 42): for `uses: OWNER/REPO@REF` the
//    runner names the action's repository (GITHUB_ACTION_REPOSITORY); the
//    release of the version this copy of the action was built for (dist/VERSION,
//    from the Makefile's VERSION by scripts/build-dist.sh, so that a moving
//    tag such as v1 finds the release of the version it points at) has
//    reflease-VERSION-linux-ARCH.tar.gz and SHA256SUMS (make release); the
//    tarball is verified against SHA256SUMS (a mismatch is an error naming
//    the file, and the file is never used), unpacked once per runner under
//    RUNNER_TOOL_CACHE (or RUNNER_TEMP), and its bin/reflease used;
// 2. without such a release (404: a branch or a commit; a local action, uses:
//    ./, inside GITHUB_WORKSPACE, is never downloaded: it runs its own code), the
//    bundle from the Actions cache (keyed on the runner's release, the
//    architecture and a hash of the source), or built by action/build.sh
//    (apt + make bundle) and saved. Without a cache service (act, a server
//    without one) a bundle already in the action's directory is used as is.
// Resolves to the binary's path, or to an exit status after an annotation.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { arch } from 'node:os';
import { join, resolve } from 'node:path';
import * as core from '@actions/core';
import { root } from './lib.mjs';

const t0 = performance.now();

/** Run a program (argv, no shell) with the step's stdout and stderr; resolves to its exit status. */
function exec(file, args) {
  return new Promise((done) => {
    const child = spawn(file, args, { stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('error', (e) => {
      core.error(`reflease: cannot run ${file}: ${e.message}`);
      done(127);
    });
    child.on('close', (code) => done(code ?? 1));
  });
}

/** The runner's architecture as the release names it: x86_64 or aarch64 (null: no release build). */
function releaseArch() {
  return { x64: 'x86_64', arm64: 'aarch64' }[arch()] || null;
}

class NoRelease extends Error {}

async function download(url, what) {
  let res;
  try {
    res = await fetch(url, { redirect: 'follow' });
  } catch (e) {
    throw new Error(`cannot download ${what} from ${url}: ${e.cause?.message || e.message}`);
  }
  if (res.status === 404) throw new NoRelease(`${url}: 404`);
  if (!res.ok) throw new Error(`cannot download ${what} from ${url}: HTTP ${res.status}`);
  return Buffer.from(await res.arrayBuffer());
}

/**
 * The binary of the action's release, verified and unpacked; null when the
 * action has no release to download (no GITHUB_ACTION_REPOSITORY, no
 * dist/VERSION, an architecture without a build, 404). Throws on a checksum
 * mismatch or another download failure.
 */
async function prebuilt() {
  const repo = process.env.GITHUB_ACTION_REPOSITORY;
  const a = releaseArch();
  let version = '';
  try {
    version = readFileSync(join(root, 'dist', 'VERSION'), 'utf8').trim();
  } catch {
    return null;
  }
  if (!repo || !a || !/^[0-9A-Za-z.+-]+$/.test(version)) return null;
  // a local action (uses: ./, the workspace's own checkout) runs the code it is: no release
  const ws = process.env.GITHUB_WORKSPACE ? resolve(process.env.GITHUB_WORKSPACE) : '';
  if (ws && (root === ws || root.startsWith(`${ws}/`))) return null;
  const top = `reflease-${version}-linux-${a}`;
  const file = `${top}.tar.gz`;
  const cacheDir = join(process.env.RUNNER_TOOL_CACHE || process.env.RUNNER_TEMP || '/tmp', 'reflease', version, a);
  const bin = join(cacheDir, top, 'bin', 'reflease');
  if (existsSync(join(cacheDir, '.verified')) && existsSync(bin)) {
    core.info(`reflease: release ${version} (${a}) already unpacked at ${cacheDir}`);
    return bin;
  }
  const base = `${process.env.GITHUB_SERVER_URL || 'https://github.com'}/${repo}/releases/download/v${version}`;
  let sums;
  let tarball;
  // both at once (one round trip less); no release (404 on either) is the fallback
  const [a1, a2] = await Promise.allSettled([download(`${base}/SHA256SUMS`, 'SHA256SUMS'), download(`${base}/${file}`, file)]);
  const missing = [a1, a2].find((x) => x.status === 'rejected' && x.reason instanceof NoRelease);
  if (missing) {
    core.info(`reflease: no release v${version} of ${repo} to download (${missing.reason.message}): the cache or a build`);
    return null;
  }
  for (const x of [a1, a2]) if (x.status === 'rejected') throw x.reason;
  sums = a1.value.toString('utf8');
  tarball = a2.value;
  const line = sums.split('\n').map((l) => l.trim().split(/\s+\*?/)).find((f) => f[1] === file);
  if (!line) throw new Error(`${file}: not listed in the release's SHA256SUMS: not used`);
  const got = createHash('sha256').update(tarball).digest('hex');
  if (got !== line[0].toLowerCase()) {
    throw new Error(`${file}: checksum mismatch (sha256 ${got}, SHA256SUMS says ${line[0]}): not used`);
  }
  const tmp = `${cacheDir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  writeFileSync(join(tmp, file), tarball);
  const st = await exec('tar', ['-xzf', join(tmp, file), '-C', tmp, '--no-same-owner']);
  rmSync(join(tmp, file), { force: true });
  if (st !== 0 || !existsSync(join(tmp, top, 'bin', 'reflease'))) {
    rmSync(tmp, { recursive: true, force: true });
    throw new Error(`${file}: not a release tarball with ${top}/bin/reflease (tar exit ${st})`);
  }
  writeFileSync(join(tmp, '.verified'), `${got}  ${file}\n`);
  rmSync(cacheDir, { recursive: true, force: true });
  mkdirSync(join(cacheDir, '..'), { recursive: true });
  renameSync(tmp, cacheDir);
  core.info(`reflease: release ${version} (${a}) downloaded, sha256 verified against SHA256SUMS`);
  return bin;
}

/** Every file under the paths, sorted bytewise (C locale), skipping build outputs (*.o, *.d). */
function files(paths) {
  const out = [];
  const walk = (p) => {
    const s = statSync(p);
    if (s.isDirectory()) for (const e of readdirSync(p)) walk(join(p, e));
    else if (s.isFile() && !/\.[od]$/.test(p)) out.push(p);
  };
  for (const p of paths) if (existsSync(join(root, p))) walk(join(root, p));
  return out.sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
}

/** The cache key of the bundle: the distribution and its release, the architecture, a hash of the sources. */
function cacheKey() {
  let os = 'unknown';
  try {
    const rel = readFileSync('/etc/os-release', 'utf8');
    const v = (k) => (new RegExp(`^${k}=("?)(.*)\\1$`, 'm').exec(rel) || [])[2];
    os = `${v('ID') || 'linux'}-${v('VERSION_ID') || '0'}`;
  } catch {
    // no os-release
  }
  const h = createHash('sha256');
  for (const f of files(['Makefile', 'scripts/bundle.sh', 'scripts/install-deps.sh', 'mk', 'lib', 'cmd', 'migrations'])) {
    h.update(`${createHash('sha256').update(readFileSync(f)).digest('hex')}  ${f.slice(root.length + 1)}\n`);
  }
  const a = { x64: 'x86_64', arm64: 'aarch64' }[arch()] || arch();
  return `reflease-${os}-${a}-${h.digest('hex').slice(0, 32)}`;
}

/** The cache (or a build) of build/bundle: the binary's path, or an exit status. */
async function cachedOrBuilt() {
  const bundle = join(root, 'build', 'bundle');
  const key = cacheKey();
  process.stderr.write(`reflease: build cache key ${key}\n`);
  let hit = false;
  // @actions/cache (and the Azure storage client under it) is loaded only where
  // a cache service is announced: a job without one starts faster
  const cache = process.env.ACTIONS_CACHE_URL || process.env.ACTIONS_RESULTS_URL ? await import('@actions/cache') : null;
  const service = cache !== null && cache.isFeatureAvailable();
  if (service) {
    try {
      hit = (await cache.restoreCache([bundle], key)) === key;
    } catch (e) {
      core.warning(`reflease: cache restore failed, building: ${e.message}`);
    }
  } else {
    hit = existsSync(join(bundle, 'bin', 'reflease'));
    core.info(`reflease: no cache service; ${hit ? 'the bundle is already built' : 'building'}`);
  }
  if (!hit) {
    const b = await exec('bash', ['--noprofile', '--norc', join(root, 'action', 'build.sh')]);
    if (b !== 0) {
      core.error(`building reflease failed (action/build.sh exit ${b}; its output is above)`, { title: 'reflease set-up' });
      return b;
    }
    if (service) {
      try {
        await cache.saveCache([bundle], key);
      } catch (e) {
        core.warning(`reflease: cache save failed: ${e.message}`);
      }
    }
  }
  core.info(`reflease: set-up ${Math.round(performance.now() - t0)} ms (${hit ? 'cache hit' : 'cache miss: built'})`);
  return join(bundle, 'bin', 'reflease');
}

export async function setup() {
  let bin;
  try {
    bin = await prebuilt();
  } catch (e) {
    core.error(e.message, { title: 'reflease set-up' });
    return 1;
  }
  if (bin) {
    core.info(`reflease: set-up ${Math.round(performance.now() - t0)} ms (release)`);
    return bin;
  }
  const b = await cachedOrBuilt();
  if (typeof b === 'number') return b;
  if (!existsSync(b)) {
    core.error(`reflease is not built at ${b}`, { title: 'reflease' });
    return 64;
  }
  return b;
}
