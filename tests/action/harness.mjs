// A small runner for the JavaScript action (action.yml, runs.using node24), as
// GitHub's runner runs one of its stages, for the tests/shell/t_action*.sh tests:
//
//   node harness.mjs --action-path DIR --with JSON --result FILE
//        [--stage main|post] [--state FILE] [--github-token T]
//        [--job-index N --job-total N] [--wrap JSON] [--node PATH] [--cancel-when FILE]
//        [--fields DIR] [--action-cache FILE]
//
// It reads DIR/action.yml, checks the `with` inputs against the declared ones
// (unknown or missing required inputs fail, as on GitHub), applies defaults
// (evaluating the `${{ }}` expressions they use: github, strategy, runner;
// anything else is an error), and runs the stage as the runner does:
// `node DIR/<runs.main|runs.post>` with every input as INPUT_<ID> (upper case,
// spaces as _, hyphens kept), fresh GITHUB_OUTPUT, GITHUB_STATE and
// GITHUB_STEP_SUMMARY files, and for the post stage (when runs.post-if holds:
// always() only) the state the main stage saved as STATE_<name> variables.
// --state FILE: where the main stage's saved state is written (JSON) and the
// post stage reads it. FILE gets {"stage", "outputs", "state", "annotations",
// "summary", "exit_code", "ms", "stdout", "stderr", "cancel"}. The
// environment (GITHUB_ACTIONS, GITHUB_REPOSITORY, RUNNER_TEMP, ...) is the
// caller's. Exit status: the stage's.
// --wrap ["cmd", "arg", ...] runs node through that command (e.g.
// scripts/debroot.sh run ROOT --keep-env --bind DIR --: the stage inside a clean
// Debian root; the paths it is given must be the same inside and out), with
// --node the node to run there (the runner brings its own node, too).
// --cancel-when FILE: once FILE exists, the runner's cancellation of a step:
// SIGINT to the stage's process, SIGTERM 7.5 s later if it still runs, and
// 2.5 s after that SIGKILL to its whole process tree; "cancel" records the
// signals sent and the milliseconds from SIGINT to the stage's end.
// --fields DIR: the result also as one file per dot-separated path under DIR
// (named by encodeURIComponent of the path): an object or an array as JSON,
// null as "", anything else as its string (action_lib.sh's q reads a field
// with cat, not with another node).
// --action-cache FILE: action.yml's parse is kept in FILE and read from there
// while action.yml's size and mtime are unchanged (one yaml load per test).
import { readFileSync, writeFileSync, existsSync, mkdirSync, appendFileSync, readdirSync, renameSync, statSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { join } from 'node:path';

// action.yml parsed; with --action-cache FILE, parsed once per test: FILE
// keeps the parse beside action.yml's size and mtime and is used while they
// match (loading the yaml package cost more than the rest of a start)
async function readAction(path, cache) {
  const st = statSync(path);
  const stamp = `${st.size} ${st.mtimeMs}`;
  if (cache && existsSync(cache)) {
    const c = JSON.parse(readFileSync(cache, 'utf8'));
    if (c.stamp === stamp) return c.action;
  }
  const { parse } = await import('yaml');
  const action = parse(readFileSync(path, 'utf8'));
  if (cache) {
    writeFileSync(`${cache}.tmp`, JSON.stringify({ stamp, action }));
    renameSync(`${cache}.tmp`, cache);
  }
  return action;
}

function fail(msg) {
  process.stderr.write(`harness: ${msg}\n`);
  process.exit(2);
}

const opt = {
  with: '{}', 'github-token': '', 'job-index': '0', 'job-total': '1', wrap: '[]', stage: 'main',
  node: process.execPath,
};
const named = ['action-path', 'result', 'state', 'cancel-when', 'fields', 'action-cache'];
for (let i = 2; i < process.argv.length; i += 2) {
  const k = process.argv[i].replace(/^--/, '');
  if (!(k in opt) && !named.includes(k)) fail(`unknown option ${k}`);
  opt[k] = process.argv[i + 1];
}
if (!opt['action-path'] || !opt.result) fail('--action-path and --result are required');
if (!['main', 'post'].includes(opt.stage)) fail('--stage is main or post');
const dir = opt['action-path'];
const wrap = JSON.parse(opt.wrap);
if (!Array.isArray(wrap) || !wrap.every((w) => typeof w === 'string')) fail('--wrap takes a JSON array of strings');
const action = await readAction(join(dir, 'action.yml'), opt['action-cache']);
if (!/^node\d+$/.test(action.runs?.using || '')) fail('not a JavaScript action');
if (!action.runs.main) fail('runs.main is missing');

// inputs: declared ids only, required ones given, defaults applied
const given = JSON.parse(opt.with);
const declared = action.inputs || {};
for (const k of Object.keys(given)) if (!(k in declared)) fail(`unexpected input '${k}'`);
const runnerTemp = process.env.RUNNER_TEMP || fail('RUNNER_TEMP is not set');
mkdirSync(runnerTemp, { recursive: true });
const ctx = {
  github: {
    token: opt['github-token'],
    repository: process.env.GITHUB_REPOSITORY || '',
    workspace: process.env.GITHUB_WORKSPACE || process.cwd(),
  },
  strategy: { 'job-index': opt['job-index'], 'job-total': opt['job-total'] },
  runner: { os: 'Linux', arch: 'X64', temp: runnerTemp },
};
function value(e) {
  e = e.trim();
  if (!/^[a-z][a-z0-9_-]*(\.[A-Za-z0-9_-]+)+$/.test(e)) fail(`unsupported expression: ${e}`);
  const parts = e.split('.');
  if (!(parts[0] in ctx)) fail(`unsupported context in an input default: ${parts[0]}`);
  let v = ctx;
  for (const p of parts) v = v == null ? v : v[p];
  return v == null ? '' : v;
}
const expand = (s) => String(s ?? '').replace(/\$\{\{(.*?)\}\}/g, (_, e) => String(value(e)));
const env = { ...process.env };
for (const [k, d] of Object.entries(declared)) {
  let v;
  if (k in given) v = String(given[k]);
  else if (d.required && d.default === undefined) fail(`input required and not supplied: ${k}`);
  else v = expand(d.default ?? '');
  env[`INPUT_${k.replace(/ /g, '_').toUpperCase()}`] = v;
}

// the stage
let script = action.runs.main;
if (opt.stage === 'post') {
  if (!action.runs.post) fail('runs.post is missing');
  if ((action.runs['post-if'] ?? 'always()') !== 'always()') fail(`unsupported post-if: ${action.runs['post-if']}`);
  script = action.runs.post;
  if (!opt.state) fail('--stage post needs --state');
  for (const [k, v] of Object.entries(JSON.parse(readFileSync(opt.state, 'utf8')))) env[`STATE_${k}`] = v;
}
const tag = `${process.pid}_${opt.stage}`;
const files = {};
for (const f of ['OUTPUT', 'STATE', 'STEP_SUMMARY']) {
  files[f] = join(runnerTemp, `_runner_file_commands_${f.toLowerCase()}_${tag}`);
  writeFileSync(files[f], '');
  env[`GITHUB_${f}`] = files[f];
}
env.GITHUB_ACTION_PATH = dir;

// workflow commands in the stage's output: ::level props::message
const unesc = (s) => s.replace(/%0D/g, '\r').replace(/%0A/g, '\n').replace(/%3A/g, ':').replace(/%2C/g, ',').replace(/%25/g, '%');
const annotations = [];
function scan(text) {
  for (const line of text.split('\n')) {
    const m = /^::(error|warning|notice)(?: ([^:]*))?::(.*)$/.exec(line);
    if (!m) continue;
    const a = { level: m[1], message: unesc(m[3]) };
    for (const kv of (m[2] || '').split(',')) {
      const i = kv.indexOf('=');
      if (i > 0) a[kv.slice(0, i)] = unesc(kv.slice(i + 1));
    }
    annotations.push(a);
  }
}
function readKV(file) {
  const out = {};
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

// every process below PID (from /proc's parent links)
function tree(pid) {
  const kids = new Map();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const st = readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(st.slice(st.lastIndexOf(')') + 2).split(' ')[1]);
      if (!kids.has(ppid)) kids.set(ppid, []);
      kids.get(ppid).push(Number(d));
    } catch {
      // gone meanwhile
    }
  }
  const all = [];
  const walk = (p) => (kids.get(p) || []).forEach((c) => (all.push(c), walk(c)));
  walk(pid);
  return all;
}

// A POSIX sh (dash) drops variables whose names are not shell names, as the
// runner's INPUT_LEASE-TOKEN: through a --wrap (a sh script) they are given
// again inside, by /usr/bin/env.
const hyphened = wrap.length ? Object.keys(env).filter((k) => !/^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) : [];
const argv = [...wrap, ...(hyphened.length ? ['/usr/bin/env', ...hyphened.map((k) => `${k}=${env[k]}`)] : []),
  opt.node, join(dir, script)];
const t0 = performance.now();
const child = spawn(argv[0], argv.slice(1), { env, cwd: ctx.github.workspace, stdio: ['ignore', 'pipe', 'pipe'] });
let stdout = '';
let stderr = '';
child.stdout.on('data', (d) => (stdout += d));
child.stderr.on('data', (d) => (stderr += d));
let cancel = null;
let poll = null;
if (opt['cancel-when']) {
  poll = setInterval(() => {
    if (cancel || !existsSync(opt['cancel-when'])) return;
    clearInterval(poll);
    cancel = { signals: ['SIGINT'], t: performance.now() };
    child.kill('SIGINT');
    cancel.term = setTimeout(() => {
      cancel.signals.push('SIGTERM');
      child.kill('SIGTERM');
      cancel.kill = setTimeout(() => {
        cancel.signals.push('SIGKILL');
        for (const p of [child.pid, ...tree(child.pid)]) {
          try {
            process.kill(p, 'SIGKILL');
          } catch {
            // gone
          }
        }
      }, 2500);
    }, 7500);
  }, 50);
}
const [code, sig] = await new Promise((done) => child.on('close', (c, s) => done([c, s])));
const ms = performance.now() - t0;
if (poll) clearInterval(poll);
let cancelled = null;
if (cancel) {
  clearTimeout(cancel.term);
  clearTimeout(cancel.kill);
  cancelled = { signals: cancel.signals, ms: Math.round(performance.now() - cancel.t) };
}
const exitCode = code ?? 128 + ({ SIGINT: 2, SIGKILL: 9, SIGTERM: 15 }[sig] || 15);
process.stderr.write(`--- ${opt.stage} (${Math.round(ms)} ms, exit ${exitCode})\n${stdout}${stderr}`);
scan(stdout);
scan(stderr);
const out = readKV(files.OUTPUT);
const outputs = {};
for (const k of Object.keys(action.outputs || {})) outputs[k] = out[k] ?? '';
const state = readKV(files.STATE);
if (opt.stage === 'main' && opt.state) writeFileSync(opt.state, JSON.stringify(state));
const summary = readFileSync(files.STEP_SUMMARY, 'utf8');
const result = {
  stage: opt.stage, outputs, state, annotations, summary, exit_code: exitCode, ms, stdout, stderr, cancel: cancelled,
};
writeFileSync(opt.result, JSON.stringify(result, null, 1));
if (opt.fields) {
  mkdirSync(`${opt.fields}.tmp`, { recursive: true });
  const walk = (p, v) => {
    if (p) {
      writeFileSync(`${opt.fields}.tmp/${encodeURIComponent(p)}`,
        v == null ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v));
    }
    if (v && typeof v === 'object') for (const k of Object.keys(v)) walk(p ? `${p}.${k}` : k, v[k]);
  };
  walk('', result);
  renameSync(`${opt.fields}.tmp`, opt.fields);
}
if (process.env.HARNESS_JOB_SUMMARY) appendFileSync(process.env.HARNESS_JOB_SUMMARY, summary);
process.exit(exitCode);
