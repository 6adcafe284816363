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
 * (REFLEASE_JOB_INDEX/TOTAL) and GITHUB_ACTION_PATH; `extra` last.
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
  return Object.assign(env, extra);
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
