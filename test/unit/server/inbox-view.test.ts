// status.inbox as the run page and the runs table get it: each request and decision checked
// (a malformed one left out), answered ones marked, who may answer from the Workflow, and a
// waiting run's reason AwaitingApproval / AwaitingAnswer in its row.
import { describe, expect, it } from 'vitest';
import { answeredByOf, inboxOfIssueRun } from '../../../src/server/inbox-view.js';
import { runOfIssueRun, workflowOf } from '../../../src/server/mappers.js';

const request = (id: string, kind: 'permission' | 'question', askedAt: string) => ({
  id,
  kind,
  slot: 0,
  attempt: 1,
  turn: 1,
  title: '<img src=x onerror=alert(1)>',
  command: 'git push --force origin main',
  options: [{ optionId: 'a', name: 'Allow', kind: 'allow_once' }],
  askedAt,
  deadline: '2026-12-02T18:00:00Z',
});

const run = (status: Record<string, unknown>, decisions: unknown[] = []) => ({
  metadata: {
    uid: 'u',
    namespace: 'team-a',
    name: 'eng-42',
    creationTimestamp: '2026-12-02T16:00:00Z',
  },
  spec: { workflowRef: { name: 'board' }, issue: { identifier: 'ENG-42', title: 't' }, decisions },
  status: { phase: 'Running', reason: 'PodRunning', ...status },
});

/** A decision bob made by comment, in status.inbox.decided and in the view alike. */
const DENIED = {
  requestId: 'a1-s0-0',
  verdict: 'deny',
  reason: 'no',
  by: 'bob',
  via: 'comment',
  at: '2026-12-02T16:59:00Z',
};

describe('the inbox of a run', () => {
  it('pending oldest first, answered ones marked, decisions kept, malformed entries dropped', () => {
    const inbox = inboxOfIssueRun(
      run(
        {
          inbox: {
            pending: [
              request('a1-s0-2', 'question', '2026-12-02T17:05:00Z'),
              request('a1-s0-1', 'permission', '2026-12-02T17:00:00Z'),
              { id: 'BAD ID', kind: 'permission' },
            ],
            decided: [DENIED, { requestId: 'a1-s0-9', verdict: 'sure' }],
          },
        },
        [{ requestId: 'a1-s0-1', verdict: 'approve' }],
      ),
    );
    expect(inbox?.pending.map((each) => [each.id, each.answered ?? false])).toEqual([
      ['a1-s0-1', true],
      ['a1-s0-2', false],
    ]);
    expect(inbox?.pending[0]?.title).toBe('<img src=x onerror=alert(1)>');
    expect(inbox?.decided).toEqual([DENIED]);
    expect(inboxOfIssueRun(run({}))).toBeUndefined();
  });

  it.each([
    [undefined, /the Workflow's agent.approvals.approvers/],
    [
      {
        spec: {
          workflow:
            '---\nagent:\n  approvals:\n    approvers: [alice, bob@example.com]\n---\nDo it.',
        },
      },
      /on the issue: alice, bob@example.com; here: whoever may patch this IssueRun/,
    ],
    [{ spec: { workflow: '---\ntracker: {kind: memory}\n---\nDo it.' } }, /anyone who can comment/],
    [{ spec: { workflow: '---\n[unclosed\n---\n' } }, /anyone who can comment/],
  ])('who may answer, from the Workflow %#', (workflow, want) => {
    expect(answeredByOf(workflow)).toMatch(want);
  });
});

describe("a waiting run's reason in the runs table", () => {
  it.each<[string, Record<string, unknown>, string | undefined, number | undefined]>([
    [
      'the slot waits on an approval',
      { slots: [{ slot: 0, reason: 'AwaitingApproval' }] },
      'AwaitingApproval',
      undefined,
    ],
    [
      'a permission request pending',
      { inbox: { pending: [request('a1-s0-1', 'permission', '2026-12-02T17:00:00Z')] } },
      'AwaitingApproval',
      1,
    ],
    [
      'only a question pending',
      { inbox: { pending: [request('a1-s0-1', 'question', '2026-12-02T17:00:00Z')] } },
      'AwaitingAnswer',
      1,
    ],
    ['nothing waits', {}, 'PodRunning', undefined],
    [
      'a finished run',
      {
        phase: 'Succeeded',
        reason: 'IssueCompleted',
        slots: [{ slot: 0, reason: 'AwaitingApproval' }],
      },
      'IssueCompleted',
      undefined,
    ],
  ])('%s', (_name, status, reason, awaiting) => {
    const summary = runOfIssueRun(run(status));
    expect(summary.reason).toBe(reason);
    expect(summary.awaiting).toBe(awaiting);
  });
});

describe("a Workflow's waiting runs in the overview", () => {
  it.each([
    [1, 1],
    [0, undefined],
  ])('%i waiting: awaiting %s', (count, want) => {
    const workflow = { metadata: { namespace: 'team-a', name: 'board', uid: 'w' } };
    expect(workflowOf(workflow, 2, count).awaiting).toBe(want);
  });
});
