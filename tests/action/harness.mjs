// A small runner for the composite action (action.yml), as GitHub's runner
// would run it, for tests/shell/t_action.sh:
//
//   node harness.mjs --action-path DIR --with JSON --result FILE
//        [--github-token T] [--job-index N --job-total N] [--wrap JSON]
//
// It reads DIR/action.yml, checks the `with` inputs against the declared ones
// (unknown or missing required inputs fail, as on GitHub), applies defaults,
// evaluates the `${{ }}` expressions the action uses (inputs, github, strategy,
// runner, steps outputs; anything else is an error, so the test notices an
// expression it does not model), runs every `run:` step with bash
// (`bash --noprofile --norc -eo pipefail FILE`, GitHub's template) in its own
// GITHUB_OUTPUT and GITHUB_STEP_SUMMARY files, simulates `actions/cache` (a hit
// when every cached path exists), and writes FILE: {"outputs", "steps",
// "annotations", "summary", "exit_code"}. The environment (GITHUB_ACTIONS,
// GITHUB_REPOSITORY, RUNNER_TEMP, ...) is the caller's. Exit status: 0, or the
// failing step's status. Each step's record has `ms`, its wall time.
// --wrap ["cmd", "arg", ...] runs each step's bash through that command (e.g.
// scripts/debroot.sh run ROOT --keep-env --bind DIR --: the step inside a clean
// Debian root; the paths it is given must be the same inside and out).
import { readFileSync, writeFileSync, existsSync, mkdirSync, appendFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { parse } from 'yaml';

function fail(msg) {
  process.stderr.write(`harness: ${msg}\n`);
  process.exit(2);
}

const opt = { with: '{}', 'github-token': '', 'job-index': '0', 'job-total': '1', wrap: '[]' };
for (let i = 2; i < process.argv.length; i += 2) {
  const k = process.argv[i].replace(/^--/, '');
  if (!(k in opt) && !['action-path', 'result'].includes(k)) fail(`unknown option ${k}`);
  opt[k] = process.argv[i + 1];
}
if (!opt['action-path'] || !opt.result) fail('--action-path and --result are required');
const dir = opt['action-path'];
const wrap = JSON.parse(opt.wrap);
if (!Array.isArray(wrap) || !wrap.every((w) => typeof w === 'string')) fail('--wrap takes a JSON array of strings');
const action = parse(readFileSync(join(dir, 'action.yml'), 'utf8'));
if (action.runs?.using !== 'composite') fail('not a composite action');

// inputs: declared ids only, required ones given, defaults applied
const given = JSON.parse(opt.with);
const declared = action.inputs || {};
for (const k of Object.keys(given)) if (!(k in declared)) fail(`unexpected input '${k}'`);
const runnerTemp = process.env.RUNNER_TEMP || fail('RUNNER_TEMP is not set');
mkdirSync(runnerTemp, { recursive: true });
const ctx = {
  github: {
    token: opt['github-token'],
    action_path: dir,
    repository: process.env.GITHUB_REPOSITORY || '',
    workspace: process.env.GITHUB_WORKSPACE || process.cwd(),
  },
  strategy: { 'job-index': opt['job-index'], 'job-total': opt['job-total'] },
  runner: { os: 'Linux', arch: 'X64', temp: runnerTemp },
  inputs: {},
  steps: {},
};

// ${{ }} expressions: property paths, string literals, == and != between them
function value(e) {
  e = e.trim();
  let m;
  if ((m = /^'((?:[^']|'')*)'$/.exec(e))) return m[1].replace(/''/g, "'");
  if ((m = /^(.+?)\s*(==|!=)\s*(.+)$/.exec(e))) {
    const eq = String(value(m[1])) === String(value(m[3]));
    return m[2] === '==' ? eq : !eq;
  }
  if (!/^[a-z][a-z0-9_-]*(\.[A-Za-z0-9_-]+)+$/.test(e)) fail(`unsupported expression: ${e}`);
  const parts = e.split('.');
  if (!(parts[0] in ctx)) fail(`unsupported context: ${parts[0]}`);
  let v = ctx;
  for (const p of parts) {
    if (v === undefined || v === null) return '';
    v = v[p];
  }
  if (parts[0] === 'inputs' && v === undefined) fail(`undeclared input: ${e}`);
  return v === undefined || v === null ? '' : v;
}
const expand = (s) =>
  typeof s !== 'string' ? String(s ?? '') : s.replace(/\$\{\{(.*?)\}\}/g, (_, e) => String(value(e)));

for (const [k, d] of Object.entries(declared)) {
  if (k in given) ctx.inputs[k] = String(given[k]);
  else if (d.required && d.default === undefined) fail(`input required and not supplied: ${k}`);
  else ctx.inputs[k] = expand(d.default ?? '');
}

// workflow commands in a step's output: ::level props::message
const unesc = (s) => s.replace(/%0D/g, '\r').replace(/%0A/g, '\n').replace(/%3A/g, ':').replace(/%2C/g, ',').replace(/%25/g, '%');
const annotations = [];
function scan(text, step) {
  for (const line of text.split('\n')) {
    const m = /^::(error|warning|notice)(?: ([^:]*))?::(.*)$/.exec(line);
    if (!m) continue;
    const a = { level: m[1], step, message: unesc(m[3]) };
    for (const kv of (m[2] || '').split(',')) {
      const i = kv.indexOf('=');
      if (i > 0) a[kv.slice(0, i)] = unesc(kv.slice(i + 1));
    }
    annotations.push(a);
  }
}
function readOutputs(file) {
  const out = {};
  if (!existsSync(file)) return out;
  const lines = readFileSync(file, 'utf8').split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    let m;
    if ((m = /^([^=<]+)<<(.+)$/.exec(line))) {
      const body = [];
      for (i++; i < lines.length && lines[i] !== m[2]; i++) body.push(lines[i]);
      out[m[1]] = body.join('\n');
    } else if ((m = /^([^=]+)=(.*)$/.exec(line))) out[m[1]] = m[2];
  }
  return out;
}

const steps = [];
let summary = '';
let exitCode = 0;
let n = 0;
for (const s of action.runs.steps) {
  n++;
  const id = s.id || `__step${n}`;
  const rec = { id, outcome: 'skipped', exit_code: null, ms: 0 };
  const t0 = performance.now();
  steps.push(rec);
  ctx.steps[id] = { outputs: {}, outcome: 'skipped' };
  if (exitCode !== 0) continue; // success() is the default condition
  if (s.if !== undefined && !value(String(s.if).replace(/^\$\{\{(.*)\}\}$/, '$1'))) continue;
  if (s.uses) {
    if (!/^actions\/cache@v\d+$/.test(s.uses)) fail(`unsupported action ${s.uses}`);
    const paths = expand(s.with?.path).split('\n').filter(Boolean);
    if (!expand(s.with?.key)) fail('actions/cache without a key');
    const hit = paths.length > 0 && paths.every((p) => existsSync(p));
    ctx.steps[id] = { outputs: { 'cache-hit': hit ? 'true' : 'false' }, outcome: 'success' };
    Object.assign(rec, { outcome: 'success', exit_code: 0, key: expand(s.with?.key), 'cache-hit': hit });
    rec.ms = performance.now() - t0;
    continue;
  }
  if (s.shell !== 'bash') fail(`step ${id}: shell must be bash (got ${s.shell})`);
  const out = join(runnerTemp, `_output_${process.pid}_${n}`);
  const sum = join(runnerTemp, `_summary_${process.pid}_${n}`);
  const script = join(runnerTemp, `_script_${process.pid}_${n}.sh`);
  writeFileSync(out, '');
  writeFileSync(sum, '');
  writeFileSync(script, expand(s.run));
  const env = { ...process.env, GITHUB_ACTION_PATH: dir, GITHUB_OUTPUT: out, GITHUB_STEP_SUMMARY: sum };
  for (const [k, v] of Object.entries(s.env || {})) env[k] = expand(v);
  const argv = [...wrap, 'bash', '--noprofile', '--norc', '-eo', 'pipefail', script];
  const r = spawnSync(argv[0], argv.slice(1), {
    env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 64 << 20,
  });
  rec.ms = performance.now() - t0;
  process.stderr.write(`--- step ${id} (${expand(s.name || id)}, ${Math.round(rec.ms)} ms)\n${r.stdout}${r.stderr}`);
  scan(r.stdout, id);
  scan(r.stderr, id);
  const code = r.status === null ? 128 + 15 : r.status;
  ctx.steps[id] = { outputs: readOutputs(out), outcome: code === 0 ? 'success' : 'failure' };
  Object.assign(rec, { outcome: ctx.steps[id].outcome, exit_code: code, stdout: r.stdout, stderr: r.stderr });
  summary += readFileSync(sum, 'utf8');
  if (code !== 0) exitCode = code;
}

const outputs = {};
for (const [k, d] of Object.entries(action.outputs || {})) outputs[k] = expand(d.value);
writeFileSync(opt.result, JSON.stringify({ outputs, steps, annotations, summary, exit_code: exitCode }, null, 1));
if (process.env.HARNESS_JOB_SUMMARY) appendFileSync(process.env.HARNESS_JOB_SUMMARY, summary);
process.exit(exitCode);
