// Schema validation of the action and the workflows (scripts/lint-action.sh),
// with @action-validator/core 0.6.0 (the library under @action-validator/cli's
// one-file command), all files in one node process: the CLI took one process
// per file and started its WebAssembly module each time (issue 26: 0.35 CPU-s
// a file, four files a lint run).
//   node scripts/action-validate.mjs ACTION_YML [WORKFLOW...]
// ACTION_YML is validated as an action, each WORKFLOW as a workflow. The
// validator knows runs.using node12, node16 and node20 only; node24 runs the
// same keys (main, pre, post, pre-if, post-if), so the action is validated as
// written but with "  using: node24" read as node20 in that one line
// (action-check.mjs requires node24 there). For each file with errors:
// "action-validator: FILE" and the validator's result as JSON, on stderr.
// Exit 0 when every file is valid, 1 when one is not, 64 on usage errors.
import fs from 'node:fs';
import { validateAction, validateWorkflow } from '@action-validator/core';

const [action, ...workflows] = process.argv.slice(2);
if (!action) {
  console.error('usage: action-validate.mjs ACTION_YML [WORKFLOW...]');
  process.exit(64);
}

let failed = false;
function check(file, validate, edit = (s) => s) {
  let src;
  try {
    src = fs.readFileSync(file, 'utf8');
  } catch (e) {
    console.error(`action-validator: ${file}: ${e.message}`);
    failed = true;
    return;
  }
  const result = validate(edit(src));
  if (result.errors.length > 0) {
    console.error(`action-validator: ${file}`);
    console.error(JSON.stringify(result, null, 2));
    failed = true;
  }
}

check(action, validateAction, (s) => s.replace(/^ {2}using: node24$/m, '  using: node20'));
for (const wf of workflows) check(wf, validateWorkflow);
process.exit(failed ? 1 : 0);
