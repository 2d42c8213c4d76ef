// A run's life and its Workflow's in Events, against the real apiserver: a run that fails,
// retries and succeeds; an issue dispatched and done; a bad edit; a tracker lost and back.
// Each Event is written once, across controller restarts in between.
import { describe, expect, it } from 'vitest';
import type { IssueRun, Workflow } from '../../src/api/index.js';
import { path, until, useOperatorEnv, workflowText, type EventView } from './operator-harness.js';

// Attempt 1 fails (the agent exits), attempt 2 works.
const PROMPT = '{% if attempt == 2 %}@write done.txt ok{% else %}@exit 3{% endif %}';
const board = (state: string) =>
  `  issues:\n    - { id: "l1", identifier: "LIFE-1", title: "Life", state: "${state}" }`;

describe('Events of a run’s life and of its Workflow', () => {
  const env = useOperatorEnv();

  const text = (options: Parameters<typeof workflowText>[1] = {}) =>
    env.workflowText({
      tracker: board('Todo'),
      prompt: PROMPT,
      pollingMs: 500,
      maxRetryBackoffMs: 1000,
      // Long enough that the controller sees each attempt's Pod running.
      hooks: { before_run: 'sleep 1' },
      ...options,
    });
  const setText = (workflow: string) =>
    env.admin.request({
      method: 'PATCH',
      path: path.workflows('life'),
      patchType: 'merge',
      body: { spec: { workflow } },
    });
  const restart = async () => {
    await env.controller?.stop();
    await env.startController();
  };
  const condition = async (type: string, status: string) =>
    until(`the Workflow's ${type}=${status}`, async () => {
      const found = await env.admin.request<Workflow>({ path: path.workflows('life') });
      const seen = found.status?.conditions?.find((entry) => entry.type === type);
      return seen?.status === status ? true : undefined;
    });
  const events = async (): Promise<EventView[]> =>
    (await env.admin.request<{ items: EventView[] }>({ path: path.events })).items;
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it('writes each once: started, retry, end; dispatched, rejected, tracker lost and back', async () => {
    await env.createWorkflow('life', text());
    await env.createIssueRun(
      'life-1',
      'life',
      { identifier: 'H-1', title: 'By hand' },
      { retries: 1 },
    );
    const run = await env.finished('life-1', 120_000);
    expect(run.status?.phase).toBe('Succeeded');

    // The dispatched run: once its attempt 2 succeeded, LIFE-1 goes Done and the run stops.
    await until('the dispatched run’s attempt 2 to succeed', async () => {
      const pod = await env.admin
        .request<{ status?: { phase?: string } }>({ path: `${path.pods}/life-life-1-0-2` })
        .catch(() => undefined);
      return pod?.status?.phase === 'Succeeded' ? true : undefined;
    });
    const dispatched = await env.admin.request<IssueRun>({ path: path.issueRuns('life-life-1') });
    await restart();
    await setText(text({ tracker: board('Done') }));
    await until('the dispatched run removed', async () => {
      const runs = await env.admin.request<{ items: IssueRun[] }>({ path: path.issueRuns() });
      return runs.items.some((entry) => entry.metadata.name === 'life-life-1') ? undefined : true;
    });

    await setText(text({ tracker: board('Done'), maxTurns: -5 }));
    await condition('ConfigValid', 'False');
    await restart();
    await sleep(1500);

    const unreachable = {
      trackerKind: 'github',
      tracker: '  repository: acme/app\n  endpoint: http://127.0.0.1:9\n  api_key: x',
    };
    await setText(text(unreachable));
    await condition('TrackerReachable', 'False');
    await sleep(1500);
    await restart();
    await sleep(1500);
    await setText(text({ tracker: board('Done') }));
    await condition('TrackerReachable', 'True');
    await restart();
    await sleep(1500);

    const all = await events();
    const on = (uid: string | undefined) =>
      all
        .filter((event) => event.regarding.uid === uid && !event.reason.startsWith('Hook'))
        .filter((event) => event.reason !== 'ToolCalled' && !event.reason.startsWith('Git'))
        .map((event) => `${event.reason}: ${event.note}`)
        .sort();
    expect(on(run.metadata.uid)).toEqual([
      'AttemptStarted: attempt 1 of slot 0 started: Pod life-1-0-1 is running',
      'AttemptStarted: attempt 2 of slot 0 started: Pod life-1-0-2 is running',
      expect.stringMatching(
        /^RetryScheduled: slot 0: attempt 1 failed \(.*\); attempt 2 starts at /,
      ),
      'RunSucceeded: Succeeded: the run succeeded',
    ]);
    // The dispatched run continued after attempt 2; its end is the issue's completion.
    const ofDispatched = on(dispatched.metadata.uid);
    expect(ofDispatched.filter((entry) => entry.startsWith('Run'))).toEqual([
      "RunSucceeded: IssueCompleted: LIFE-1 reached Done (a terminal state) after the run's work: attempt 2 succeeded",
    ]);
    const workflow = await env.admin.request<Workflow>({ path: path.workflows('life') });
    const ofWorkflow = on(workflow.metadata.uid);
    expect(ofWorkflow.filter((entry) => !entry.startsWith('ConfigRejected'))).toEqual([
      'IssueDispatched: dispatched LIFE-1 as IssueRun life-life-1',
      expect.stringMatching(
        /^TrackerReachable: the tracker answers again \(it failed since .*: tracker_request\)$/,
      ),
      expect.stringMatching(/^TrackerUnreachable: tracker_request: /),
    ]);
    expect(ofWorkflow.filter((entry) => entry.startsWith('ConfigRejected'))).toEqual([
      expect.stringMatching(/^ConfigRejected: ConfigInvalid: .*max_turns/),
    ]);
    await env.admin.request({ method: 'DELETE', path: path.workflows('life') });
  }, 300_000);
});
