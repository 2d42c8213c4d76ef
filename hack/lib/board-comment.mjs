// A comment on a memory-board issue, as a merge patch of its Workflow: reads the Workflow
// (JSON, stdin) and prints {"spec":{"workflow": ...}} with `comments:` added to the issue
// ISSUE of tracker.issues in its WORKFLOW.md. Used by hack/lib/samples.sh (show_approvals).
//   node hack/lib/board-comment.mjs ISSUE AUTHOR BODY CREATED_AT < workflow.json
import { readFileSync } from 'node:fs';

const [issue, author, body, createdAt] = process.argv.slice(2);
const workflow = JSON.parse(readFileSync(0, 'utf8'));
const text = workflow?.spec?.workflow;
if (typeof text !== 'string' || !issue || !author || !body || !createdAt) {
  process.stderr.write(
    'board-comment: usage: ISSUE AUTHOR BODY CREATED_AT < workflow.json (spec.workflow inline)\n',
  );
  process.exit(2);
}
const lines = text.split('\n');
const at = lines.findIndex((line) =>
  new RegExp(`^\\s*(- )?identifier:\\s*"?${issue}"?\\s*$`).test(line),
);
if (at < 0) {
  process.stderr.write(`board-comment: no issue ${issue} in the Workflow's tracker.issues\n`);
  process.exit(1);
}
// The issue's keys are indented as its `identifier:` key; its entry ends at a line indented less.
const indent = ' '.repeat(
  lines[at].search(/\S/) + (lines[at].trimStart().startsWith('- ') ? 2 : 0),
);
let end = at + 1;
while (end < lines.length && lines[end].startsWith(indent) && lines[end].trim() !== '') end += 1;
const comment = `${indent}  - { author: ${JSON.stringify(author)}, body: ${JSON.stringify(body)}, created_at: ${JSON.stringify(createdAt)} }`;
const existing = lines.slice(at, end).findIndex((line) => line === `${indent}comments:`);
if (existing >= 0) lines.splice(at + existing + 1, 0, comment);
else lines.splice(end, 0, `${indent}comments:`, comment);
process.stdout.write(`${JSON.stringify({ spec: { workflow: lines.join('\n') } })}\n`);
