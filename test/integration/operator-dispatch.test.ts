// The tracker drives the work: a Workflow's issues (here the memory tracker, inline in its
// WORKFLOW.md, so moving an issue is a `kubectl apply`) become IssueRuns the controller
// creates, runs, continues while the issue stays active, and stops and removes once it is
// Done — blockers respected and the cap never exceeded.
import type { V1ObjectMeta } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { IssueRun, Workflow } from '../../src/api/index.js';
import { path, until, useOperatorEnv, type OperatorEnv } from './operator-harness.js';

const board = (first: string) => `  issues:
    - { id: "1", identifier: "LOOP-1", title: "First", state: "${first}", priority: 1 }
    - id: "2"
      identifier: "LOOP-2"
      title: "Second, blocked by the first"
      state: "Todo"
      priority: 2
      blocked_by: [{ id: "1", identifier: "LOOP-1", state: "${first}" }]
    - { id: "3", identifier: "LOOP-3", title: "Already done", state: "Done" }`;

const text = (env: OperatorEnv, first: string) =>
  env.workflowText({
    tracker: board(first),
    agent: '  max_concurrent_agents: 1',
    pollingMs: 1000,
    hooks: { before_run: 'echo hi' },
  });

const runsOf = async (env: OperatorEnv): Promise<IssueRun[]> =>
  (await env.admin.request<{ items: IssueRun[] }>({ path: path.issueRuns() })).items.filter(
    (run) => run.spec.workflowRef.name === 'loop',
  );
const unfinished = (runs: IssueRun[]) =>
  runs.filter(
    (run) => !run.status?.conditions?.some((c) => c.type === 'Finished' && c.status === 'True'),
  );

describe('the tracker drives the work', () => {
  const env = useOperatorEnv();

  it('dispatches, continues, stops on Done, removes the run, then starts the unblocked issue', async () => {
    let maxUnfinished = 0;
    const watch = async () => {
      const runs = await runsOf(env);
      maxUnfinished = Math.max(maxUnfinished, unfinished(runs).length);
      return runs;
    };
    await env.createWorkflow('loop', text(env, 'Todo'));

    // LOOP-1 gets a run; LOOP-2 waits for its blocker; LOOP-3 is Done.
    const first = await until('the run of LOOP-1 to continue into attempt 2', async () => {
      const runs = await watch();
      const run = runs.find((entry) => entry.metadata.name === 'loop-loop-1');
      return (run?.status?.attempt ?? 0) >= 2 ? run : undefined;
    });
    expect(first.spec).toMatchObject({
      continueWhileActive: true,
      issue: { identifier: 'LOOP-1' },
    });
    expect(first.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'Workflow', name: 'loop' });
    expect((await watch()).map((run) => run.metadata.name)).toEqual(['loop-loop-1']);
    const workflow = await env.admin.request<Workflow>({ path: path.workflows('loop') });
    expect(workflow.status?.dispatch?.blocked).toEqual([{ identifier: 'LOOP-2', by: ['LOOP-1'] }]);
    expect(workflow.status?.conditions?.find((c) => c.type === 'TrackerReachable')).toMatchObject({
      status: 'True',
    });

    // LOOP-1 moves to Done: its run is stopped, then removed; LOOP-2 is free to go.
    await env.mergePatch(path.workflows('loop'), { spec: { workflow: text(env, 'Done') } });
    const second = await until('LOOP-1 removed and LOOP-2 dispatched', async () => {
      const runs = await watch();
      const names = runs.map((run) => run.metadata.name);
      return !names.includes('loop-loop-1') && names.includes('loop-loop-2') ? runs : undefined;
    });
    expect(second.map((run) => run.spec.issue.identifier)).toEqual(['LOOP-2']);
    await until('LOOP-2 to run', async () => {
      const runs = await watch();
      return runs.some((run) => (run.status?.attempt ?? 0) >= 1 && run.status?.podName)
        ? true
        : undefined;
    });
    // Never more unfinished runs than agent.max_concurrent_agents.
    expect(maxUnfinished).toBe(1);
  });

  it('an issue dispatched again under its old run name never meets the objects of the run before', async () => {
    await env.createWorkflow('again', {
      tracker: '  issues:\n    - { id: "a1", identifier: "AGN-1", title: "Again", state: "Todo" }',
      pollingMs: 3000,
      // A run that keeps working until it is cancelled.
      hooks: { before_run: 'sleep 600' },
    });
    const name = 'again-agn-1';
    const read = () =>
      env.admin.request<IssueRun>({ path: path.issueRuns(name) }).catch(() => undefined);
    const first = await until('the run of AGN-1 to start', async () => {
      const run = await read();
      return run?.status?.podName ? run : undefined;
    });
    // Cancelled while its issue stays active: the poller removes the finished run and
    // dispatches the issue afresh, under the same name.
    await env.mergePatch(path.issueRuns(name), { spec: { cancelRequested: true } });
    const reasons = new Set<string>();
    const second = await until('AGN-1 dispatched again, and its Pod made', async () => {
      const run = await read();
      if (!run || run.metadata.uid === first.metadata.uid) return undefined;
      reasons.add(run.status?.reason ?? '');
      for (const condition of run.status?.conditions ?? []) reasons.add(condition.reason ?? '');
      return run.status?.podName ? run : undefined;
    });
    // Not even for a moment did it wait on objects left by the first run.
    expect([...reasons]).not.toContain('NameConflict');
    const inputs = await env.admin.request<{ metadata: V1ObjectMeta }>({
      path: path.configMaps(`${name}-inputs`),
    });
    expect(inputs.metadata.ownerReferences?.map((owner) => owner.uid)).toEqual([
      second.metadata.uid,
    ]);
    await env.admin.request({ method: 'DELETE', path: path.workflows('again') });
  });

  it.each([
    ['an unknown tracker kind', { trackerKind: 'trello' }, {}, 'unsupported_tracker_kind'],
    [
      'a Secret that is not there',
      { trackerKind: 'linear', tracker: '  project_slug: abc' },
      { trackerSecretRef: { name: 'nowhere' } },
      'missing_tracker_secret',
    ],
    [
      'a tracker that does not answer',
      {
        trackerKind: 'github',
        tracker: '  repository: acme/app\n  endpoint: http://127.0.0.1:9\n  api_key: x',
      },
      {},
      'tracker_request',
    ],
  ])(
    '%s: TrackerReachable=False with the reason, no runs, the controller up',
    async (_name, options, extra, reason) => {
      const name = `bad-${reason.replace(/_/g, '-')}`;
      await env.createWorkflow(name, { ...options, pollingMs: 1000 }, extra);
      const workflow = await until(`${name}'s TrackerReachable condition`, async () => {
        const found = await env.admin.request<Workflow>({ path: path.workflows(name) });
        const condition = found.status?.conditions?.find((c) => c.type === 'TrackerReachable');
        return condition ? found : undefined;
      });
      expect(workflow.status?.conditions?.find((c) => c.type === 'TrackerReachable')).toMatchObject(
        {
          status: 'False',
          reason,
        },
      );
      expect(workflow.status?.dispatch?.lastError).toBeTruthy();
      const runs = await env.admin.request<{ items: IssueRun[] }>({ path: path.issueRuns() });
      expect(runs.items.filter((run) => run.spec.workflowRef.name === name)).toEqual([]);
      expect(env.controller?.manager.isLeader() ?? true).toBe(true);
    },
  );

  it('a controller restarted mid-dispatch makes no second IssueRun and keeps the retry schedule', async () => {
    const issues = `  issues:
    - { id: "r1", identifier: "RST-1", title: "One", state: "Todo" }
    - { id: "r2", identifier: "RST-2", title: "Two", state: "Todo" }
    - { id: "r3", identifier: "RST-3", title: "Three", state: "Todo" }`;
    await env.createWorkflow('rst', {
      tracker: issues,
      agent: '  max_concurrent_agents: 3\n  max_retry_backoff_ms: 4000',
      pollingMs: 1000,
      hooks: { before_run: 'echo failing; exit 1' },
    });
    const ofRst = async () =>
      (await env.admin.request<{ items: IssueRun[] }>({ path: path.issueRuns() })).items.filter(
        (run) => run.spec.workflowRef.name === 'rst',
      );
    await until('the first IssueRun', async () => ((await ofRst()).length >= 1 ? true : undefined));
    await env.controller?.stop();
    await env.startController();
    // Where each run stands, said when a wait times out (a probe's last error is in its message).
    const standing = (runs: IssueRun[]) =>
      runs
        .map((run) => {
          const slot = run.status?.slots?.[0];
          return `${run.metadata.name}: ${run.status?.reason ?? 'no status'}, attempt ${slot?.attempt ?? '-'} (${slot?.reason ?? '-'}: ${slot?.message ?? ''})`;
        })
        .join('; ');
    const waiting = await until('every run waiting to retry', async () => {
      const runs = await ofRst();
      if (runs.length === 3 && runs.every((run) => run.status?.reason === 'RetryScheduled'))
        return runs;
      throw new Error(`${runs.length} runs: ${standing(runs)}`);
    });
    const planned = new Map(
      waiting.map((run) => [run.metadata.name, run.status?.slots?.[0]?.nextAttemptTime ?? '']),
    );
    // Restart again while they wait: the schedule is read back from status, not made anew.
    await env.controller?.stop();
    await env.startController();
    const retried = await until('every run on attempt 2', async () => {
      const runs = await ofRst();
      if (runs.every((run) => (run.status?.slots?.[0]?.attempt ?? 0) >= 2)) return runs;
      throw new Error(standing(runs));
    });
    expect(retried.map((run) => run.metadata.name).sort()).toEqual([
      'rst-rst-1',
      'rst-rst-2',
      'rst-rst-3',
    ]);
    for (const run of retried) {
      const pods = await env.runPodNames(run.metadata.name ?? '');
      // One Pod per attempt, never two for the same one.
      expect(new Set(pods).size).toBe(pods.length);
      expect(pods.filter((pod) => pod.endsWith('-0-1'))).toHaveLength(
        pods.includes(`${run.metadata.name}-0-1`) ? 1 : 0,
      );
      // Attempt 2 started when the schedule written before the restart said, not earlier.
      const second = await env.admin.request<{ metadata: { creationTimestamp: string } }>({
        path: `${path.pods}/${run.metadata.name}-0-2`,
      });
      const due = Date.parse(planned.get(run.metadata.name) ?? '');
      expect(Number.isFinite(due)).toBe(true);
      expect(Date.parse(second.metadata.creationTimestamp)).toBeGreaterThanOrEqual(due - 1000);
    }
  });
});
