// A run Pod is known by its uid and by what it says. Deleting it by hand fails the attempt
// (PodDeleted, never a second Pod for the attempt, never a cancellation nobody asked for),
// and a status patched Finished by hand does not stop the controller following the run.
import { describe, expect, it } from 'vitest';
import type { IssueRun } from '../../src/api/index.js';
import { NAMESPACE, path, until, useOperatorEnv, type OperatorEnv } from './operator-harness.js';

/** Resolves once the run's hook `name` has started (its Event exists). */
const hookStarted = (env: OperatorEnv, run: string, name: string) =>
  until(`${run}'s ${name} to start`, async () => {
    const events = await env.hookEvents(run);
    return events.some((event) => event.reason === 'HookStarted' && event.note.startsWith(name))
      ? true
      : undefined;
  });

describe('run Pods known by uid', () => {
  const env = useOperatorEnv();

  it('fails the attempt PodDeleted when its Pod is deleted, reports the stopped hook as killed, and makes no second Pod', async () => {
    await env.createWorkflow('del', {
      hooks: { before_run: 'echo waiting; sleep 600', after_run: 'echo after-run-ran' },
    });
    await env.createIssueRun('del-1', 'del', { identifier: 'D-1', title: 'Deleted under it' });
    await hookStarted(env, 'del-1', 'before_run');
    const [pod] = await env.runPodNames('del-1');
    expect(pod).toBe('del-1-0-1');
    await env.kubectl('delete', 'pod', 'del-1-0-1', '-n', NAMESPACE, '--wait=false');

    const run: IssueRun = await env.finished('del-1', 120_000);
    expect(run.status?.conditions?.find((c) => c.type === 'Succeeded')).toMatchObject({
      status: 'False',
      reason: 'PodDeleted',
    });
    const beforeRun = run.status?.hooks?.find((hook) => hook.name === 'before_run');
    expect(beforeRun).toMatchObject({ status: 'failed', exitCode: null });
    expect(beforeRun?.error ?? '').toMatch(/^hook killed/);
    // after_run still ran in the grace period, and its output reached the status.
    expect(run.status?.hooks?.find((hook) => hook.name === 'after_run')).toMatchObject({
      status: 'completed',
      output: 'after-run-ran',
    });
    const reasons = (await env.hookEvents('del-1')).map(
      (event) => `${event.reason}:${event.note.split(' ')[0]}`,
    );
    expect(reasons).toContain('HookKilled:before_run');
    expect(reasons.filter((reason) => reason.endsWith(':before_run'))).toHaveLength(2);
    // Well past the old 30 s re-create: still no Pod for the attempt.
    await new Promise((resolve) => setTimeout(resolve, 32_000));
    expect(await env.runPodNames('del-1')).toEqual([]);
    expect(
      (await env.admin.request<IssueRun>({ path: path.issueRuns('del-1') })).status?.reason,
    ).toBe('PodDeleted');
  });

  it('retries a deleted Pod as the next attempt when spec.retries allows, with its own Events', async () => {
    await env.createWorkflow('again', {
      hooks: { before_run: 'echo waiting; sleep 6', after_run: 'echo after' },
      // Long enough that a 200 ms poll on a loaded machine cannot miss the wait.
      maxRetryBackoffMs: 6000,
    });
    await env.createIssueRun(
      'again-1',
      'again',
      { identifier: 'A-1', title: 'Again' },
      {
        retries: 1,
      },
    );
    await hookStarted(env, 'again-1', 'before_run');
    await env.kubectl('delete', 'pod', 'again-1-0-1', '-n', NAMESPACE, '--wait=false');
    const waiting = await until('the retry to be scheduled', async () => {
      const run = await env.admin.request<IssueRun>({ path: path.issueRuns('again-1') });
      if (run.status?.attempt === 2) throw new Error('attempt 2 began before the wait was seen');
      return run.status?.reason === 'RetryScheduled' ? run : undefined;
    });
    expect(waiting.status?.slots?.[0]).toMatchObject({ attempt: 1, reason: 'RetryScheduled' });
    expect(waiting.status?.slots?.[0]?.message).toMatch(/^attempt 1 failed \(PodDeleted: /);

    const run: IssueRun = await env.finished('again-1', 120_000);
    expect(run.status?.phase).toBe('Succeeded');
    expect(run.status?.attempt).toBe(2);
    expect(run.status?.slots?.[0]).toMatchObject({ attempt: 2, podName: 'again-1-0-2' });
    // The history of attempt 2 only: before_run completed this time.
    expect(run.status?.hooks?.find((hook) => hook.name === 'before_run')).toMatchObject({
      status: 'completed',
      output: 'waiting',
    });
    expect(await env.runPodNames('again-1')).toEqual(['again-1-0-2']);
    const events = await env.hookEvents('again-1');
    const attemptOf = (name: string) => name.split('.').at(-1)?.split('-')[1];
    expect(
      events.filter((event) => attemptOf(event.metadata.name) === '1').map((e) => e.reason),
    ).toContain('HookKilled');
    expect(
      events
        .filter((event) => attemptOf(event.metadata.name) === '2')
        .map((event) => `${event.reason}:${event.note.split(' ')[0]}`),
    ).toEqual([
      'HookStarted:before_run',
      'HookSucceeded:before_run',
      'HookStarted:after_run',
      'HookSucceeded:after_run',
    ]);
  });

  it('keeps following a run whose status was patched Finished by hand, and puts it right', async () => {
    await env.createWorkflow('fake', {
      hooks: { after_run: 'echo after-run-ran' },
      prompt: '@sleep 6000\n@write done.txt ok',
    });
    await env.createIssueRun('fake-1', 'fake', { identifier: 'F-1', title: 'Not done yet' });
    await until('fake-1 to be Running', async () => {
      const run = await env.admin.request<IssueRun>({ path: path.issueRuns('fake-1') });
      return run.status?.phase === 'Running' ? true : undefined;
    });
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const forged = ['Succeeded', 'Finished'].map((type) => ({
      type,
      status: 'True',
      reason: 'Succeeded',
      message: 'patched by hand',
      lastTransitionTime: now,
    }));
    await env.kubectl(
      'patch',
      'issuerun',
      'fake-1',
      '-n',
      NAMESPACE,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({ status: { phase: 'Succeeded', conditions: forged } }),
    );
    const run = await until(
      `fake-1 to finish for real`,
      async () => {
        const current = await env.admin.request<IssueRun>({ path: path.issueRuns('fake-1') });
        const afterRun = current.status?.hooks?.find((hook) => hook.name === 'after_run');
        const finished = current.status?.conditions?.find((c) => c.type === 'Finished');
        // after_run's record can reach the status in a progress write while the Pod is still
        // ending: the run is put right once it is Finished by the controller, not by hand.
        return afterRun?.status === 'completed' &&
          finished?.status === 'True' &&
          finished.message !== 'patched by hand'
          ? current
          : undefined;
      },
      60_000,
    ).catch(async (error: unknown) => {
      const current = await env.admin.request<IssueRun>({ path: path.issueRuns('fake-1') });
      throw new Error(`${String(error)}\n${JSON.stringify(current.status, null, 1)}`);
    });
    expect(run.status?.phase).toBe('Succeeded');
    expect(run.status?.conditions?.find((c) => c.type === 'Finished')?.message).not.toBe(
      'patched by hand',
    );
    expect(run.status?.turn).toBe(1);
  });
});
