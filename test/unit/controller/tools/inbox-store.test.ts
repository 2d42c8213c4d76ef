// The controller's InboxStore for the tools gateway: requests to IssueRun annotations by merge
// patch (once per id, with the uid as precondition), decisions and steers from the informer's
// cache, waits that end on the run's next update and leave nothing behind, steer marks, and
// the policy Events.
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import {
  InboxReasons,
  inboxRequestAnnotation,
  inboxSteeredAnnotation,
  type InboxDecision,
  type InboxStatus,
  type IssueRun,
} from '../../../../src/api/index.js';
import { createInboxStore } from '../../../../src/controller/tools/inbox-store.js';
import { runEventWriter, type RunEvent } from '../../../../src/controller/tools/run-event.js';
import { ISSUERUNS } from '../../../../src/controller/shared/resources.js';
import type { VerifiedRun } from '../../../../src/tools/index.js';
import { FakeInformer, FakeKubeClient, failWith } from '../../../support/fakes/controller.js';
import { inboxRequest } from '../../../support/fakes/objects.js';

/** An informer whose updates reach the handlers, as a watch event would. */
class UpdatingInformer extends FakeInformer<IssueRun> {
  private updates: Array<(previous: IssueRun, run: IssueRun) => void> = [];
  override onUpdate(handler?: (previous: IssueRun, run: IssueRun) => void): void {
    if (handler) this.updates.push(handler);
  }
  update(run: IssueRun): void {
    const previous = this.get(run.metadata.namespace, run.metadata.name ?? '') ?? run;
    this.put(run);
    for (const handler of this.updates) handler(previous, run);
  }
}

const issueRun = (
  inbox: InboxStatus = {},
  annotations: Record<string, string> = {},
  name = 'app-eng-42',
): IssueRun =>
  ({
    apiVersion: 'lorenz.dev/v1alpha1',
    kind: 'IssueRun',
    metadata: { name, namespace: 'team-a', uid: 'uid-1', annotations },
    spec: { workflowRef: { name: 'app' }, issue: { id: 'uuid-42', identifier: 'ENG-42' } },
    status: { inbox },
  }) as unknown as IssueRun;

const verified = {
  namespace: 'team-a',
  run: 'app-eng-42',
  attempt: 1,
  resolved: { uid: 'uid-1' },
} as VerifiedRun;

const request = inboxRequest();
const decision: InboxDecision = {
  requestId: 'a1-s0-1',
  verdict: 'deny',
  reason: 'no',
  via: 'kubernetes',
  at: '2026-12-02T10:01:00Z',
};
const steer = (seq: number) => ({ seq, text: `do ${seq}`, at: '2026-12-02T10:00:00Z' });

function setup(run: IssueRun = issueRun()) {
  const informer = new UpdatingInformer(ISSUERUNS, [run]);
  const client = new FakeKubeClient();
  const events: RunEvent[] = [];
  const store = createInboxStore({ client, issueRuns: informer, event: (e) => events.push(e) });
  return { informer, client, events, store };
}

describe('storeRequest', () => {
  it('patches the request annotation once, with the uid as precondition', async () => {
    const { client, store } = setup();
    await store.storeRequest(verified, request);
    await store.storeRequest(verified, { ...request, title: 'another version' });
    expect(client.summaries()).toEqual(['PATCH issueruns/app-eng-42']);
    const [patch] = client.actions;
    expect(patch?.body).toEqual({
      metadata: {
        uid: 'uid-1',
        annotations: { [inboxRequestAnnotation('a1-s0-1')]: JSON.stringify(request) },
      },
    });
  });

  it.each([
    ['annotated', issueRun({}, { [inboxRequestAnnotation('a1-s0-1')]: '{}' })],
    ['pending', issueRun({ pending: [request] })],
    ['decided', issueRun({ decided: [decision] })],
  ])('writes nothing for a request already %s', async (_case, run) => {
    const { client, store } = setup(run);
    await store.storeRequest(verified, request);
    expect(client.summaries()).toEqual([]);
  });

  it('fails when the apiserver refuses (the gateway answers 503), and tries again next time', async () => {
    const { client, store } = setup();
    client.answer(failWith('PATCH issueruns/*', 409));
    await expect(store.storeRequest(verified, request)).rejects.toThrow();
    client.answer({ match: 'PATCH issueruns/*', answer: { body: {} } });
    await store.storeRequest(verified, request);
    expect(client.summaries()).toEqual([
      'PATCH issueruns/app-eng-42',
      'PATCH issueruns/app-eng-42',
    ]);
  });
  it('remembers its own 4096 latest-used request ids: one asked again outlives an older one', async () => {
    const { client, store } = setup();
    const ask = (n: number) => store.storeRequest(verified, { ...request, id: `a1-s0-r${n}` });
    for (let n = 0; n < 4096; n += 1) await ask(n);
    await ask(0); // known: no patch, and now the most recently used
    await ask(4096); // one past the bound: r1, the least recently used, is forgotten
    const before = client.summaries().length;
    await ask(0);
    expect(client.summaries().length).toBe(before);
    await ask(1);
    expect(client.summaries().length).toBe(before + 1);
  });
});

describe('decisionOf and nextChange', () => {
  it("reads the decision from the cache, and none of another run's uid", () => {
    const { informer, store } = setup(issueRun({ decided: [decision] }));
    expect(store.decisionOf(verified, 'a1-s0-1')).toEqual(decision);
    expect(store.decisionOf(verified, 'a1-s0-2')).toBeNull();
    const replaced = issueRun({ decided: [decision] });
    replaced.metadata.uid = 'uid-2';
    informer.put(replaced);
    expect(store.decisionOf(verified, 'a1-s0-1')).toBeNull();
  });

  it("settles on the run's next update, not another run's, and leaves no waiter", async () => {
    const { informer, store } = setup();
    let settled = false;
    const change = store.nextChange(verified, new AbortController().signal).then(() => {
      settled = true;
    });
    informer.update(issueRun({}, {}, 'app-eng-7'));
    await Promise.resolve();
    expect([settled, store.waiting()]).toEqual([false, 1]);
    informer.update(issueRun({ decided: [decision] }));
    await change;
    expect(store.waiting()).toBe(0);
  });

  it('settles on abort and leaves no waiter; an aborted signal settles at once', async () => {
    const { store } = setup();
    const controller = new AbortController();
    const change = store.nextChange(verified, controller.signal);
    expect(store.waiting()).toBe(1);
    controller.abort();
    await change;
    expect(store.waiting()).toBe(0);
    await store.nextChange(verified, controller.signal);
    expect(store.waiting()).toBe(0);
  });
});

describe('takeSteers', () => {
  it('hands the steers above the mark, then writes the mark as a string', async () => {
    const run = issueRun(
      { steers: [steer(3), steer(1), steer(2)] },
      { [inboxSteeredAnnotation(0)]: '1' },
    );
    const { client, store } = setup(run);
    expect(await store.takeSteers(verified, 0)).toEqual([
      { seq: 2, text: 'do 2' },
      { seq: 3, text: 'do 3' },
    ]);
    expect(client.actions[0]?.body).toEqual({
      metadata: { uid: 'uid-1', annotations: { [inboxSteeredAnnotation(0)]: '3' } },
    });
    // The informer has not brought the patch back yet: the mark this replica wrote holds.
    expect(await store.takeSteers(verified, 0)).toEqual([]);
    expect(client.actions).toHaveLength(1);
  });

  it('records one SteerDelivered Event per hand-out, none when nothing is handed', async () => {
    const { events, store } = setup(issueRun({ steers: [steer(1), steer(2)] }));
    await store.takeSteers(verified, 0);
    await store.takeSteers(verified, 0);
    expect(events.map((event) => [event.reason, event.note])).toEqual([
      ['SteerDelivered', expect.stringMatching(/^steers 1, 2 handed to slot 0 \(attempt \d+\)/)],
    ]);
  });

  it('hands a steer to each slot once, even to calls at the same time', async () => {
    const { store } = setup(issueRun({ steers: [steer(1)] }));
    const [first, second] = await Promise.all([
      store.takeSteers(verified, 0),
      store.takeSteers(verified, 0),
    ]);
    expect([first, second]).toEqual([[{ seq: 1, text: 'do 1' }], []]);
    expect(await store.takeSteers(verified, 1)).toEqual([{ seq: 1, text: 'do 1' }]);
  });

  it.each(['x', '-1', '1e3', ''])('reads a mark of %j as nothing taken', async (mark) => {
    const { store } = setup(
      issueRun({ steers: [steer(1)] }, { [inboxSteeredAnnotation(0)]: mark }),
    );
    expect(await store.takeSteers(verified, 0)).toHaveLength(1);
  });

  it('hands nothing when the mark cannot be written', async () => {
    const { client, store } = setup(issueRun({ steers: [steer(1)] }));
    client.answer(failWith('PATCH issueruns/*', 500));
    await expect(store.takeSteers(verified, 0)).rejects.toThrow();
  });
});

describe('policyDecided', () => {
  it.each([
    ['allow', InboxReasons.ApprovalAllowedByPolicy, 'Normal'],
    ['deny', InboxReasons.ApprovalDeniedByPolicy, 'Warning'],
  ] as const)('%s → a %s Event on the IssueRun', (outcome, reason, type) => {
    const { events, store } = setup();
    const { deadline: _d, ...asked } = { ...request, rule: 2, title: 'x'.repeat(5000) };
    store.policyDecided(verified, { request: asked, outcome, via: 'policy' });
    expect(events).toEqual([
      expect.objectContaining({ reason, type, run: 'app-eng-42', uid: 'uid-1' }),
    ]);
    expect(events[0]?.note).toMatch(/^permission a1-s0-1 .*x…; .* by rule 2, via policy$/);
    expect(events[0]?.note.length).toBeLessThan(1000);
  });
});

describe('runEventWriter', () => {
  it('posts an events.k8s.io Event regarding the IssueRun, its note bounded', async () => {
    const client = new FakeKubeClient();
    const write = runEventWriter(client, 'pod-1', pino({ level: 'silent' }));
    write({
      namespace: 'team-a',
      run: 'app-eng-42',
      uid: 'uid-1',
      kind: 'inbox',
      action: 'DecideApproval',
      reason: 'ApprovalAllowedByPolicy',
      type: 'Normal',
      note: 'n'.repeat(5000),
    });
    await Promise.resolve();
    const body = client.actions[0]?.body as { note: string };
    expect(client.actions[0]?.path).toBe('/apis/events.k8s.io/v1/namespaces/team-a/events');
    expect(body).toMatchObject({
      metadata: { generateName: 'app-eng-42.inbox-' },
      reason: 'ApprovalAllowedByPolicy',
      reportingInstance: 'pod-1',
      regarding: { kind: 'IssueRun', name: 'app-eng-42', uid: 'uid-1' },
    });
    expect(body.note).toHaveLength(1000);
  });
});
