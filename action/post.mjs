// The action's post stage (action.yml runs.post, post-if: always(); bundled as
// dist/post.mjs): the runner runs it when the job ends — success, failure or
// cancellation — for each step of this action whose main stage saved a lease
// (command acquire, release-at-end true). It releases that lease by its token
// through action/run.sh (command release): the background heartbeat is
// stopped first, then reflease releases only if the token is still the
// lease's (protocol: release by token), so another job's lease is never
// touched. A lease this job already released (already_released, not_owner)
// is a quiet no-op: nothing in the log (but a debug line), the summary or the
// annotations. A set (several names, cli.md "Sets") is released as the set:
// one release of all its names by the set's one token, one atomic write.
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import * as core from '@actions/core';
import { bash, runEnv, readKeyValues, readSet, setLines } from './lib.mjs';

async function post() {
  const token = core.getState('lease-token');
  if (!token) return 0;
  const name = core.getState('name');
  const tmp = mkdtempSync(join(process.env.RUNNER_TEMP || '/tmp', 'reflease-post-'));
  try {
    const env = runEnv(
      { command: 'release', name, 'lease-token': token, namespace: core.getState('namespace'),
        store: core.getState('store'), ttl: '', phase: '', wait: '', args: '', heartbeat: 'false',
        slots: '' },
      { GITHUB_OUTPUT: join(tmp, 'output'), GITHUB_STEP_SUMMARY: join(tmp, 'summary'),
        REFLEASE_ACTION_JSON: join(tmp, 'result.json') },
    );
    const r = await bash('run.sh', { env, capture: true, captureErr: true });
    const st = readKeyValues(join(tmp, 'output')).status || 'error';
    const heartbeat = /background heartbeat of /.test(r.out);
    if (!heartbeat && ['already_released', 'not_owner'].includes(st)) {
      core.debug(`reflease: ${name}: nothing to release at the end of the job (${st})\n${r.out}`);
      return 0;
    }
    process.stdout.write(r.out);
    const set = readSet(join(tmp, 'result.json')); // a set (several names): its members
    if (set) for (const l of setLines(set)) core.info(l);
    let line;
    if (st === 'released') {
      line = `- **reflease** \`${name}\`: released at the end of the job (release-at-end)`;
      core.info(`reflease: ${name} released at the end of the job`);
    } else {
      line = `- **reflease** \`${name}\`: not released at the end of the job: ${st} (exit ${r.code})`;
      if (!['already_released', 'not_owner'].includes(st))
        core.warning(`the lease ${name} was not released at the end of the job: ${st} (exit ${r.code}); ` +
          'it stays held until its TTL runs out', { title: `reflease release ${name}` });
    }
    if (process.env.GITHUB_STEP_SUMMARY) await core.summary.addRaw(`${line}\n`).write();
    return 0;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

post().then(
  (code) => {
    process.exitCode = code;
  },
  (e) => {
    core.warning(`reflease post: ${e.stack || e.message}`);
  },
);
