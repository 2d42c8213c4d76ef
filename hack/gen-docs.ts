// `npm run docs [-- --check]`: regenerates the README's WORKFLOW.md configuration reference
// and its error table.
import { readFileSync, writeFileSync } from 'node:fs';
import { withErrorCodes } from './docs/error-codes.js';
import { withWorkflowReference } from './docs/workflow-reference.js';

const path = new URL('../README.md', import.meta.url).pathname;
const current = readFileSync(path, 'utf8');
const next = withErrorCodes(withWorkflowReference(current));
if (process.argv.includes('--check')) {
  if (next !== current) {
    process.stderr.write(
      'README.md: the generated reference or error table is stale: run npm run docs\n',
    );
    process.exit(1);
  }
} else if (next !== current) {
  writeFileSync(path, next);
}
