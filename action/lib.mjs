// What dist/main.mjs and dist/post.mjs share (bundled into each by
// scripts/build-dist.sh). The JavaScript only orchestrates: every lease
// decision is the reflease binary's, reached through action/run.sh.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as core from '@actions/core';

/** The action's directory: dist/.. (action.yml, action/, build/bundle). */
export const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The inputs action/run.sh reads, each as INPUT_<ID with _ for ->. */
export const RUN_INPUTS = [
  'command', 'name', 'ttl', 'phase', 'wait', 'fair', 'lease-token', 'namespace', 'args', 'heartbeat',
  'store', 'slots',
];

/**
 * The environment for action/run.sh: the job's environment without the
 * runner's INPUT_* variables (the GitHub token input among them), plus each
 * of RUN_INPUTS from `values` (an input name -> string; default: the step's
 * inputs), the GitHub token in REFLEASE_GITHUB_TOKEN only, the matrix leg
 * (REFLEASE_JOB_INDEX/TOTAL), GITHUB_ACTION_PATH and REFLEASE_NODE (the node
 * that run.sh reads JSON results with); `extra` last.
 */
export function runEnv(values = {}, extra = {}) {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('INPUT_')) env[k] = v;
  for (const id of RUN_INPUTS) {
    const v = id in values ? values[id] : core.getInput(id);
    env[`INPUT_${id.toUpperCase().replace(/-/g, '_')}`] = v;
  }
  env.REFLEASE_GITHUB_TOKEN = core.getInput('token');
  env.REFLEASE_JOB_INDEX = core.getInput('job-index');
  env.REFLEASE_JOB_TOTAL = core.getInput('job-total');
  env.GITHUB_ACTION_PATH = root;
  // the node run.sh reads JSON results with: this one, unless the job names one
  // (a node started through its loader, as t_action_bundle.sh starts it, has the
  // loader as its execPath)
  env.REFLEASE_NODE = process.env.REFLEASE_NODE || process.execPath;
  return Object.assign(env, extra);
}

/**
 * The lease names of a name input: one name, or a set (cli.md "Sets")
 * separated by blanks, newlines or commas (a lease name has none of them).
 * The same split as action/run.sh's, which passes them to reflease.
 */
export function leaseNames(input) {
  return String(input || '').split(/[\s,]+/).filter((n) => n !== '');
}

/**
 * A set's JSON result (cli.md "Sets": status, set, names, members,
 * lease_token, blocked_by) that action/run.sh left in FILE, or null when FILE
 * is missing, unreadable or not a set's result.
 */
export function readSet(file) {
  try {
    const o = JSON.parse(readFileSync(file, 'utf8'));
    return o && o.set === true && Array.isArray(o.members) ? o : null;
  } catch {
    return null;
  }
}

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
 * up (blocked_by), else the earliest expiry of a member still held (the set is
 * wholly held until then); '' when none is held.
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
  for (const m of set.members) {
    let l = `  ${m.name}: ${m.status}`;
    if (m.lease && m.lease.phase) l += `, phase ${m.lease.phase}`;
    if (m.holder) l += `, held by ${m.holder.owner} until ${m.holder.expires_at}`;
    if (m.message) l += ` (${m.message})`;
    lines.push(l);
  }
  const msg = set.message || (set.error && set.error.message);
  if (msg) lines.push(`  ${msg}`);
  return lines;
}

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'];
const SIGNO = { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 };

/**
 * Run `bash FILE` (a script of action/) and resolve to { code, out }: code is
 * its exit status (128 + signal when a signal ended it), out its stdout when
 * `capture` (else stdout is the step's). While it runs, SIGINT, SIGTERM and
 * SIGHUP sent to this process (the runner's cancellation signals this process
 * alone) are forwarded to it; run.sh forwards them to reflease.
 */
export function bash(file, { env = process.env, capture = false, captureErr = false } = {}) {
  return new Promise((done) => {
    const child = spawn('bash', ['--noprofile', '--norc', join(root, 'action', file)], {
      env,
      stdio: ['ignore', capture ? 'pipe' : 'inherit', captureErr ? 'pipe' : 'inherit'],
    });
    const fwd = (sig) => child.kill(sig);
    for (const s of SIGNALS) process.on(s, fwd);
    let out = '';
    if (capture) child.stdout.on('data', (d) => (out += d));
    if (captureErr) child.stderr.on('data', (d) => (out += d));
    const finish = (code) => {
      for (const s of SIGNALS) process.removeListener(s, fwd);
      done({ code, out });
    };
    child.on('error', (e) => {
      core.error(`reflease: cannot run bash: ${e.message}`);
      finish(127);
    });
    child.on('close', (code, sig) => finish(code ?? 128 + (SIGNO[sig] || 15)));
  });
}

/** The key=value (and key<<DELIM) lines of a GITHUB_OUTPUT-format file. */
export function readKeyValues(file) {
  const out = {};
  if (!existsSync(file)) return out;
  const lines = readFileSync(file, 'utf8').split('\n');
  for (let i = 0; i < lines.length; i++) {
    let m;
    if ((m = /^([^=<]+)<<(.+)$/.exec(lines[i]))) {
      const body = [];
      for (i++; i < lines.length && lines[i] !== m[2]; i++) body.push(lines[i]);
      out[m[1]] = body.join('\n');
    } else if ((m = /^([^=]+)=(.*)$/.exec(lines[i]))) out[m[1]] = m[2];
  }
  return out;
}
