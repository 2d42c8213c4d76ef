// The inbox controller against an in-memory tracker and the shared status store: it records
// a request from its annotation, comments once (finding its comment after a lost status
// write), reads the issue when due or woken, acts on /approve and /stop, records a tracker
// that refuses its comment, turns a tracker outage into a status with a backoff while
// Kubernetes decisions still count, and leaves alone Workflows without agent.approvals.
import { describe, expect, it } from 'vitest';
import {
  inboxRequestAnnotation,
  type InboxRequest,
  type IssueRun,
  type IssueRunStatus,
  type Workflow,
} from '../../../../src/api/index.js';
import { postMark } from '../../../../src/controller/inbox/act.js';
import {
  createInboxReconciler,
  INBOX_RETRY_BASE_MS,
} from '../../../../src/controller/inbox/reconciler.js';
import { createRunStatusStore } from '../../../../src/controller/issuerun/status-store.js';
import type { RunnableWorkflow } from '../../../../src/controller/shared/config-snapshot.js';
import { ISSUERUNS, WORKFLOWS } from '../../../../src/controller/shared/resources.js';
import type { TrackerComment, TrackerWriter } from '../../../../src/tracker/types.js';
import { loadWorkflowText } from '../../../../src/template/load-workflow.js';
import {
  APPROVALS_DEFAULTS,
  type ApprovalsConfig,
} from '../../../../src/workflow/approvals-config.js';
import { LorenzError } from '../../../../src/workflow/errors.js';
import { FakeInformer, FakeKubeClient } from '../../../support/fakes/controller.js';
import {
  NS,
  RUN,
  T0,
  at,
  issueRun,
  startedStatus,
  workflow,
  workflowText,
  permissionRequest,
} from '../../../support/fakes/objects.js';

const KEY = `${NS}/${RUN}`;
const POLL = 10_000;

const approvals = (extra: Partial<ApprovalsConfig> = {}): ApprovalsConfig => ({
  ...APPROVALS_DEFAULTS,
  pollIntervalMs: POLL,
  rules: [],
  approvers: ['alice'],
  ...extra,
});

function runnable(config: ApprovalsConfig | null): RunnableWorkflow {
  const loaded = loadWorkflowText(workflowText(), 'test');
  const agent = { ...loaded.config.agent, approvals: config };
  return { text: '', digest: 'd', loaded: { ...loaded, config: { ...loaded.config, agent } } };
}

/** A tracker with comments that have times, which can refuse to read or to write. */
class Tracker implements Pick<TrackerWriter, 'listComments' | 'comment'> {
  readonly comments: TrackerComment[] = [];
  readonly posted: string[] = [];
  reads = 0;
  failRead = false;
  failWrite = false;
  constructor(private readonly clock: () => Date) {}
  add(body: string, author = 'alice'): void {
    const created = this.clock().toISOString();
    const id = String(this.comments.length + 1);
    this.comments.push({ id, body, author, created_at: created, updated_at: created });
  }
  async listComments(): Promise<TrackerComment[]> {
    this.reads += 1;
    if (this.failRead) throw new LorenzError('tracker_status', 'tracker answered 502');
    return [...this.comments];
  }
  async comment(_issueId: string, body: string): Promise<TrackerComment> {
    if (this.failWrite) throw new LorenzError('tracker_status', 'tracker answered 403');
    this.posted.push(body);
    this.add(body, 'lorenz-bot');
    return this.comments.at(-1) as TrackerComment;
  }
}

const request = (id = 'a1-s0-1', extra: Partial<InboxRequest> = {}): InboxRequest =>
  permissionRequest({ id, title: 'Run git push', command: 'git push', ...extra });

function setUp(
  config: ApprovalsConfig | null = approvals(),
  status: IssueRunStatus = startedStatus(1, 'Running'),
) {
  const client = new FakeKubeClient();
  const run = issueRun({ status });
  run.spec.issue.id = 'issue-1';
  const issueRuns = new FakeInformer<IssueRun>(ISSUERUNS, [run]);
  const workflows = new FakeInformer<Workflow>(WORKFLOWS, [workflow()]);
  let now = T0;
  const clock = () => now;
  const store = createRunStatusStore({ client, issueRuns, now: clock, progressIntervalMs: 0 });
  const tracker = new Tracker(clock);
  const events: string[] = [];
  const patches: Record<string, unknown>[] = [];
  let writer: TrackerWriter | undefined = tracker as unknown as TrackerWriter;
  const reconciler = createInboxReconciler({
    issueRuns,
    workflows,
    store,
    loadWorkflowConfig: async () => runnable(config),
    trackerWriter: async () => writer,
    patchRun: async (_namespace, _name, patch) => {
      patches.push(patch);
      // What the apiserver does with the merge patch, as the cache would see it.
      const current = issueRuns.get(NS, RUN) as IssueRun;
      const annotations = { ...current.metadata.annotations };
      const asked = (patch.metadata as { annotations: Record<string, string | null> }).annotations;
      for (const [key, value] of Object.entries(asked)) {
        if (value === null) delete annotations[key];
        else annotations[key] = value;
      }
      const spec = patch.spec ? { ...current.spec, ...patch.spec } : current.spec;
      issueRuns.put({ ...current, metadata: { ...current.metadata, annotations }, spec });
    },
    events: async (list) => void events.push(...list.map((e) => `${e.reason}: ${e.note}`)),
    now: clock,
  });
  const current = () => issueRuns.get(NS, RUN) as IssueRun;
  const inbox = () => store.fresh(KEY, current()).status?.inbox;
  const ask = (...requests: InboxRequest[]) => {
    const annotations = { ...current().metadata.annotations };
    for (const r of requests) annotations[inboxRequestAnnotation(r.id)] = JSON.stringify(r);
    issueRuns.put({ ...current(), metadata: { ...current().metadata, annotations } });
  };
  const advance = (ms: number) => {
    now = new Date(now.getTime() + ms);
  };
  const noWriter = () => {
    writer = undefined;
  };
  return {
    client,
    reconciler,
    tracker,
    events,
    patches,
    inbox,
    ask,
    advance,
    current,
    issueRuns,
    noWriter,
  };
}

describe('a permission request', () => {
  it('is recorded, posted once, read back and approved by comment', async () => {
    const t = setUp();
    t.ask(request());
    expect(await t.reconciler.reconcile(KEY)).toEqual({ requeueAfter: POLL });
    expect(t.inbox()?.pending).toEqual([
      expect.objectContaining({ id: 'a1-s0-1', commentId: '1', commentedAt: at(0) }),
    ]);
    expect(t.tracker.posted).toHaveLength(1);
    expect(t.tracker.posted[0]).toContain(postMark('request:a1-s0-1'));
    expect(t.events).toEqual([
      expect.stringMatching(/^ApprovalRequested: permission request a1-s0-1/),
    ]);
    expect(t.patches).toEqual([
      { metadata: { annotations: { [inboxRequestAnnotation('a1-s0-1')]: null } } },
    ]);
    expect(t.current().metadata.annotations).toEqual({});

    // Not due yet: the issue is not read again before the poll interval.
    t.advance(1000);
    t.tracker.add('/approve');
    expect(await t.reconciler.reconcile(KEY)).toEqual({ requeueAfter: POLL - 1000 });
    expect(t.tracker.reads).toBe(1);

    t.advance(POLL);
    await t.reconciler.reconcile(KEY);
    expect(t.tracker.reads).toBe(2);
    expect(t.inbox()?.pending).toEqual([]);
    expect(t.inbox()?.decided).toEqual([
      expect.objectContaining({
        requestId: 'a1-s0-1',
        verdict: 'approve',
        by: 'alice',
        via: 'comment',
        commentId: '2',
      }),
    ]);
    expect(t.tracker.posted).toHaveLength(2);
    expect(t.events.at(-1)).toMatch(
      /^ApprovalGranted: permission request a1-s0-1 approved by alice/,
    );
    // Nothing waits and steering is off: no more looks.
    t.advance(POLL);
    expect(await t.reconciler.reconcile(KEY)).toBeUndefined();
    expect(t.tracker.reads).toBe(2);
  });

  it("an /approve by Lorenz's own tracker user (an agent's tool comment) is not acted on", async () => {
    const t = setUp(approvals({ approvers: [] }));
    t.ask(request());
    await t.reconciler.reconcile(KEY);
    t.advance(1000);
    t.tracker.add('/approve', 'lorenz-bot');
    t.reconciler.wake(KEY);
    await t.reconciler.reconcile(KEY);
    expect(t.inbox()?.pending).toHaveLength(1);
    expect(t.inbox()?.decided).toEqual([]);
  });

  it('a wake reads the issue at once', async () => {
    const t = setUp();
    t.ask(request());
    await t.reconciler.reconcile(KEY);
    t.advance(1000);
    t.tracker.add('/deny not now');
    t.reconciler.wake(KEY);
    await t.reconciler.reconcile(KEY);
    expect(t.inbox()?.decided?.[0]).toMatchObject({ verdict: 'deny', reason: 'not now' });
  });

  it('a request comment posted before a lost status write is found, not posted again', async () => {
    const first = setUp();
    first.ask(request());
    await first.reconciler.reconcile(KEY);
    const again = setUp();
    again.tracker.comments.push(...first.tracker.comments);
    again.ask(request());
    await again.reconciler.reconcile(KEY);
    expect(again.tracker.posted).toEqual([]);
    expect(again.inbox()?.pending?.[0]?.commentId).toBe('1');
  });

  it('a tracker that refuses the comment: recorded with one Event, tried again, and the deadline still holds', async () => {
    const t = setUp();
    t.tracker.failWrite = true;
    t.ask(request());
    await t.reconciler.reconcile(KEY);
    expect(t.inbox()?.pending?.[0]?.commentError).toBe('tracker answered 403');
    expect(t.events.filter((e) => e.startsWith('TrackerCommentFailed'))).toHaveLength(1);
    t.advance(POLL);
    await t.reconciler.reconcile(KEY);
    expect(t.events.filter((e) => e.startsWith('TrackerCommentFailed'))).toHaveLength(1);
    t.tracker.failWrite = false;
    t.advance(POLL);
    await t.reconciler.reconcile(KEY);
    expect(t.inbox()?.pending?.[0]).toMatchObject({ commentId: '1' });
    expect(t.inbox()?.pending?.[0]?.commentError).toBeUndefined();
    // The deadline: a look then times it out, and says so.
    t.advance(60_000);
    expect(await t.reconciler.reconcile(KEY)).toBeUndefined();
    expect(t.inbox()?.decided?.[0]).toMatchObject({ verdict: 'timeout', via: 'timeout' });
    expect(t.events.at(-1)).toMatch(/^ApprovalTimedOut/);
  });

  it('requeues at the deadline when it comes before the next read', async () => {
    const t = setUp();
    t.ask(request('a1-s0-1', { deadline: at(4000) }));
    expect(await t.reconciler.reconcile(KEY)).toEqual({ requeueAfter: 4000 });
  });

  it('a Workflow whose tracker cannot write: the refusal is recorded, never thrown', async () => {
    const t = setUp();
    t.noWriter();
    t.ask(request());
    await t.reconciler.reconcile(KEY);
    expect(t.inbox()?.pending?.[0]?.commentError).toMatch(/cannot write/);
    expect(t.inbox()?.reason).toBe('TrackerUnavailable');
  });
});

describe('failures and guards', () => {
  it('a tracker outage is a status and a backoff; a decision in Kubernetes still counts', async () => {
    const t = setUp();
    t.tracker.failRead = true;
    t.ask(request());
    expect(await t.reconciler.reconcile(KEY)).toEqual({ requeueAfter: INBOX_RETRY_BASE_MS });
    expect(t.inbox()).toMatchObject({
      reason: 'TrackerUnavailable',
      message: "the issue's comments cannot be read: tracker answered 502",
    });
    expect(t.inbox()?.pending).toHaveLength(1);
    t.advance(1000);
    expect(await t.reconciler.reconcile(KEY)).toEqual({ requeueAfter: 2 * INBOX_RETRY_BASE_MS });
    t.issueRuns.put({
      ...t.current(),
      spec: {
        ...t.current().spec,
        decisions: [{ requestId: 'a1-s0-1', verdict: 'approve', by: 'kube:ops' }],
      },
    });
    expect(await t.reconciler.reconcile(KEY)).toBeUndefined();
    expect(t.inbox()?.decided?.[0]).toMatchObject({
      verdict: 'approve',
      via: 'kubernetes',
      by: 'kube:ops',
    });
  });

  it.each<[string, ApprovalsConfig | null, IssueRunStatus | undefined]>([
    ['a Workflow without agent.approvals', null, undefined],
  ])('leaves alone %s', async (_name, config, status) => {
    const t = setUp(config, status);
    t.ask(request());
    expect(await t.reconciler.reconcile(KEY)).toBeUndefined();
    expect(t.tracker.reads).toBe(0);
    expect(t.patches).toEqual([]);
    expect(t.reconciler.approvalsOf(NS, 'wf')).toBeNull();
  });

  it('a deleted run is forgotten', async () => {
    const t = setUp();
    t.issueRuns.replaceAll([]);
    expect(await t.reconciler.reconcile(KEY)).toBeUndefined();
  });
});

describe('steering', () => {
  it('reads a running run every poll interval, and /stop cancels it', async () => {
    const t = setUp(approvals({ steering: true }));
    expect(await t.reconciler.reconcile(KEY)).toEqual({ requeueAfter: POLL });
    expect(t.reconciler.approvalsOf(NS, 'wf')).toEqual({ steering: true });
    t.advance(POLL);
    t.tracker.add('/steer use the v2 API');
    t.tracker.add('/stop');
    await t.reconciler.reconcile(KEY);
    expect(t.inbox()?.steers).toEqual([
      expect.objectContaining({ seq: 1, text: 'use the v2 API', by: 'alice' }),
    ]);
    expect(t.inbox()?.stopRequested).toBe(true);
    expect(t.patches.at(-1)).toEqual({
      metadata: { annotations: { 'lorenz.dev/stop-note': '/stop by alice on ENG-1' } },
      spec: { cancelRequested: true },
    });
    expect(t.current().spec.cancelRequested).toBe(true);
    expect(t.events.map((e) => e.split(':')[0])).toEqual(['SteerReceived', 'StopRequested']);
  });
});
