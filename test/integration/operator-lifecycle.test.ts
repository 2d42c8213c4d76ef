import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createIssueRun,
  createWorkflow,
  finished,
  getRun,
  hookEvents,
  path,
  runPodNames,
  startOperatorEnv,
  until,
  workflowText,
  type OperatorEnv,
} from './operator-harness.js';

const HOOKS = {
  after_create: 'echo created',
  before_run: 'echo ready',
  after_run: 'echo after-run-ran',
  before_remove: 'echo bye',
};

/** Resolves once the before_run hook of the run has succeeded (its Event exists). */
const agentRunning = (env: OperatorEnv, run: string) =>
  until(`${run} to reach the agent`, async () => {
    const events = await hookEvents(env, run);
    return events.some(
      (event) => event.reason === 'HookSucceeded' && event.note.startsWith('before_run'),
    )
      ? true
      : undefined;
  });

describe('IssueRun lifecycle: cancellation and controller restarts', () => {
  let env: OperatorEnv;
  beforeAll(async () => {
    env = await startOperatorEnv();
    await env.startController();
  });
  afterAll(async () => {
    await env?.stop();
  });

  it('cancels a run mid-turn: the Pod is stopped, after_run still runs, Succeeded=False Cancelled', async () => {
    await createWorkflow(env, 'long', workflowText(env, { hooks: HOOKS, prompt: '@sleep 60000' }));
    await createIssueRun(env, 'long-1', 'long', { identifier: 'ENG-10', title: 'Long work' });
    await agentRunning(env, 'long-1');
    await env.admin.request({
      method: 'PATCH',
      path: path.issueRuns('long-1'),
      patchType: 'merge',
      body: { spec: { cancelRequested: true } },
    });
    const run = await finished(env, 'long-1', 60_000).catch(async (error: unknown) => {
      const pods = await env
        .kubectl('-n', 'default', 'logs', 'long-1-0-1', '-c', 'agent')
        .catch(String);
      const current = await env.admin.request({ path: path.issueRuns('long-1') });
      throw new Error(
        `${String(error)}\n${JSON.stringify(current, null, 1)}\n${JSON.stringify(pods, null, 1)}`,
      );
    });
    expect(run.status?.phase).toBe('Failed');
    expect(run.status?.reason).toBe('Cancelled');
    expect(run.status?.conditions?.find((c) => c.type === 'Succeeded')).toMatchObject({
      status: 'False',
      reason: 'Cancelled',
    });
    expect(run.status?.hooks?.find((hook) => hook.name === 'after_run')).toMatchObject({
      status: 'completed',
      output: 'after-run-ran\n',
    });
    const events = await hookEvents(env, 'long-1');
    expect(
      events.some(
        (event) => event.reason === 'HookSucceeded' && event.note.startsWith('after_run'),
      ),
    ).toBe(true);
    await until('the run Pod to be gone', async () =>
      (await runPodNames(env, 'long-1')).length === 0 ? true : undefined,
    );
  });

  it('ends a multi-turn run after the current turn when spec.issue.state turns terminal', async () => {
    const maxTurns = 5;
    const sleeps = ['@sleep 3000', '@turn 2: @sleep 3000', '@turn 3: @sleep 3000'];
    await createWorkflow(
      env,
      'state',
      workflowText(env, { hooks: HOOKS, prompt: sleeps.join('\n'), maxTurns }),
    );
    await createIssueRun(env, 'state-1', 'state', { identifier: 'ENG-12', title: 'Done soon' });
    await agentRunning(env, 'state-1');
    await env.admin.request({
      method: 'PATCH',
      path: path.issueRuns('state-1'),
      patchType: 'merge',
      body: { spec: { issue: { state: 'Done' } } },
    });
    const run = await finished(env, 'state-1');
    expect(run.status?.phase, run.status?.message).toBe('Succeeded');
    expect(run.status?.turn).toBeGreaterThanOrEqual(1);
    expect(run.status?.turn).toBeLessThan(maxTurns);
    // The controller (impersonated, config/rbac only) patched the annotation the runner read.
    const pod = await env.admin.request<{ metadata: { annotations?: Record<string, string> } }>({
      path: `${path.pods}/state-1-0-1`,
    });
    expect(pod.metadata.annotations?.['lorenz.dev/issue-state']).toBe('Done');
  });

  it('deletes a finished IssueRun after ttlSecondsAfterFinished, its Pod and ConfigMap with it', async () => {
    await createWorkflow(env, 'ttl', workflowText(env), { ttlSecondsAfterFinished: 1 });
    await createIssueRun(env, 'ttl-1', 'ttl', { identifier: 'ENG-13', title: 'Short-lived' });
    const seen = await until('the run to finish (or be deleted already)', async () => {
      const run = await getRun(env, 'ttl-1').catch(() => undefined);
      if (!run) return 'gone';
      return run.status?.completionTime ? 'finished' : undefined;
    });
    expect(['finished', 'gone']).toContain(seen);
    await until('the run, its Pod and its inputs ConfigMap to be deleted', async () => {
      const run = await getRun(env, 'ttl-1').then(
        () => true,
        (error: unknown) => !/404/.test(String(error)),
      );
      const configMap = await env.admin.request({ path: path.configMaps('ttl-1-inputs') }).then(
        () => true,
        (error: unknown) => !/404/.test(String(error)),
      );
      const pods = await runPodNames(env, 'ttl-1');
      return !run && !configMap && pods.length === 0 ? true : undefined;
    });
  });

  it('survives a controller restart mid-run: one Pod, every hook record once', async () => {
    await createWorkflow(
      env,
      'restart',
      workflowText(env, { hooks: HOOKS, prompt: '@sleep 3000' }),
    );
    await createIssueRun(env, 'restart-1', 'restart', {
      identifier: 'ENG-11',
      title: 'Restart me',
    });
    await agentRunning(env, 'restart-1');
    await env.controller?.stop();
    await new Promise((resolve) => setTimeout(resolve, 500));
    await env.startController();
    const run = await finished(env, 'restart-1');
    expect(run.status?.phase, run.status?.message).toBe('Succeeded');
    expect(await runPodNames(env, 'restart-1')).toEqual(['restart-1-0-1']);
    expect(run.status?.hooks?.map((hook) => `${hook.name}:${hook.status}`)).toEqual([
      'after_create:completed',
      'before_run:completed',
      'after_run:completed',
      'before_remove:completed',
    ]);
    const events = await hookEvents(env, 'restart-1');
    const records = events.map((event) => `${event.reason}:${event.note.split(' ')[0]}`);
    expect(records).toEqual([
      'HookStarted:after_create',
      'HookSucceeded:after_create',
      'HookStarted:before_run',
      'HookSucceeded:before_run',
      'HookStarted:after_run',
      'HookSucceeded:after_run',
      'HookStarted:before_remove',
      'HookSucceeded:before_remove',
    ]);
    expect(new Set(events.map((event) => event.metadata.name)).size).toBe(8);
  });
});
