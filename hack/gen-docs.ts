// `npm run docs [-- --check]`: regenerates the WORKFLOW.md configuration reference in
// docs/configuration.md, the error table in docs/cli.md and the resource fields in
// docs/resources.md, each between its markers.
import { readFileSync, writeFileSync } from 'node:fs';
import { withErrorCodes } from './docs/error-codes.js';
import { withResourceFields } from './docs/resource-fields.js';
import { withWorkflowReference } from './docs/workflow-reference.js';

/** Each generated page and how its blocks are made. */
const GENERATED_PAGES: readonly { page: string; generate: (text: string) => string }[] = [
  { page: 'docs/configuration.md', generate: withWorkflowReference },
  { page: 'docs/cli.md', generate: withErrorCodes },
  { page: 'docs/resources.md', generate: withResourceFields },
];

const stale: string[] = [];
for (const { page, generate } of GENERATED_PAGES) {
  const path = new URL(`../${page}`, import.meta.url).pathname;
  const current = readFileSync(path, 'utf8');
  const next = generate(current);
  if (next === current) continue;
  if (process.argv.includes('--check')) stale.push(page);
  else writeFileSync(path, next);
}
if (stale.length > 0) {
  process.stderr.write(`${stale.join(', ')}: the generated tables are stale: run npm run docs\n`);
  process.exit(1);
}
