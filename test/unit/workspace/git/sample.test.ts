import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { createAcpAgentStep } from '../../../../src/agent/step.js';
import { createLocalExecutor } from '../../../../src/executor/local.js';
import { loadWorkflowText } from '../../../../src/template/load-workflow.js';
import { renderPrompt, soloEnsemble } from '../../../../src/template/prompt.js';
import { runIssueLifecycle } from '../../../../src/workspace/lifecycle.js';
import type { LorenzEvent } from '../../../../src/workflow/events.js';
import { buildScriptedAgent } from '../../../fixtures/scripted-agent/build.js';
import { makeTempDir, removeTempDir } from '../../../support/workspace.js';

/**
 * config/samples/workflow-git.yaml as `make demo` runs it: its WORKFLOW.md, the real scripted
 * agent as the bridge, the repository served by `git daemon` (only the port differs), and
 * the agent's commit pushed to the issue's branch.
 */
const run = promisify(execFile);
const sample = parse(
  readFileSync(join(import.meta.dirname, '../../../../config/samples/workflow-git.yaml'), 'utf8'),
) as { spec: { workflow: string } };

let base: string;
let daemon: ChildProcess;
let port: number;
let agentCommand: string;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  return typeof address === 'object' && address ? address.port : 0;
}

const git = (...args: string[]) =>
  run('git', ['-c', 'user.name=t', '-c', 'user.email=t@localhost', ...args], {
    env: { ...process.env, HOME: base, GIT_CONFIG_NOSYSTEM: '1' },
  });

beforeAll(async () => {
  base = await makeTempDir('lorenz-git-sample-');
  agentCommand = `${process.execPath} ${await buildScriptedAgent()}`;
  await git('init', '-q', '--bare', '-b', 'main', join(base, 'web.git'));
  await git('clone', '-q', join(base, 'web.git'), join(base, 'seed'));
  await git('-C', join(base, 'seed'), 'commit', '-q', '--allow-empty', '-m', 'Initial commit');
  await git('-C', join(base, 'seed'), 'push', '-q', 'origin', 'main');
  port = await freePort();
  daemon = spawn(
    'git',
    [
      'daemon',
      '--reuseaddr',
      '--listen=127.0.0.1',
      `--port=${port}`,
      `--base-path=${base}`,
      '--export-all',
      '--enable=receive-pack',
      base,
    ],
    { stdio: 'ignore' },
  );
  // Ready when it answers ls-remote.
  for (let tries = 0; tries < 50; tries += 1) {
    if (
      await git('ls-remote', `git://127.0.0.1:${port}/web.git`).then(
        () => true,
        () => false,
      )
    )
      break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}, 60_000);
afterAll(async () => {
  daemon.kill();
  await removeTempDir(base);
});

describe('the git sample', () => {
  it('clones the repository; the scripted agent commits on the issue branch and pushes', async () => {
    const text = sample.spec.workflow
      .replace('git://127.0.0.1:9418/', `git://127.0.0.1:${port}/`)
      .replace('node /lorenz-bin/scripted-agent.mjs', agentCommand);
    const workflow = loadWorkflowText(text, 'workflow-git.yaml');
    expect(workflow.warnings).toEqual([]);
    const config = {
      ...workflow.config,
      workspace: { ...workflow.config.workspace, root: join(base, 'workspaces') },
    };
    const [issue] = config.tracker.issues;
    if (!issue) throw new Error('the sample has no issue');
    const executor = createLocalExecutor();
    const env = { ...process.env, HOME: base, GIT_CONFIG_NOSYSTEM: '1' };
    const events: LorenzEvent[] = [];
    const summary = await runIssueLifecycle({
      config,
      issue,
      executor,
      emit: (event) => events.push(event),
      attempt: null,
      env,
      agent: createAcpAgentStep({
        config,
        executor,
        env,
        renderPrompt: () =>
          renderPrompt(workflow.promptTemplate, { issue, attempt: null, ensemble: soloEnsemble() }),
        isIssueActive: async () => true,
      }),
    });
    expect(summary.succeeded).toBe(true);
    const branch = 'lorenz/git-1-add-a-greeting';
    const { stdout } = await git('--git-dir', join(base, 'web.git'), 'log', '--format=%s', branch);
    expect(stdout.trim().split('\n')).toEqual(['GIT-1: Add a greeting', 'Initial commit']);
    const greeting = await git('--git-dir', join(base, 'web.git'), 'show', `${branch}:GREETING.md`);
    expect(greeting.stdout).toBe('Hello from GIT-1\n');
    const afterCreate = events.find(
      (event) => event.type === 'hook_execution' && event.message.status === 'completed',
    );
    expect(afterCreate?.type === 'hook_execution' && afterCreate.message.output).toMatch(
      new RegExp(`Initial commit\\n${branch}$`),
    );
  }, 60_000);
});
