// The action's main stage (action.yml runs.main, bundled as dist/main.mjs):
// the reflease bundle from the cache or built, then one reflease command
// through action/run.sh, its outputs set, and after an acquire the lease
// saved in the step's state for the post stage (dist/post.mjs), which
// releases it when the job ends (input release-at-end).
//
// Set-up: action/setup.sh prints the cache key (no install); with the
// Actions cache service (@actions/cache) the bundle is restored under that
// key, or built by action/build.sh (apt + make bundle) and saved. Without a
// cache service (act, a server without one) a bundle already in the action's
// directory is used as is, else it is built.
import { mkdtempSync, existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import * as core from '@actions/core';
import { root, bash, runEnv, readKeyValues, leaseNames, readSet, setMembers, setExpiresAt, setLines } from './lib.mjs';

const OUTPUTS = ['lease-token', 'status', 'oid', 'expires-at', 'lease-name', 'members'];

async function setup() {
  const bundle = join(root, 'build', 'bundle');
  const k = await bash('setup.sh', { capture: true });
  if (k.code !== 0) return k.code;
  const key = k.out.trim().split('\n').pop();
  let hit = false;
  // @actions/cache (and the Azure storage client under it) is loaded only where
  // a cache service is announced: a job without one starts faster
  const cache =
    process.env.ACTIONS_CACHE_URL || process.env.ACTIONS_RESULTS_URL ? await import('@actions/cache') : null;
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
    const b = await bash('build.sh');
    if (b.code !== 0) return b.code;
    if (service) {
      try {
        await cache.saveCache([bundle], key);
      } catch (e) {
        core.warning(`reflease: cache save failed: ${e.message}`);
      }
    }
  }
  core.info(`reflease: set-up ${Math.round(performance.now())} ms (${hit ? 'cache hit' : 'cache miss: built'})`);
  return 0;
}

async function main() {
  if (process.platform !== 'linux') {
    core.error('the reflease action runs on Linux runners (Debian or Ubuntu)', { title: 'reflease' });
    return 1;
  }
  const s = await setup();
  if (s !== 0) return s;
  const tmp = mkdtempSync(join(process.env.RUNNER_TEMP || '/tmp', 'reflease-main-'));
  const outFile = join(tmp, 'output');
  try {
    const result = join(tmp, 'result.json');
    const r = await bash('run.sh', { env: runEnv({}, { GITHUB_OUTPUT: outFile, REFLEASE_ACTION_JSON: result }) });
    const out = readKeyValues(outFile);
    const cmd = core.getInput('command');
    // a set (several names): its result's members, in the log (but run's, whose
    // output is the command's) and as the members output
    const set = readSet(result);
    if (set) {
      if (cmd !== 'run') for (const l of setLines(set)) core.info(l);
      out.members = JSON.stringify(setMembers(set));
      if (!out['expires-at']) out['expires-at'] = setExpiresAt(set);
    }
    for (const k of OUTPUTS) if (k in out) core.setOutput(k, out[k]);
    const token = out['lease-token'];
    if (cmd === 'acquire' && token && ['acquired', 'already_held'].includes(out.status)) {
      if (core.getBooleanInput('release-at-end')) {
        core.saveState('lease-token', token);
        // a slot: its own name; a set: its names, one blank apart
        core.saveState('name', out['lease-name'] || leaseNames(core.getInput('name')).join(' '));
        core.saveState('namespace', core.getInput('namespace'));
        core.saveState('store', core.getInput('store'));
        core.info('reflease: the lease is released at the end of the job (release-at-end)');
      } else {
        core.info('reflease: release-at-end is false: the lease stays held after the job until released or expired');
      }
    }
    return r.code;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (e) => {
    core.error(`reflease: ${e.stack || e.message}`);
    process.exitCode = 70;
  },
);
