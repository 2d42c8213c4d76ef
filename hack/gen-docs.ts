// `npm run docs [-- --check]`: regenerates the README's WORKFLOW.md configuration reference.
import { readFileSync, writeFileSync } from 'node:fs';
import { withWorkflowReference } from './docs/workflow-reference.js';

const path = new URL('../README.md', import.meta.url).pathname;
const current = readFileSync(path, 'utf8');
const next = withWorkflowReference(current);
if (process.argv.includes('--check')) {
  if (next !== current) {
    process.stderr.write('README.md: the WORKFLOW.md reference is stale: run npm run docs\n');
    process.exit(1);
  }
} else if (next !== current) {
  writeFileSync(path, next);
}
