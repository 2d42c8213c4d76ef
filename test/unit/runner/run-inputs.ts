// The inputs the controller renders for a run Pod, written to a folder as the runner reads
// them from its mounted ConfigMap: shared by the runner's tests.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { renderRunInputs } from '../../../src/controller/issuerun/inputs.js';
import { loadWorkflowText } from '../../../src/template/load-workflow.js';
import { normalizeIssue } from '../../../src/workflow/issue.js';

/**
 * Renders run eng-7's inputs (issue ENG-7 in Todo, with this title, and the branch its status
 * keeps when given) from WORKFLOW.md text into `inputsDir`, made if missing; returns it.
 */
export async function writeRunInputs(
  inputsDir: string,
  text: string,
  { title, branch }: { title: string; branch?: string },
): Promise<string> {
  const loaded = loadWorkflowText(text, 'test');
  const inputs = await renderRunInputs({
    workflowText: text,
    config: loaded.config,
    promptTemplate: loaded.promptTemplate,
    issue: normalizeIssue({ identifier: 'ENG-7', title, state: 'Todo' }),
    run: {
      run: 'eng-7',
      identifier: 'ENG-7',
      attempt: null,
      ensembleSize: 1,
      ...(branch ? { branch } : {}),
    },
  });
  await mkdir(inputsDir, { recursive: true });
  for (const [name, content] of Object.entries(inputs.files))
    await writeFile(join(inputsDir, name), content);
  return inputsDir;
}
