// What the Action's stages share (bundled into dist/main.mjs, dist/post.mjs
// and dist/keeper.mjs by scripts/build-dist.sh): the inputs, their checks,
// the reflease client's environment, the background keeper's files, and the
// one writer of outputs, annotations and the job summary (@actions/core).
// Every lease decision is the reflease binary's, reached through the Node
// client (clients/node): argv only, tokens in the environment.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, existsSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as core from '@actions/core';
import { Reflease, describeExit } from '../clients/node/index.js';

/** The action's directory: dist/.. (action.yml, action/, build/bundle). */
export const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The commands of the command input (scripts/action-check.mjs compares it with action.yml's and the README's). */
export const COMMANDS = ['acquire', 'heartbeat', 'transition', 'release', 'break', 'run', 'status', 'list', 'reconcile', 'migrate', 'gc'];
const NAMED = ['acquire', 'heartbeat', 'transition', 'release', 'break', 'run', 'status'];

/** A usage error of the inputs: exit 64, said as an annotation and on stderr (nothing run). */
export class InputError extends Error {}

/**
 * The lease names of a name input: one name, or a set (cli.md "Sets")
 * separated by blanks, newlines or commas (a lease name has none of them).
 */
export function leaseNames(input) {
  return String(input || '').split(/[\s,]+/).filter((n) => n !== '');
}

/**
 * The inputs (a map input name -> string) checked as before issue 42, in
 * the same order and words: the first problem is an InputError.
 */
export function checkInputs(i) {
  const cmd = i.command;
  const names = leaseNames(i.name);
  const name = names.join(' ');
  const fail = (m) => {
    throw new InputError(m);
  };
  if (cmd === '') fail('the command input is required');
  if (!COMMANDS.includes(cmd)) fail(`unknown command '${cmd}' (${COMMANDS.join(', ')})`);
  if (NAMED.includes(cmd) && !names.length) fail(`command ${cmd} needs the name input`);
  const hb = String(i.heartbeat || '').toLowerCase();
  if (!['true', 'false', ''].includes(hb)) fail(`heartbeat must be true or false, not '${i.heartbeat}'`);
  // names end up in file names under RUNNER_TEMP: their alphabet here (the
  // binary checks every rule of protocol.md §1, and that no name is given twice)
  for (const n of names) {
    if (/[^A-Za-z0-9._@-]/.test(n) || n.startsWith('.')) {
      fail(`invalid lease name '${n}' (protocol.md §1: [A-Za-z0-9._-], and a slot's NAME@iofN; several names are separated by blanks, newlines or commas)`);
    }
  }
  const setN = names.length;
  if (setN > 1 && (cmd === 'break' || cmd === 'status')) {
    fail(`command ${cmd} takes one name, not a set of ${setN} (${name}); sets are for acquire, heartbeat, transition, release and run`);
  }
  if (/[^a-z0-9-]/.test(i.namespace)) fail(`invalid namespace '${i.namespace}' (protocol.md §1: [a-z][a-z0-9-]*)`);
  for (const k of ['ttl', 'wait']) if (/[^0-9]/.test(i[k])) fail(`${k} must be whole seconds, not '${i[k]}'`);
  if (/[^0-9]/.test(i.slots)) fail(`slots must be a whole number (1-64), not '${i.slots}'`);
  if (i.slots && cmd !== 'acquire' && cmd !== 'run') {
    fail('slots applies to commands acquire and run (name the slot held, NAME@iofN, for the others)');
  }
  if (i.slots && setN > 1) fail(`slots takes one name, not a set of ${setN} (${name}): a set's members are plain leases (cli.md "Sets")`);
  let fair = false;
  if (i.fair === 'true') {
    if (!i.wait) fail('fair: true needs the wait input (the queue is for waiting)');
    fair = true;
  } else if (i.fair !== 'false' && i.fair !== '') fail(`fair: '${i.fair}' is neither true nor false`);
  if (fair && i.slots) fail('fair: true and slots do not go together (the queue is for one lease)');
  if (fair && setN > 1) fail(`fair: true queues for one lease, not a set of ${setN} (${name})`);
  if (i.repository && !/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/.test(i.repository)) {
    fail(`repository must be OWNER/REPO, not '${i.repository}'`);
  }
  if (!['api', 'git', ''].includes(i.store)) fail(`store must be api or git, not '${i.store}'`);
  if (cmd === 'transition' && !i.phase) fail('command transition needs the phase input');
  if (cmd === 'run' && !i.args.length) fail('command run needs the command to run in the args input');
  return { cmd, names, name, heartbeat: hb === 'true', fair };
}

/** The inputs readInputs() reads (scripts/action-check.mjs compares them with action.yml's). */
export const INPUTS = [
  'command', 'name', 'ttl', 'phase', 'wait', 'fair', 'lease-token', 'namespace', 'args', 'heartbeat', 'store', 'slots',
  'repository', 'token', 'job-index', 'job-total',
];

/** The step's inputs the stages read (INPUT_*), as strings; args split on blanks, never evaluated. */
export function readInputs(over = {}) {
  const i = {};
  for (const id of INPUTS) i[id] = id in over ? over[id] : core.getInput(id);
  i.store = i.store || 'api';
  i.fair = i.fair || 'false';
  i.args = String(i.args || '').split(/\s+/).filter((w) => w !== '');
  return i;
}

/**
 * The client for a step: the binary, and the environment reflease reads
 * (cli.md): the job's without the runner's INPUT_* variables (the token
 * input among them), the GitHub token in REFLEASE_GITHUB_TOKEN (store api) or
 * REFLEASE_GIT_TOKEN (store git), the store (input repository: that
 * repository; store git: git pushes to $GITHUB_SERVER_URL/REPO), the matrix
 * leg's owner (protocol.md §5). GITHUB_OUTPUT and GITHUB_STEP_SUMMARY are
 * the stages' alone (the client blanks them for the binary).
 */
export function clientFor(i, bin, onStderr) {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('INPUT_')) env[k] = v;
  const repo = i.repository || process.env.GITHUB_REPOSITORY || '';
  let store;
  if (i.store === 'git') {
    if (!repo) throw new InputError('store git needs GITHUB_REPOSITORY');
    store = `remote:${process.env.GITHUB_SERVER_URL || 'https://github.com'}/${repo}`;
    env.REFLEASE_GIT_TOKEN = i.token;
  } else if (i.repository) {
    store = `github:${i.repository}`;
  }
  // a matrix job's legs share repository, run, attempt and job: the index tells them apart
  const total = Number(i['job-total'] || 1);
  if (!process.env.REFLEASE_OWNER && process.env.GITHUB_ACTIONS === 'true' && total > 1) {
    env.REFLEASE_OWNER = [process.env.GITHUB_REPOSITORY || '?', process.env.GITHUB_RUN_ID || '?',
      process.env.GITHUB_RUN_ATTEMPT || '1', process.env.GITHUB_JOB || '?', i['job-index'] || '0'].join('/');
  }
  return new Reflease({
    binary: bin, env, store, namespace: i.namespace || undefined, onStderr,
    githubToken: i.store === 'git' ? undefined : i.token || undefined,
  });
}

/**
 * Run one reflease command through the client and resolve to { code,
 * result, stderr }: its exit status, its JSON object (null when it gave
 * none) and its stderr, whatever the status (the stages report every one).
 */
export async function call(client, args, { token, signal } = {}) {
  const r = await client.spawn(args, { token, signal });
  let result = null;
  try {
    result = r.stdout.trim() ? JSON.parse(r.stdout) : null;
  } catch {
    result = null;
  }
  return { code: r.code, result, stderr: r.stderr };
}

export { describeExit };

/** The log's line for one lease's result: name, status, phase, holder, message. */
export function resultLine(m) {
  let l = `${m.name}: ${m.status}`;
  if (m.lease && m.lease.phase && m.status !== 'absent') l += `, phase ${m.lease.phase}`;
  if (m.holder) l += `, held by ${m.holder.owner} until ${m.holder.expires_at}`;
  if (m.message) l += ` (${m.message})`;
  return l;
}

/** A set's JSON result (cli.md "Sets"), or null. */
export const isSet = (o) => !!(o && o.set === true && Array.isArray(o.members));

/** The members output: each member's object as reflease gives it, without its lease token. */
export function setMembers(set) {
  return set.members.map((m) => {
    const c = structuredClone(m);
    if (c.lease) delete c.lease.lease_token;
    return c;
  });
}

/**
 * The expires-at output of a set: when the member that stopped the set frees
 * up (blocked_by), else the earliest expiry of a member still held.
 */
export function setExpiresAt(set) {
  const held = set.members.filter((m) => m.holder && m.holder.expires_at);
  const by = held.find((m) => m.name === set.blocked_by);
  if (by) return by.holder.expires_at;
  return held.map((m) => m.holder.expires_at).sort()[0] || '';
}

/** The log's lines for a set's result: the set's status, then one line per member. */
export function setLines(set) {
  const lines = [`set of ${set.members.length}: ${set.status}${set.blocked_by ? ` (blocked by ${set.blocked_by})` : ''}`];
  for (const m of set.members) lines.push(`  ${resultLine(m)}`);
  const msg = set.message || (set.error && set.error.message);
  if (msg) lines.push(`  ${msg}`);
  return lines;
}

// ---- the background keeper's files ------------------------------------------

/**
 * The keeper's files under RUNNER_TEMP for NAMES in namespace NS: by the
 * lease's name; a set's by a hash of its sorted names (a set names up to 16
 * leases of up to 100 bytes each, more than a file name holds), so that a
 * release naming the set in another order finds them. { base, names }:
 * base.pid (the reflease heartbeat's pid), base.rc (its exit status),
 * base.log, base.token (mode 600, for a release step without lease-token).
 */
export function keeperFiles(names, ns) {
  const tmp = process.env.RUNNER_TEMP || process.env.TMPDIR || '/tmp';
  const space = ns || process.env.REFLEASE_NAMESPACE || 'leases';
  if (names.length <= 1) return { base: join(tmp, `reflease-heartbeat.${space}.${names[0]}`), names: [...names] };
  const sorted = [...names].sort((a, b) => (Buffer.from(a) < Buffer.from(b) ? -1 : a === b ? 0 : 1));
  const key = createHash('sha256').update(sorted.map((n) => `${n}\n`).join('')).digest('hex').slice(0, 32);
  return { base: join(tmp, `reflease-heartbeat.${space}.set-${key}`), names: sorted };
}

/** Is PID the keeper of NAMES (a reflease heartbeat of exactly those names), not a recycled pid? */
function isKeeper(pid, names) {
  try {
    const c = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
    return c.includes(' heartbeat ') && c.endsWith(` -- ${names.join(' ')} `);
  } catch {
    return false;
  }
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Stop the background keeper of NAMES, if one was started (its pid file, or
 * STATEPID when it is still that keeper): SIGTERM, up to 30
 * s for its exit status, then SIGKILL. Returns null when none was started,
 * else { rc, lines }: its exit status (143: stopped here; anything else: it
 * had stopped by itself) and the lines for the log; an annotation is the
 * caller's.
 */
export async function stopKeeper(names, ns, statePid = 0) {
  const { base, names: kn } = keeperFiles(names, ns);
  // the pid file, else the pid the main stage's state recorded (the post stage's)
  const pid = existsSync(`${base}.pid`) ? Number(readFileSync(`${base}.pid`, 'utf8').trim()) : Number(statePid) || 0;
  if (!pid || (!existsSync(`${base}.pid`) && !isKeeper(pid, kn))) return null;
  if (!existsSync(`${base}.rc`) && isKeeper(pid, kn)) {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      // gone meanwhile
    }
    for (let i = 0; i < 300 && !existsSync(`${base}.rc`); i++) await sleep(100);
    if (!existsSync(`${base}.rc`) && isKeeper(pid, kn)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
  }
  let rc = 'unknown';
  try {
    rc = readFileSync(`${base}.rc`, 'utf8').trim();
  } catch {
    // killed: no status
  }
  const lines = [`reflease: background heartbeat of ${names.join(' ')} stopped (exit ${rc}); its log:`];
  try {
    for (const l of readFileSync(`${base}.log`, 'utf8').split('\n').filter((x) => x).slice(-20)) lines.push(`  | ${l}`);
  } catch {
    // no log
  }
  for (const f of ['pid', 'rc', 'log', 'token']) rmSync(`${base}.${f}`, { force: true });
  return { rc, lines };
}

/** The token a keeper kept for a release step without lease-token ('' when none). */
export function keptToken(names, ns) {
  try {
    return readFileSync(`${keeperFiles(names, ns).base}.token`, 'utf8').trim();
  } catch {
    return '';
  }
}

/**
 * Start the background keeper of NAMES: dist/keeper.mjs, detached (its own
 * session; the step's output pipes are not its), with the token in its
 * environment and its output in base.log; it starts `reflease heartbeat
 * --every auto` (the renewal point; --ttl TTL when the ttl input gave one) and
 * writes base.pid, then base.rc when it ends. Resolves to the heartbeat's
 * pid, or throws when it did not start.
 */
export async function startKeeper(client, names, ns, { token, ttl }) {
  const { base, names: kn } = keeperFiles(names, ns);
  await stopKeeper(names, ns);
  for (const f of ['pid', 'rc']) rmSync(`${base}.${f}`, { force: true });
  writeFileSync(`${base}.token.tmp`, `${token}\n`, { mode: 0o600 });
  renameSync(`${base}.token.tmp`, `${base}.token`);
  const log = openSync(`${base}.log`, 'w');
  const node = process.env.REFLEASE_NODE || process.execPath;
  // the client's environment (the step's without INPUT_*, the store, the owner) is the keeper's own
  const options = { ...client.options };
  const env = options.env;
  delete options.env;
  delete options.onStderr;
  const spec = JSON.stringify({ base, names: kn, ttl, binary: client.binary, options });
  const child = spawn(node, [join(root, 'dist', 'keeper.mjs')], {
    detached: true, stdio: ['ignore', log, log],
    env: { ...env, REFLEASE_KEEPER: spec, REFLEASE_KEEPER_TOKEN: token, GITHUB_OUTPUT: '', GITHUB_STEP_SUMMARY: '', GITHUB_STATE: '' },
  });
  child.unref();
  closeSync(log);
  for (let i = 0; i < 50 && !existsSync(`${base}.pid`); i++) await sleep(100);
  await sleep(500);
  if (!existsSync(`${base}.pid`) || existsSync(`${base}.rc`)) {
    let l = '';
    try {
      l = readFileSync(`${base}.log`, 'utf8');
    } catch {
      // none
    }
    throw new Error(`the background heartbeat did not start${l ? `: ${l.trim()}` : ''}`);
  }
  return { pid: Number(readFileSync(`${base}.pid`, 'utf8').trim()), log: `${base}.log` };
}

/** A workflow command's escaping undone (%25, %0D, %0A; in properties also %3A, %2C). */
const unescapeCommand = (v) => v.replace(/%0D/g, '\r').replace(/%0A/g, '\n').replace(/%3A/g, ':').replace(/%2C/g, ',').replace(/%25/g, '%');

/**
 * One line of the binary's stderr into the log as it comes. An annotation
 * the binary says (reconcile and migrate, when GITHUB_ACTIONS is true:
 * `::warning title=T::M`) is said again through @actions/core, so the
 * stages stay the one writer of annotations and no other workflow command
 * of the binary's output is ever run; anything else is the line itself.
 */
export function stderrLine(line) {
  const m = /^::(error|warning|notice)(?: ([^:]*))?::(.*)$/.exec(line);
  if (m) {
    const props = {};
    for (const kv of (m[2] || '').split(',')) {
      const i = kv.indexOf('=');
      if (i > 0) props[kv.slice(0, i)] = unescapeCommand(kv.slice(i + 1));
    }
    core[m[1]](unescapeCommand(m[3]), props.title ? { title: props.title } : {});
  } else if (line.startsWith('::')) {
    process.stderr.write(` ${line}\n`); // not a command of ours: shown, never run
  } else {
    process.stderr.write(`${line}\n`);
  }
}

/** Annotate (error/warning) with a title; the message escaped by @actions/core. */
export function annotate(level, title, message) {
  core[level](message, { title });
}
