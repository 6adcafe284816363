// Consistency checks of the JavaScript action and the workflows that the
// schema validators cannot make (scripts/lint-action.sh runs it):
//   node scripts/action-check.mjs DIR SCRIPTS_OUT
// - every `inputs.<id>` that action.yml uses is a declared input;
// - runs: node24, runs.main and runs.post files of the action, post-if: always();
// - every input is read by the JavaScript (core.getInput, or action/lib.mjs's
//   INPUTS), every input read is declared; the JavaScript runs no shell;
// - no `run:` script (action.yml or a workflow) contains `${{ }}`: values reach
//   scripts only through `env:`, so no input is ever pasted into shell code;
// - every `uses: ./` step in a workflow passes declared inputs only, and every
//   required one;
// - the commands the action accepts (action/lib.mjs's COMMANDS) are the ones
//   action.yml's command input and the README's input table name;
// - each `run:` script is written to SCRIPTS_OUT/<file>-<n>.<shell> for shellcheck.
// Exit 1 with one line per problem.
import { readFileSync, readdirSync, writeFileSync, mkdirSync, existsSync } from 'node:fs';
import { join, basename } from 'node:path';
import { parse } from 'yaml';

const [dir, out] = process.argv.slice(2);
if (!dir || !out) {
  console.error('usage: action-check.mjs DIR SCRIPTS_OUT');
  process.exit(64);
}
mkdirSync(out, { recursive: true });
const problems = [];
const problem = (where, msg) => problems.push(`${where}: ${msg}`);

function load(file) {
  try {
    return parse(readFileSync(file, 'utf8'));
  } catch (e) {
    problem(file, `not readable YAML: ${e.message.split('\n')[0]}`);
    return null;
  }
}
function strings(v, f) {
  if (typeof v === 'string') f(v);
  else if (Array.isArray(v)) v.forEach((x) => strings(x, f));
  else if (v && typeof v === 'object') Object.values(v).forEach((x) => strings(x, f));
}
let nscripts = 0;
function runStep(where, step, defShell) {
  if (typeof step.run !== 'string') return;
  if (step.run.includes('${{'))
    problem(where, 'a run: script contains ${{ }}; pass the value through env: instead');
  const shell = step.shell || defShell || 'bash';
  const ext = /^(bash|sh)$/.test(shell) ? shell : null;
  if (!ext) return;
  const f = join(out, `${basename(where).replace(/[^A-Za-z0-9_.-]/g, '_')}-${++nscripts}.${ext}`);
  writeFileSync(f, `#!/bin/${ext}\n${step.run}`);
}

// the action
const actionFile = join(dir, 'action.yml');
const action = load(actionFile) || {};
const declared = action.inputs || {};
strings(action, (s) => {
  for (const m of s.matchAll(/\$\{\{([^}]*)\}\}/g))
    for (const r of m[1].matchAll(/\binputs\.([A-Za-z0-9_-]+)/g))
      if (!(r[1] in declared)) problem(actionFile, `uses undeclared input '${r[1]}'`);
});
// the JavaScript action (issue 25): node24, a main and a post stage that always runs
const runs = action.runs || {};
if (runs.using !== 'node24') problem(actionFile, `runs.using is '${runs.using}', not node24`);
for (const k of ['main', 'post'])
  if (typeof runs[k] !== 'string' || !existsSync(join(dir, runs[k])))
    problem(actionFile, `runs.${k} '${runs[k]}' is not a file of the action`);
if (runs['post-if'] !== 'always()') problem(actionFile, 'runs.post-if is not always() (a failed or cancelled job must release too)');
// the inputs: every one read by the JavaScript (getInput, or action/lib.mjs's
// INPUTS list, which readInputs() reads), every input it reads declared
const libMjs = join(dir, 'action', 'lib.mjs');
const js = ['main.mjs', 'post.mjs', 'lib.mjs', 'setup.mjs', 'keeper.mjs'].map((f) => join(dir, 'action', f)).filter(existsSync);
if (!existsSync(libMjs)) problem(dir, 'no action/lib.mjs');
else {
  const jsText = js.map((f) => readFileSync(f, 'utf8')).join('\n');
  const libText = readFileSync(libMjs, 'utf8');
  const list = (re, what) => {
    const m = libText.match(re);
    if (!m) problem(libMjs, `no ${what} = [...] list`);
    return m ? [...m[1].matchAll(/'([a-z-]+)'/g)].map((x) => x[1]) : [];
  };
  const passed = list(/export const INPUTS = \[([^\]]*)\]/, 'INPUTS');
  const got = new Set([...jsText.matchAll(/get(?:Boolean)?Input\('([A-Za-z0-9_-]+)'\)/g)].map((x) => x[1]));
  for (const k of [...got, ...passed]) if (!(k in declared)) problem(js[0], `reads the input '${k}', which action.yml does not declare`);
  for (const k of Object.keys(declared))
    if (!got.has(k) && !passed.includes(k)) problem(actionFile, `input '${k}' is read by no stage`);
  // a shell only for the build on a cache miss (action/build.sh, apt + make), never for reflease
  const shells = [...jsText.matchAll(/\bspawn\(\s*['"](?:ba)?sh['"]|\bshell:\s*true|\bexecSync\(|exec\('bash', \[[^\]]*\]/g)].map((m) => m[0]);
  for (const sh of shells) {
    if (!/build\.sh/.test(sh)) problem(js[0], `the JavaScript runs a shell (${sh}): reflease is run through the client (argv, no shell)`);
  }
  // one list of commands: action/lib.mjs's COMMANDS, named alike in action.yml and the README
  const cmds = list(/export const COMMANDS = \[([^\]]*)\]/, 'COMMANDS').sort();
  const words = (text) => new Set(text.match(/\b[a-z]+\b/g) || []);
  const desc = words(declared.command?.description || '');
  for (const c of cmds) if (!desc.has(c)) problem(actionFile, `the command input's description omits '${c}'`);
  const readme = join(dir, 'README.md');
  if (existsSync(readme)) {
    const row = readFileSync(readme, 'utf8').match(/^\| `command` \|[^|]*\|([^\n]*)$/m);
    const named = row ? [...row[1].matchAll(/`([a-z]+)`/g)].map((x) => x[1]).sort() : [];
    if (named.join(' ') !== cmds.join(' '))
      problem(readme, `the command input row names [${named}], the action accepts [${cmds}]`);
  }
}

// the workflows
const wfDir = join(dir, '.github', 'workflows');
const wfs = existsSync(wfDir) ? readdirSync(wfDir).filter((f) => /\.ya?ml$/.test(f)).sort() : [];
if (wfs.length === 0) problem(wfDir, 'no workflows');
for (const f of wfs) {
  const file = join(wfDir, f);
  const wf = load(file);
  if (!wf) continue;
  for (const [jid, job] of Object.entries(wf.jobs || {})) {
    const defShell = job.defaults?.run?.shell || wf.defaults?.run?.shell;
    (job.steps || []).forEach((s, i) => {
      const where = `${file} job ${jid} step ${s.id || s.name || i + 1}`;
      runStep(where, s, defShell || (job.container ? 'sh' : 'bash'));
      if (s.uses !== './') return;
      for (const k of Object.keys(s.with || {}))
        if (!(k in declared)) problem(where, `passes '${k}', which action.yml does not declare`);
      for (const [k, d] of Object.entries(declared))
        if (d.required && !(k in (s.with || {}))) problem(where, `misses the required input '${k}'`);
    });
  }
}

for (const p of problems) console.error(`action-check: ${p}`);
console.log(`action-check: action.yml, ${wfs.length} workflow(s), ${nscripts} run script(s): ` +
  (problems.length ? `${problems.length} problem(s)` : 'ok'));
process.exit(problems.length ? 1 : 0);
