import { describe, expect, it } from 'vitest';
import type { IssueRun } from '../../src/api/index.js';
import {
  FOUR_HOOKS_SUCCEEDED,
  hookRecords,
  path,
  until,
  useOperatorEnv,
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
    const events = await env.hookEvents(run);
    return events.some(
      (event) => event.reason === 'HookSucceeded' && event.note.startsWith('before_run'),
    )
      ? true
      : undefined;
  });

interface Deletion {
  /** The run as it was when deleted: a DELETED watch event carries the object's last state. */
  last: IssueRun;
  /** When the event arrived: no earlier than the deletion itself. */
  seenAt: number;
}

/**
 * Watches for the run's deletion. The watch starts from a list's resourceVersion before the
 * run is created, so the DELETED event is not missed however soon after finishing the run is
 * deleted (polling could miss the finished state altogether).
 */
async function watchDeletion(
  env: OperatorEnv,
  name: string,
  ms = 90_000,
): Promise<{ deleted: Promise<Deletion> }> {
  const list = await env.admin.request<{ metadata: { resourceVersion: string } }>({
    path: path.issueRuns(),
  });
  const abort = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const deleted = new Promise<Deletion>((resolve, reject) => {
    timer = setTimeout(
      () => reject(new Error(`timed out waiting for IssueRun ${name} to be deleted`)),
      ms,
    );
    env.admin
      .stream({
        path: path.issueRuns(),
        query: {
          watch: true,
          resourceVersion: list.metadata.resourceVersion,
          fieldSelector: `metadata.name=${name}`,
        },
        signal: abort.signal,
        onLine: (line) => {
          const event = JSON.parse(line) as { type: string; object: IssueRun };
          if (event.type === 'ERROR') reject(new Error(`watch on IssueRun ${name}: ${line}`));
          if (event.type === 'DELETED') resolve({ last: event.object, seenAt: Date.now() });
        },
      })
      // The abort below ends the stream once the promise is settled; rejecting then is a no-op.
      .then(
        () => reject(new Error(`the watch on IssueRun ${name} ended before its deletion`)),
        reject,
      );
  });
  return {
    deleted: deleted.finally(() => {
      clearTimeout(timer);
      abort.abort();
    }),
  };
}

describe('IssueRun lifecycle: cancellation and controller restarts', () => {
  const env = useOperatorEnv();

  it('cancels a run mid-turn: the Pod is stopped, after_run still runs, Succeeded=False Cancelled', async () => {
    await env.createWorkflow('long', { hooks: HOOKS, prompt: '@sleep 60000' });
    await env.createIssueRun('long-1', 'long', { identifier: 'ENG-10', title: 'Long work' });
    await agentRunning(env, 'long-1');
    await env.mergePatch(path.issueRuns('long-1'), { spec: { cancelRequested: true } });
    const run = await env.finished('long-1', 60_000).catch(async (error: unknown) => {
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
      output: 'after-run-ran',
    });
    const events = await env.hookEvents('long-1');
    expect(
      events.some(
        (event) => event.reason === 'HookSucceeded' && event.note.startsWith('after_run'),
      ),
    ).toBe(true);
    await until('the run Pod to be gone', async () =>
      (await env.runPodNames('long-1')).length === 0 ? true : undefined,
    );
  });

  it('ends a multi-turn run after the current turn when spec.issue.state turns terminal', async () => {
    const maxTurns = 5;
    const sleeps = ['@sleep 3000', '@turn 2: @sleep 3000', '@turn 3: @sleep 3000'];
    await env.createWorkflow('state', { hooks: HOOKS, prompt: sleeps.join('\n'), maxTurns });
    await env.createIssueRun('state-1', 'state', { identifier: 'ENG-12', title: 'Done soon' });
    await agentRunning(env, 'state-1');
    await env.mergePatch(path.issueRuns('state-1'), { spec: { issue: { state: 'Done' } } });
    const run = await env.finished('state-1');
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
    const ttlSeconds = 1;
    await env.createWorkflow('ttl', {}, { ttlSecondsAfterFinished: ttlSeconds });
    const { deleted } = await watchDeletion(env, 'ttl-1');
    await env.createIssueRun('ttl-1', 'ttl', { identifier: 'ENG-13', title: 'Short-lived' });
    const { last, seenAt } = await deleted;
    // It was deleted as a finished run: its last state has completed.
    const finishedCondition = last.status?.conditions?.find((c) => c.type === 'Finished');
    expect(finishedCondition?.status, JSON.stringify(last.status)).toBe('True');
    const completionTime = last.status?.completionTime;
    expect(completionTime).toBeDefined();
    // And not before its ttl. completionTime is in whole seconds, rounded down, on the clock
    // this process shares with the in-process controller, and a deletion is seen only after
    // it happened: a deletion seen before completionTime + ttl came too early.
    expect(seenAt).toBeGreaterThanOrEqual(Date.parse(completionTime ?? '') + ttlSeconds * 1000);
    await until('the run, its Pod and its inputs ConfigMap to be deleted', async () => {
      const run = await env.getRun('ttl-1').then(
        () => true,
        (error: unknown) => !/404/.test(String(error)),
      );
      const configMap = await env.admin.request({ path: path.configMaps('ttl-1-inputs') }).then(
        () => true,
        (error: unknown) => !/404/.test(String(error)),
      );
      const pods = await env.runPodNames('ttl-1');
      return !run && !configMap && pods.length === 0 ? true : undefined;
    });
  });

  it('survives a controller restart mid-run: one Pod, every hook record once', async () => {
    await env.createWorkflow('restart', { hooks: HOOKS, prompt: '@sleep 3000' });
    await env.createIssueRun('restart-1', 'restart', {
      identifier: 'ENG-11',
      title: 'Restart me',
    });
    await agentRunning(env, 'restart-1');
    await env.controller?.stop();
    await new Promise((resolve) => setTimeout(resolve, 500));
    await env.startController();
    const run = await env.finished('restart-1');
    expect(run.status?.phase, run.status?.message).toBe('Succeeded');
    expect(await env.runPodNames('restart-1')).toEqual(['restart-1-0-1']);
    expect(run.status?.hooks?.map((hook) => `${hook.name}:${hook.status}`)).toEqual([
      'after_create:completed',
      'before_run:completed',
      'after_run:completed',
      'before_remove:completed',
    ]);
    const events = await env.hookEvents('restart-1');
    expect(hookRecords(events)).toEqual(FOUR_HOOKS_SUCCEEDED);
    expect(new Set(events.map((event) => event.metadata.name)).size).toBe(8);
  });
});
