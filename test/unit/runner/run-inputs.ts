// The inputs the controller renders for a run Pod, written to a folder as the runner reads
// them from its mounted ConfigMap: shared by the runner's tests.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { renderRunInputs } from '../../../src/controller/issuerun/inputs.js';
import { runRunner, type RunnerOptions } from '../../../src/runner/main.js';
import { loadWorkflowText } from '../../../src/template/load-workflow.js';
import type { LorenzEvent } from '../../../src/workflow/events.js';
import { normalizeIssue } from '../../../src/workflow/issue.js';

/**
 * A WORKFLOW.md of a git workspace cloned from `repoUrl`: its hooks have 30 s each and are
 * `hooks` (lines of the hooks map, indented), its prompt one line.
 */
export function gitWorkflowText(repoUrl: string, hooks: string): string {
  return `---
workspace:
  git:
    repo: ${repoUrl}
hooks:
  timeout_ms: 30000
${hooks}
---
Work on {{ issue.identifier }}.`;
}

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

/**
 * runRunner on slot 0, its Pod's files in `podDir` (the workspace root ws/, made first, the
 * issue state file and the termination log); returns the exit code and the lines it printed.
 */
export async function runInPod(
  podDir: string,
  options: Pick<RunnerOptions, 'inputsDir' | 'noAgent' | 'env'> &
    Partial<Omit<RunnerOptions, 'write'>>,
): Promise<{ code: number; lines: string[]; events: LorenzEvent[] }> {
  const lines: string[] = [];
  await mkdir(join(podDir, 'ws'), { recursive: true });
  const code = await runRunner({
    slot: 0,
    workspaceRoot: join(podDir, 'ws'),
    issueStateFile: join(podDir, 'state'),
    terminationLogPath: join(podDir, 'termination-log'),
    keepWorkspace: false,
    write: (line) => lines.push(line),
    ...options,
  });
  return { code, lines, events: lines.map((line) => JSON.parse(line) as LorenzEvent) };
}
