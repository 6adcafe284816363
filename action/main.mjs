// The action's main stage (action.yml runs.main, bundled as dist/main.mjs):
// reflease from the action's release (or the cache, or built), then one
// reflease command through the Node client (clients/node), its outputs,
// annotations and job summary written here (the one writer), and after an
// acquire the lease saved in the step's state for the post stage
// (dist/post.mjs), which releases it when the job ends (input
// release-at-end). With heartbeat true a detached keeper (dist/keeper.mjs)
// keeps the lease alive until a release step or the post stage stops it.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import * as core from '@actions/core';
import {
  InputError, readInputs, checkInputs, clientFor, call, describeExit, resultLine, isSet, setMembers,
  setExpiresAt, setLines, startKeeper, stopKeeper, keptToken, annotate, stderrLine,
} from './lib.mjs';
import { setup } from './setup.mjs';

const LEASE_CMDS = ['acquire', 'heartbeat', 'transition', 'release', 'break', 'run', 'status'];

/** The outputs of a lease command's result (cli.md "GitHub Actions"), as the binary used to write them. */
function leaseOutputs(res) {
  const o = { status: res?.status || 'error' };
  if (isSet(res)) {
    o.oid = '';
    o['expires-at'] = setExpiresAt(res);
    o.members = JSON.stringify(setMembers(res));
    if (res.lease_token) o['lease-token'] = res.lease_token;
    return o;
  }
  o.oid = res?.oid || '';
  o['expires-at'] = res?.lease?.expires_at || '';
  const tok = res?.lease?.lease_token;
  if (tok) o['lease-token'] = tok;
  if (tok && String(res.name || '').includes('@')) o['lease-name'] = res.name;
  return o;
}

/** The last line of stderr that is not a workflow command: the binary's reason. */
const reasonOf = (stderr) => String(stderr || '').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('::')).pop() || '';

/** The argv of a command other than run (run goes through client.run). */
function argvOf(c, i) {
  const a = [c.cmd];
  const add = (flag, v) => v && a.push(flag, v);
  if (c.cmd === 'acquire') {
    add('--ttl', i.ttl);
    add('--phase', i.phase);
    add('--wait', i.wait);
    add('--slots', i.slots);
    if (c.fair) a.push('--fair');
  } else if (c.cmd === 'heartbeat') add('--ttl', i.ttl);
  else if (c.cmd === 'transition') a.push('--to', i.phase);
  a.push(...i.args);
  if (LEASE_CMDS.includes(c.cmd)) a.push('--', ...c.names);
  return a;
}

/** run: the command under the lease (client.run), its outcome said from run's JSON object. */
async function runCommand(client, c, i, signal) {
  let res = null;
  let code;
  try {
    res = await client.run(c.names, i.args, {
      ttl: i.ttl || undefined, wait: i.wait || undefined, slots: i.slots || undefined, fair: c.fair, signal,
      // stdout and stderr are the command's (its own workflow commands, ::add-mask:: among
      // them, stay its own); run's result comes from its --json-file
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    code = res.exitCode;
  } catch (e) {
    if (e.exitCode === undefined || e.exitCode === null) throw e;
    res = e.result;
    code = e.exitCode;
  }
  const out = leaseOutputs(res);
  delete out['lease-token'];
  out.acquired = res && ['exited', 'lost', 'interrupted'].includes(res.reason) && res.command ? 'true' : 'false';
  if (Array.isArray(res?.members)) out.members = JSON.stringify(setMembers({ members: res.members || [] }));
  if (code === 0) return { code, out, res };
  const st = res?.status || 'unknown';
  let reason = res?.reason || '';
  if (!reason && res?.error?.code === 'interrupted') reason = 'interrupted';
  const cmdCode = res?.command?.exit_code;
  const cmdSig = res?.command?.signal;
  let what;
  if (reason === 'exited') {
    what = cmdSig ? `the command was killed by signal ${cmdSig}` : `the command exited with status ${cmdCode ?? code} (its own status)`;
    what += st === 'released' ? '; the lease was acquired and released' : `; the lease was acquired, its release: ${st}`;
  } else if (reason === 'lost') {
    what = `the lease was lost while the command ran: the command was stopped (exit ${code}); lease status ${st}`;
  } else if (reason === 'interrupted') {
    what = cmdCode !== undefined && cmdCode !== null || cmdSig
      ? `interrupted by a signal (exit ${code}): the command was stopped; lease status ${st}`
      : `interrupted by a signal (exit ${code}) before the command started; lease status ${st}`;
  } else if (reason === 'not_acquired') {
    what = `not acquired: ${describeExit(code)} (exit ${code})`;
  } else {
    what = `${describeExit(code)} (exit ${code})`;
  }
  annotate('error', `reflease run ${c.name}`, `reflease run ${c.name}: ${what}`);
  return { code, out, res };
}

/** list, reconcile, migrate, gc: status ok (0), found (1) or error; reconcile/migrate's summary into the job's. */
async function sweep(client, c, i, tmp, signal) {
  const args = argvOf(c, i);
  const summary = join(tmp, 'summary.md');
  if ((c.cmd === 'reconcile' || c.cmd === 'migrate') && process.env.GITHUB_STEP_SUMMARY) args.splice(1, 0, '--summary', summary);
  const r = await call(client, args, { signal });
  const res = r.result;
  if (c.cmd === 'list' && res && Array.isArray(res.leases)) {
    core.info('NAME                 PHASE      STATUS     OWNER                          EXPIRES_AT           HOST');
    for (const l of res.leases) {
      core.info([l.name.padEnd(20), (l.phase || '-').padEnd(10), l.status.padEnd(10), (l.owner || '-').padEnd(30),
        (l.expires_at || '-').padEnd(20), l.host || '-'].join(' '));
    }
  } else if (res) core.info(JSON.stringify(res));
  try {
    const md = readFileSync(summary, 'utf8');
    if (md) await core.summary.addRaw(md).write();
  } catch {
    // no summary written
  }
  const st = r.code === 0 ? 'ok' : r.code === 1 ? 'found' : 'error';
  const failed = r.code !== 0 && !(r.code === 1 && (c.cmd === 'reconcile' || c.cmd === 'migrate'));
  if (failed) {
    const why = reasonOf(r.stderr);
    annotate('error', `reflease ${c.cmd}`, `reflease ${c.cmd}: ${describeExit(r.code)} (exit ${r.code})${why ? `: ${why}` : ''}`);
  }
  return { code: r.code, out: { status: st } };
}

/** acquire, heartbeat, transition, release, break, status: one lease or a set. */
async function leaseCommand(client, c, i, signal) {
  let token = i['lease-token'];
  const notes = [];
  if (c.cmd === 'release') {
    if (!token) token = keptToken(c.names, i.namespace);
    const k = await stopKeeper(c.names, i.namespace);
    if (k) notes.push(k);
  }
  const r = await call(client, argvOf(c, i), { token, signal });
  for (const k of notes) {
    for (const l of k.lines) core.info(l);
    if (!['143', '130', '129'].includes(k.rc)) {
      annotate('warning', `reflease heartbeat ${c.name}`, `the background heartbeat had already stopped: ${describeExit(Number(k.rc))} (exit ${k.rc})`);
    }
  }
  const res = r.result;
  if (isSet(res)) for (const l of setLines(res)) core.info(l);
  else if (res && res.name) core.info(resultLine(res));
  const out = leaseOutputs(res);
  if (c.cmd === 'acquire') out.acquired = r.code === 0 && out['lease-token'] ? 'true' : 'false';
  if (c.cmd === 'release' && out.status === 'not_owner') {
    annotate('warning', `reflease release ${c.name}`, 'nothing released: the lease token is not the current one (or none was given)');
  }
  if (r.code !== 0) {
    let why = reasonOf(r.stderr);
    if (isSet(res) && res.blocked_by) {
      const m = res.message || res.error?.message;
      why = `the set is stopped by ${res.blocked_by}${m ? `: ${m}` : ''}`;
    }
    annotate('error', `reflease ${c.cmd} ${c.name}`, `reflease ${c.cmd} ${c.name}: ${describeExit(r.code)} (exit ${r.code})${why ? `: ${why}` : ''}`);
  }
  return { code: r.code, out, res };
}

async function main(abort) {
  if (process.platform !== 'linux') {
    core.error('the reflease action runs on Linux runners (Debian or Ubuntu)', { title: 'reflease' });
    return 1;
  }
  const i = readInputs();
  let c;
  try {
    c = checkInputs(i);
  } catch (e) {
    if (!(e instanceof InputError)) throw e;
    return usage(i.command, e.message);
  }
  if (c.heartbeat && c.cmd !== 'acquire') {
    core.warning('heartbeat: true applies to command acquire only; ignored', { title: `reflease ${c.cmd}` });
  }
  const bin = await setup();
  if (typeof bin === 'number') return bin;
  let client;
  try {
    client = clientFor(i, bin, stderrLine);
  } catch (e) {
    if (!(e instanceof InputError)) throw e;
    return usage(c.cmd, e.message);
  }
  const tmp = mkdtempSync(join(process.env.RUNNER_TEMP || '/tmp', 'reflease-main-'));
  try {
    let r;
    if (c.cmd === 'run') r = await runCommand(client, c, i, abort.signal);
    else if (!LEASE_CMDS.includes(c.cmd)) r = await sweep(client, c, i, tmp, abort.signal);
    else r = await leaseCommand(client, c, i, abort.signal);
    if (c.cmd === 'acquire' && c.heartbeat && r.code === 0) r = await keep(client, c, i, r);
    for (const [k, v] of Object.entries(r.out)) core.setOutput(k, v);
    if (LEASE_CMDS.includes(c.cmd)) {
      const exp = r.out['expires-at'];
      await core.summary.addRaw(`- **reflease ${c.cmd}** \`${c.name}\`: ${r.out.status}${exp ? `, expires ${exp}` : ''} (exit ${r.code})\n`).write();
      if (r.keeper) await core.summary.addRaw(`  - heartbeat in the background at the renewal point${r.keeper.ttl ? ` of TTL ${r.keeper.ttl}s` : ''} until \`release\`\n`).write();
    }
    if (c.cmd === 'acquire' && r.code === 0 && r.out['lease-token']) saveForPost(c, i, r, bin);
    return r.code;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * acquire with heartbeat true: the keeper started, or the lease given back at
 * once (exit 70). The keeper renews at the library's renewal point
 * (`heartbeat --every auto`, protocol.md §6; issue 39): the TTL is the
 * acquire's (the ttl input, else the store's default, 450 s on github:), the
 * pace the store's (375 s on github:: at most 20 content-creating requests an
 * hour per held lease), earlier only when the time left calls for it.
 */
async function keep(client, c, i, r) {
  const names = r.out['lease-name'] ? [r.out['lease-name']] : c.names;
  const ttl = keptTtl(r.res) || Number(i.ttl) || 0;
  try {
    const k = await startKeeper(client, names, i.namespace, { token: r.out['lease-token'], ttl: i.ttl });
    core.info(`reflease: heartbeat of ${names.join(' ')} in the background at the renewal point${ttl ? ` of TTL ${ttl}s` : ''} (pid ${k.pid}, log ${k.log}); command: release stops it`);
    core.saveState('keeper-pid', String(k.pid));
    return { ...r, keeper: { ttl, pid: k.pid } };
  } catch (e) {
    annotate('error', `reflease acquire ${c.name}`, e.message);
    await call(client, ['release', '--', ...names], { token: r.out['lease-token'] });
    return { ...r, code: 70, out: { ...r.out, status: 'error', acquired: 'false' } };
  }
}

/** The TTL an acquire stored (a set: its shortest member's), seconds; 0 when unknown. */
function keptTtl(res) {
  const ttls = (isSet(res) ? res.members.map((m) => m.lease?.ttl_seconds) : [res?.lease?.ttl_seconds]).filter((t) => t > 0);
  return ttls.length ? Math.min(...ttls) : 0;
}

/** The lease (its token, name, store) in the step's state for the post stage (release-at-end). */
function saveForPost(c, i, r, bin) {
  if (!core.getBooleanInput('release-at-end')) {
    core.info('reflease: release-at-end is false: the lease stays held after the job until released or expired');
    return;
  }
  core.saveState('lease-token', r.out['lease-token']);
  // a slot: its own name; a set: its names, one blank apart
  core.saveState('name', r.out['lease-name'] || c.names.join(' '));
  core.saveState('namespace', i.namespace);
  core.saveState('store', i.store);
  core.saveState('repository', i.repository);
  core.saveState('binary', bin);
  core.info('reflease: the lease is released at the end of the job (release-at-end)');
}

function usage(cmd, message) {
  core.error(message, { title: `reflease ${cmd}` });
  process.stderr.write(`reflease action: ${message}\n`);
  core.setOutput('status', 'error');
  return 64;
}

// the runner's cancellation signals this process alone: reflease is told (SIGTERM)
// and ends its wait, or stops what it runs and releases (cli.md: 129, 130, 143)
const abort = new AbortController();
for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(s, () => abort.abort());
main(abort).then(
  (code) => {
    process.exitCode = code;
  },
  (e) => {
    if (abort.signal.aborted) {
      // cancelled before the command started: nothing was taken
      core.error(`reflease: cancelled before the command ran (${e.message})`, { title: 'reflease' });
      process.exitCode = 130;
      return;
    }
    core.error(`reflease: ${e.stack || e.message}`);
    process.exitCode = 70;
  },
);
