// The action's post stage (action.yml runs.post, post-if: always(); bundled as
// dist/post.mjs): the runner runs it when the job ends — success, failure or
// cancellation — for each step of this action whose main stage saved a lease
// (command acquire, release-at-end true). It releases that lease by its token
// through the Node client: the background keeper is stopped first (its pid
// is in the state and in its files under RUNNER_TEMP), then reflease releases
// only if the token is still the lease's (protocol: release by token), so
// another job's lease is never touched. A lease this job already released
// (already_released, not_owner) is a quiet no-op: nothing in the log (but a
// debug line), the summary or the annotations. A set (several names,
// cli.md "Sets") is released as the set: one write of all its names.
import * as core from '@actions/core';
import { readInputs, clientFor, call, describeExit, leaseNames, isSet, setLines, resultLine, stopKeeper } from './lib.mjs';
import { root } from './lib.mjs';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

async function post() {
  const token = core.getState('lease-token');
  if (!token) return 0;
  const name = core.getState('name');
  const names = leaseNames(name);
  const ns = core.getState('namespace');
  const i = readInputs({ store: core.getState('store'), repository: core.getState('repository'), namespace: ns });
  const lines = [];
  const warnings = [];
  const k = await stopKeeper(names, ns, core.getState('keeper-pid'));
  if (k) {
    lines.push(...k.lines);
    if (!['143', '130', '129'].includes(k.rc)) warnings.push([`reflease heartbeat ${name}`, `the background heartbeat had already stopped: ${describeExit(Number(k.rc))} (exit ${k.rc})`]);
  }
  let bin = core.getState('binary');
  if (!bin || !existsSync(bin)) bin = join(root, 'build', 'bundle', 'bin', 'reflease');
  const client = clientFor(i, bin, null);
  const r = await call(client, ['release', '--', ...names], { token });
  const st = r.result?.status || 'error';
  if (r.stderr.trim()) lines.push(...r.stderr.trimEnd().split('\n'));
  if (!k && ['already_released', 'not_owner'].includes(st)) {
    core.debug(`reflease: ${name}: nothing to release at the end of the job (${st})\n${lines.join('\n')}`);
    return 0;
  }
  for (const l of lines) core.info(l);
  for (const [t, m] of warnings) core.warning(m, { title: t });
  if (isSet(r.result)) for (const l of setLines(r.result)) core.info(l);
  else if (r.result?.name) core.info(resultLine(r.result));
  let line;
  if (st === 'released') {
    line = `- **reflease** \`${name}\`: released at the end of the job (release-at-end)`;
    core.info(`reflease: ${name} released at the end of the job`);
  } else {
    line = `- **reflease** \`${name}\`: not released at the end of the job: ${st} (exit ${r.code})`;
    if (!['already_released', 'not_owner'].includes(st)) {
      core.warning(`the lease ${name} was not released at the end of the job: ${st} (exit ${r.code}); it stays held until its TTL runs out`,
        { title: `reflease release ${name}` });
    }
  }
  if (process.env.GITHUB_STEP_SUMMARY) await core.summary.addRaw(`${line}\n`).write();
  return 0;
}

post().then(
  (code) => {
    process.exitCode = code;
  },
  (e) => {
    core.warning(`reflease post: ${e.stack || e.message}`);
  },
);
