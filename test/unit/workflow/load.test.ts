import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_PROMPT_TEMPLATE } from '../../../src/workflow/front-matter.js';
import { loadWorkflowFile, loadWorkflowText } from '../../../src/template/load-workflow.js';
import { failureOf } from '../../support/lorenz-errors.js';
import { tempDirPerSuite } from '../../support/temp-dir.js';

const fixtures = join(import.meta.dirname, '../../fixtures/workflows');

const failure = (run: () => Promise<unknown>) => failureOf(run());

describe('loadWorkflowFile', () => {
  const dir = tempDirPerSuite('lorenz-workflow-');

  it('loads a file that sets every section', async () => {
    const path = join(fixtures, 'full.md');
    const loaded = await loadWorkflowFile(path);
    expect(loaded.source).toBe(path);
    expect(loaded.warnings).toEqual([]);
    expect(loaded.promptTemplate).toBe('Work on {{ issue.identifier }}: {{ issue.title }}.');
    const { config } = loaded;
    expect(config.tracker).toMatchObject({
      kind: 'linear',
      activeStates: ['Todo', 'In Progress', 'Rework'],
      apiKey: '$LINEAR_API_KEY',
    });
    expect(config.hooks.afterCreate).toBe(
      'set -euo pipefail\ngit clone git@github.com:acme/app.git .\n',
    );
    expect(config.hooks.beforeRun).toBe(
      'git checkout -B {{ issue.branch_name | default: issue.identifier }} origin/main',
    );
    expect(config.hooks.timeoutMs).toBe(300_000);
    expect(config.workspace.root).toBe('~/lorenz_workspaces');
    expect(config.agent).toMatchObject({ kind: 'claude', ensembleSize: 2, maxTurns: 5 });
    expect(config.agents.stallTimeoutMs).toBe(0);
    expect(config.agents.bridges).toEqual({
      claude: { bridgeCommand: 'claude-agent-acp', env: { DEBUG: '1' } },
      codex: { bridgeCommand: 'codex-acp', env: {} },
      scripted: { bridgeCommand: 'node ./bridge.mjs', env: {} },
    });
    expect(config.worker).toEqual({
      sshHosts: ['worker-1', 'worker-2'],
      sshTimeoutMs: 30_000,
      maxConcurrentAgentsPerHost: null,
    });
  });

  it('uses the default prompt for a blank body', async () => {
    const loaded = await loadWorkflowFile(join(fixtures, 'blank-body.md'));
    expect(loaded.promptTemplate).toBe(DEFAULT_PROMPT_TEMPLATE);
    expect(loaded.config.polling.intervalMs).toBe(1000);
  });

  it('fails at load on a broken prompt template, with the template attached', async () => {
    const error = await failure(() => loadWorkflowFile(join(fixtures, 'bad-template.md')));
    expect(error.code).toBe('template_parse_error');
    expect(error.message).toMatch(/tag .*not closed/);
    expect(error.detail?.template).toBe('{% if issue.title %}\nunclosed');
  });

  it('fails at load on an unknown filter (strict filters)', () => {
    expect(() => loadWorkflowText('{{ issue.title | shout }}', 'inline')).toThrow(
      expect.objectContaining({
        code: 'template_parse_error',
        message: expect.stringMatching(/^prompt: undefined filter: shout/),
      }),
    );
  });

  it('rejects shared workspaces with hooks', async () => {
    const error = await failure(() => loadWorkflowFile(join(fixtures, 'shared-with-hooks.md')));
    expect(error.message).toBe(
      'workspace.isolation = "none" does not support hooks; remove after_run',
    );
  });

  it('names the path of a missing file', async () => {
    const path = join(dir(), 'nope', 'WORKFLOW.md');
    const error = await failure(() => loadWorkflowFile(path));
    expect(error.code).toBe('missing_workflow_file');
    expect(error.message).toContain(path);
  });

  it('carries unknown-key warnings through', async () => {
    const path = join(dir(), 'WORKFLOW.md');
    await writeFile(path, '---\ntracker:\n  kinds: memory\n---\nHi {{ issue.title }}\n');
    const loaded = await loadWorkflowFile(path);
    expect(loaded.warnings).toEqual(['unknown key tracker.kinds']);
    expect(loaded.promptTemplate).toBe('Hi {{ issue.title }}');
  });
});
