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
import { createWriteStream, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { pipeline } from 'node:stream/promises';
import { arch } from 'node:os';
import { join, resolve } from 'node:path';
import * as core from '@actions/core';
import { root } from './lib.mjs';

const t0 = performance.now();
/** Where a release set-up's time went (ms), for its log line (docs/benchmarks.md). */
const phases = [];
const phase = (what, since) => phases.push(`${what} ${Math.round(performance.now() - since)} ms`);

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

/**
 * GET URL (node:http or node:https, following up to 5 redirects: GitHub
 * answers a release asset with a 302 to its storage host): resolves to the
 * 200 response, a readable stream; a 404 is NoRelease; any other status, a
 * network error or 60 s without data is an error naming WHAT and the URL.
 * Not fetch(): loading undici and reading through web streams took twice as
 * long for the 8 MB tarball (docs/benchmarks.md, "GitHub Action: the main stage from a release").
 */
function get(url, what, hops = 0) {
  return new Promise((resolve, reject) => {
    const fail = (m) => reject(new Error(`cannot download ${what} from ${url}: ${m}`));
    const req = (url.startsWith('https:') ? https : http).get(url, { headers: { 'user-agent': 'reflease-action' } }, (res) => {
      const st = res.statusCode;
      if (st >= 300 && st < 400 && res.headers.location) {
        res.resume();
        if (hops >= 5) fail('more than 5 redirects');
        else get(new URL(res.headers.location, url).href, what, hops + 1).then(resolve, reject);
      } else if (st !== 200) {
        res.resume();
        if (st === 404) reject(new NoRelease(`${url}: 404`));
        else fail(`HTTP ${st}`);
      } else resolve(res);
    });
    req.on('error', (e) => fail(e.message));
    req.setTimeout(60000, () => req.destroy(new Error('no data for 60 s')));
  });
}

/** URL's body as a string (SHA256SUMS). */
async function download(url, what) {
  const chunks = [];
  for await (const c of await get(url, what)) chunks.push(c);
  return Buffer.concat(chunks).toString('utf8');
}

/** URL's body into FILE as it comes, hashed on the way: resolves to its sha256 (hex). */
async function downloadTo(url, what, file) {
  const h = createHash('sha256');
  const res = await get(url, what);
  await pipeline(res, async function* hash(src) {
    for await (const c of src) {
      h.update(c);
      yield c;
    }
  }, createWriteStream(file));
  return h.digest('hex');
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
  const tmp = `${cacheDir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  try {
    let got;
    try {
      got = await fetchVerified(base, file, tmp);
    } catch (e) {
      if (!(e instanceof NoRelease)) throw e;
      core.info(`reflease: no release v${version} of ${repo} to download (${e.message}): the cache or a build`);
      return null;
    }
    const t = performance.now();
    const st = await exec('tar', ['-xzf', join(tmp, file), '-C', tmp, '--no-same-owner']);
    rmSync(join(tmp, file), { force: true });
    if (st !== 0 || !existsSync(join(tmp, top, 'bin', 'reflease'))) {
      throw new Error(`${file}: not a release tarball with ${top}/bin/reflease (tar exit ${st})`);
    }
    phase('unpack', t);
    writeFileSync(join(tmp, '.verified'), `${got}  ${file}\n`);
    rmSync(cacheDir, { recursive: true, force: true });
    mkdirSync(join(cacheDir, '..'), { recursive: true });
    renameSync(tmp, cacheDir);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  core.info(`reflease: release ${version} (${a}) downloaded, sha256 verified against SHA256SUMS`);
  return bin;
}

/**
 * The release's FILE downloaded into DIR beside its SHA256SUMS (both at once:
 * one round trip less), hashed as it comes: resolves to its sha256. Throws
 * NoRelease on a 404 of either (no release: the fallback), an error on
 * another failure and on a FILE that SHA256SUMS does not list or lists with
 * another sum (the caller removes DIR: a file that fails the check is never
 * unpacked or used).
 */
async function fetchVerified(base, file, dir) {
  const t = performance.now();
  const [a1, a2] = await Promise.allSettled([download(`${base}/SHA256SUMS`, 'SHA256SUMS'), downloadTo(`${base}/${file}`, file, join(dir, file))]);
  phase('download and sha256', t);
  const missing = [a1, a2].find((x) => x.status === 'rejected' && x.reason instanceof NoRelease);
  if (missing) throw missing.reason;
  for (const x of [a1, a2]) if (x.status === 'rejected') throw x.reason;
  const line = a1.value.split('\n').map((l) => l.trim().split(/\s+\*?/)).find((f) => f[1] === file);
  if (!line) throw new Error(`${file}: not listed in the release's SHA256SUMS: not used`);
  const got = a2.value;
  if (got !== line[0].toLowerCase()) {
    throw new Error(`${file}: checksum mismatch (sha256 ${got}, SHA256SUMS says ${line[0]}): not used`);
  }
  return got;
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
  // @actions/cache (and the Azure storage client under it: dist/cache.mjs, a
  // file of its own) is loaded only where a cache service is announced: a job
  // without one starts faster
  const cache = process.env.ACTIONS_CACHE_URL || process.env.ACTIONS_RESULTS_URL ? await import('./cache.mjs') : null;
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
    // t0: node's start to this module (node itself, loading dist/main.mjs)
    core.info(`reflease: set-up ${Math.round(performance.now() - t0)} ms (release${phases.length ? `: ${phases.join(', ')}` : ''}; node's start and loading ${Math.round(t0)} ms before)`);
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
