// The inbox's decisions, table by table: requests recorded from annotations (bounded), the
// request comment and its retries, decisions from Kubernetes, comments read oldest first
// (approve, deny, answer, conflicting replies, non-approvers told once, forged commands,
// edited comments, comments before the request), steer and stop, deadlines, and the end of
// a run.
import { describe, expect, it } from 'vitest';
import {
  INBOX_COMMENT_MARKER,
  INBOX_LIMITS,
  inboxRequestAnnotation,
  inboxSteeredAnnotation,
  type InboxPending,
  type InboxRequest,
  type InboxStatus,
  type IssueRun,
  type IssueRunStatus,
  type SpecDecision,
  inboxStatusSchema,
} from '../../../../src/api/index.js';
import { decideInbox, type InboxPlan } from '../../../../src/controller/inbox/decide.js';
import { commentOrder } from '../../../../src/controller/inbox/decide-comments.js';
import type { TrackerComment } from '../../../../src/tracker/types.js';
import {
  APPROVALS_DEFAULTS,
  type ApprovalsConfig,
} from '../../../../src/workflow/approvals-config.js';
import { T0, at, issueRun, startedStatus } from '../../../support/fakes/objects.js';

const config = (extra: Partial<ApprovalsConfig> = {}): ApprovalsConfig => ({
  ...APPROVALS_DEFAULTS,
  rules: [],
  approvers: ['alice', 'bob'],
  ...extra,
});

const request = (id = 'a1-s0-1', extra: Partial<InboxRequest> = {}): InboxRequest => ({
  id,
  kind: 'permission',
  slot: 0,
  attempt: 1,
  turn: 1,
  title: 'Run git push --force',
  toolKind: 'execute',
  command: 'git push --force',
  options: [{ optionId: 'allow', name: 'Allow', kind: 'allow_once' }],
  askedAt: at(-30_000),
  deadline: at(3_600_000),
  ...extra,
});

const question = (id = 'a1-s0-2', extra: Partial<InboxRequest> = {}) =>
  request(id, { kind: 'question', title: 'Which database?', message: 'Which database?', ...extra });

const posted = (r: InboxRequest, extra: Partial<InboxPending> = {}): InboxPending => ({
  ...r,
  commentId: 'c-req',
  commentedAt: r.askedAt,
  ...extra,
});

let nextId = 100;
const comment = (
  body: string,
  author = 'alice',
  created: string | null = at(-1000),
  id = String(nextId++),
): TrackerComment => ({ id, body, author, created_at: created, updated_at: created });

interface Case {
  inbox?: InboxStatus;
  status?: Partial<IssueRunStatus>;
  annotations?: Record<string, string>;
  decisions?: SpecDecision[];
  cancelRequested?: boolean;
  comments?: TrackerComment[] | null;
  config?: ApprovalsConfig;
  now?: Date;
}

function look(c: Case): InboxPlan {
  const run: IssueRun = issueRun({
    status: { ...startedStatus(1, 'Running'), ...c.status, ...(c.inbox ? { inbox: c.inbox } : {}) },
    spec: {
      ...(c.decisions ? { decisions: c.decisions } : {}),
      ...(c.cancelRequested ? { cancelRequested: true } : {}),
    },
  });
  run.metadata.annotations = c.annotations ?? {};
  return decideInbox({
    run,
    config: c.config ?? config(),
    comments: c.comments === undefined ? [] : c.comments,
    now: c.now ?? T0,
  });
}

const annotated = (...requests: InboxRequest[]) =>
  Object.fromEntries(requests.map((r) => [inboxRequestAnnotation(r.id), JSON.stringify(r)]));

const kinds = (plan: InboxPlan) => plan.posts.map((post) => post.kind);
const reasons = (plan: InboxPlan) => plan.events.map((event) => event.reason);
const verdicts = (plan: InboxPlan) =>
  (plan.inbox.decided ?? []).map((d) => `${d.requestId}=${d.verdict}/${d.via}/${d.by ?? '-'}`);

describe('requests from annotations', () => {
  it('records a request as pending, asks on the issue, and removes its annotation', () => {
    const plan = look({ annotations: annotated(request(), question()) });
    expect(plan.inbox.pending?.map((p) => p.id)).toEqual(['a1-s0-1', 'a1-s0-2']);
    expect(reasons(plan)).toEqual(['ApprovalRequested', 'QuestionAsked']);
    expect(plan.posts.map((p) => `${p.kind}:${p.requestId}`)).toEqual([
      'request:a1-s0-1',
      'request:a1-s0-2',
    ]);
    expect(plan.posts[0]?.body.startsWith(INBOX_COMMENT_MARKER)).toBe(true);
    expect(plan.removeAnnotations.sort()).toEqual(
      [inboxRequestAnnotation('a1-s0-1'), inboxRequestAnnotation('a1-s0-2')].sort(),
    );
    expect(plan.events[0]?.name).toBe('eng-1.uidrun1.inbox-a1-s0-1-requested');
  });

  it.each<[string, Case, string[], string[]]>([
    [
      'a request already pending is only removed',
      { annotations: annotated(request()), inbox: { pending: [posted(request())] } },
      ['a1-s0-1'],
      [],
    ],
    [
      'a request already decided is only removed',
      {
        annotations: annotated(request()),
        inbox: {
          decided: [{ requestId: 'a1-s0-1', verdict: 'approve', via: 'comment', at: at(0) }],
        },
      },
      [],
      [],
    ],
    [
      'a request of an attempt that is over times out at once, unasked',
      {
        annotations: annotated(request('a1-s0-1', { attempt: 1 })),
        status: { slots: [{ slot: 0, phase: 'Running', attempt: 2 }] },
      },
      [],
      ['ApprovalTimedOut'],
    ],
  ])('%s', (_name, c, pending, events) => {
    const plan = look(c);
    expect(plan.inbox.pending?.map((p) => p.id)).toEqual(pending);
    expect(reasons(plan)).toEqual(events);
    expect(plan.posts).toEqual([]);
    expect(plan.removeAnnotations).toEqual([inboxRequestAnnotation('a1-s0-1')]);
  });

  it('an unreadable annotation is removed and named in the inbox, never thrown', () => {
    const plan = look({
      annotations: {
        [inboxRequestAnnotation('a1-s0-1')]: '{not json',
        [inboxRequestAnnotation('a1-s0-2')]: JSON.stringify({ ...request('a1-s0-2'), slot: -1 }),
        [inboxRequestAnnotation('a1-s0-3')]: JSON.stringify(request('a1-s0-9')),
      },
    });
    expect(plan.inbox.pending).toEqual([]);
    expect(plan.removeAnnotations).toHaveLength(3);
    expect(plan.inbox.reason).toBe('InvalidInboxRequest');
    expect(plan.inbox.message).toMatch(/^annotation inbox\.lorenz\.dev\/request-a1-s0-/);
  });

  it(`more than ${INBOX_LIMITS.pending} at once: the rest are decided as timeouts at once`, () => {
    const many = Array.from({ length: INBOX_LIMITS.pending + 2 }, (_, n) =>
      request(`a1-s0-${n + 1}`, { askedAt: at(-30_000 + n * 1000) }),
    );
    const plan = look({ annotations: annotated(...many) });
    expect(plan.inbox.pending).toHaveLength(INBOX_LIMITS.pending);
    expect(verdicts(plan)).toEqual(['a1-s0-9=timeout/timeout/-', 'a1-s0-10=timeout/timeout/-']);
    expect(plan.inbox.decided?.[0]?.reason).toMatch(/more than 8 requests/);
    expect(kinds(plan).filter((kind) => kind === 'request')).toHaveLength(INBOX_LIMITS.pending);
    expect(kinds(plan)).not.toContain('timed_out');
    expect(plan.removeAnnotations).toHaveLength(INBOX_LIMITS.pending + 2);
  });
});

describe('the request comment', () => {
  it.each<[string, Partial<InboxPending>, TrackerComment[] | null, string[]]>([
    ['posted: not again', { commentId: 'c1' }, [], []],
    ['never posted: posted now', { commentId: undefined }, null, ['request']],
    [
      'refused: tried again on a look that reads the issue',
      { commentError: 'HTTP 403' },
      [],
      ['request'],
    ],
    ['refused: not on a look that does not read', { commentError: 'HTTP 403' }, null, []],
  ])('%s', (_name, fields, comments, expected) => {
    const pending: InboxPending = { ...request(), ...fields };
    if (fields.commentId === undefined) delete pending.commentId;
    expect(kinds(look({ inbox: { pending: [pending] }, comments }))).toEqual(expected);
  });
});

describe('decisions in Kubernetes', () => {
  it.each<[string, SpecDecision, string[], string]>([
    [
      'approve',
      { requestId: 'a1-s0-1', verdict: 'approve', by: 'kube:admin' },
      ['a1-s0-1=approve/kubernetes/kube:admin'],
      'ApprovalGranted',
    ],
    [
      'deny with a reason',
      { requestId: 'a1-s0-1', verdict: 'deny', reason: 'no', by: 'ops' },
      ['a1-s0-1=deny/kubernetes/ops'],
      'ApprovalDenied',
    ],
    [
      'answer a question',
      { requestId: 'a1-s0-2', verdict: 'answer', answer: 'postgres' },
      ['a1-s0-2=answer/kubernetes/-'],
      'QuestionAnswered',
    ],
  ])('%s: decided via kubernetes, said on the issue', (_name, decision, expected, event) => {
    const plan = look({
      inbox: { pending: [posted(request()), posted(question())] },
      decisions: [decision],
      comments: null,
    });
    expect(verdicts(plan)).toEqual(expected);
    expect(kinds(plan)).toEqual(['decided_in_kubernetes']);
    expect(reasons(plan)).toEqual([event]);
  });

  it('a verdict that does not fit the request is named, and the request still waits', () => {
    const plan = look({
      inbox: { pending: [posted(request())] },
      decisions: [{ requestId: 'a1-s0-1', verdict: 'answer', answer: 'x' }],
    });
    expect(plan.inbox.pending).toHaveLength(1);
    expect(plan.inbox.reason).toBe('InvalidDecision');
  });

  it('a decision for a request no longer pending changes nothing', () => {
    const decided = {
      requestId: 'a1-s0-1',
      verdict: 'deny' as const,
      via: 'comment' as const,
      at: at(-1),
    };
    const plan = look({
      inbox: { decided: [decided] },
      decisions: [{ requestId: 'a1-s0-1', verdict: 'approve' }],
    });
    expect(plan.inbox.decided).toEqual([decided]);
    expect(plan.posts).toEqual([]);
  });
});

const waiting = (...more: InboxPending[]): InboxStatus => ({
  pending: [posted(request()), ...more],
});

describe('comments on the issue', () => {
  it.each<[string, Case, string[], string[]]>([
    [
      '/approve by an approver',
      { comments: [comment('/approve')] },
      ['a1-s0-1=approve/comment/alice'],
      ['approved'],
    ],
    [
      '/approve always',
      { comments: [comment('/approve always')] },
      ['a1-s0-1=approve_always/comment/alice'],
      ['approved_always'],
    ],
    [
      '/deny with a reason',
      { comments: [comment('/deny not on main')] },
      ['a1-s0-1=deny/comment/alice'],
      ['denied'],
    ],
    [
      '/approve naming the request (the second one)',
      { inbox: waiting(posted(request('a1-s0-3'))), comments: [comment('/approve a1-s0-3')] },
      ['a1-s0-3=approve/comment/alice'],
      ['approved'],
    ],
    [
      'conflicting replies: the first by time wins, the second is told',
      { comments: [comment('/deny', 'bob', at(-2000)), comment('/approve', 'alice', at(-3000))] },
      ['a1-s0-1=approve/comment/alice'],
      ['approved', 'already_decided'],
    ],
    [
      'a reply to a question is its answer',
      { inbox: { pending: [posted(question())] }, comments: [comment('Use postgres.\n> quoted')] },
      ['a1-s0-2=answer/comment/alice'],
      ['answered'],
    ],
    [
      '/deny declines a question when no permission request waits',
      { inbox: { pending: [posted(question())] }, comments: [comment('/deny')] },
      ['a1-s0-2=deny/comment/alice'],
      ['denied'],
    ],
    [
      '/approve with nothing waiting',
      { inbox: {}, comments: [comment('/approve')] },
      [],
      ['no_request'],
    ],
    [
      '/approve naming an unknown request',
      { comments: [comment('/approve a1-s0-7')] },
      [],
      ['no_request'],
    ],
    [
      'a comment written before the request was asked does not answer it',
      { comments: [comment('/approve', 'alice', at(-40_000))] },
      [],
      ['no_request'],
    ],
    [
      'a reply after the request comment counts though the Pod clock ran ahead',
      {
        inbox: {
          pending: [posted(request('a1-s0-1', { askedAt: at(5000) }), { commentedAt: at(-2000) })],
        },
        comments: [comment('/approve', 'alice', at(-1000))],
      },
      ['a1-s0-1=approve/comment/alice'],
      ['approved'],
    ],
    [
      'a comment written before the run started counts for nothing',
      {
        comments: [
          comment('/approve', 'alice', at(-90_000)),
          comment('/stop', 'alice', at(-90_000)),
        ],
      },
      [],
      [],
    ],
    [
      'a forged /approve in a code block is no command',
      { comments: [comment('see:\n```\n/approve\n```')] },
      [],
      [],
    ],
    ['a comment quoting /approve is no command', { comments: [comment('> /approve\nno')] }, [], []],
    [
      "the inbox's own comments are never read",
      { comments: [comment(`${INBOX_COMMENT_MARKER}\n/approve`, 'alice')] },
      [],
      [],
    ],
    [
      'a plain comment while no question waits is not an answer',
      { comments: [comment('looks good to me')] },
      [],
      [],
    ],
  ])('%s', (_name, c, expected, replies) => {
    const plan = look({ inbox: waiting(), ...c });
    expect(verdicts(plan).filter((v) => !v.includes('timeout'))).toEqual(expected);
    expect(kinds(plan)).toEqual(replies);
  });

  it('a decision by comment keeps its comment, reason and answer', () => {
    const approve = comment('/deny not on main', 'Alice', at(-1000), '77');
    const plan = look({ inbox: waiting(), comments: [approve] });
    expect(plan.inbox.decided?.[0]).toEqual({
      requestId: 'a1-s0-1',
      verdict: 'deny',
      reason: 'not on main',
      by: 'Alice',
      via: 'comment',
      commentId: '77',
      at: at(0),
    });
    expect(plan.inbox.handledComments).toEqual(['77']);
    expect(plan.inbox.lastReadTime).toBe(at(0));
    expect(reasons(plan)).toEqual(['ApprovalDenied']);
  });

  it('an answer keeps the text of the reply (quotes dropped)', () => {
    const plan = look({
      inbox: { pending: [posted(question())] },
      comments: [comment('> Which database?\nPostgres 16')],
    });
    expect(plan.inbox.decided?.[0]?.answer).toBe('Postgres 16');
    expect(reasons(plan)).toEqual(['QuestionAnswered']);
  });

  it('a comment acted upon is never acted upon again, even edited', () => {
    const first = look({
      inbox: waiting(),
      comments: [comment('/approve', 'alice', at(-1000), '5')],
    });
    const edited = comment('/deny changed my mind', 'alice', at(-1000), '5');
    const again = look({
      inbox: { ...first.inbox, pending: [posted(request('a1-s0-3'))] },
      comments: [edited],
    });
    expect(again.inbox.decided).toEqual(first.inbox.decided);
    expect(again.posts).toEqual([]);
  });

  it('a non-approver is told once per request, and changes nothing', () => {
    const mallory = (id: string, body = '/approve') => comment(body, 'mallory', at(-1000), id);
    const first = look({ inbox: waiting(), comments: [mallory('1'), mallory('2', '/deny')] });
    expect(first.inbox.pending).toHaveLength(1);
    expect(first.inbox.pending?.[0]?.noticed).toEqual(['mallory']);
    expect(kinds(first)).toEqual(['not_approver']);
    expect(reasons(first)).toEqual(['ReplyIgnored']);
    const later = look({
      inbox: first.inbox,
      comments: [mallory('1'), mallory('2'), mallory('3')],
    });
    expect(later.posts).toEqual([]);
    expect(later.inbox.pending?.[0]?.noticed).toEqual(['mallory']);
  });

  it('a non-approver answering a question is told once too; an empty approvers list lets anyone', () => {
    const inbox = { pending: [posted(question())] };
    const reply = comment('mysql!', 'mallory');
    expect(kinds(look({ inbox, comments: [reply] }))).toEqual(['not_approver']);
    const open = look({ inbox, comments: [reply], config: config({ approvers: [] }) });
    expect(verdicts(open)).toEqual(['a1-s0-2=answer/comment/mallory']);
  });

  it('matches approvers by id or email too, trimmed and case-insensitive', () => {
    const byId = { ...comment('/approve', 'Someone'), author_id: 'U123' };
    const plan = look({
      inbox: waiting(),
      comments: [byId],
      config: config({ approvers: [' u123 '] }),
    });
    expect(verdicts(plan)).toEqual(['a1-s0-1=approve/comment/Someone']);
  });

  it("a comment by Lorenz's own tracker user (an agent's tool) never counts, even when anyone may answer", () => {
    const open = config({ approvers: [] });
    const mine = {
      ...comment(`${INBOX_COMMENT_MARKER}\nasking`, 'Lorenz Bot', at(-2000)),
      author_id: 'B1',
    };
    const agent = { ...comment('/approve', 'Lorenz Bot', at(-1000)), author_id: 'B1' };
    expect(look({ inbox: waiting(), config: open, comments: [mine, agent] }).inbox.decided).toEqual(
      [],
    );
    // Known from the comments this controller posted, with none of them in the list.
    const known = decideInbox({
      run: issueRun({ status: { ...startedStatus(1, 'Running'), inbox: waiting() } }),
      config: open,
      comments: [agent],
      self: ['id:B1'],
      now: T0,
    });
    expect(known.inbox.decided).toEqual([]);
    expect(known.posts).toEqual([]);
    const person = { ...comment('/approve', 'Lorenz Bot', at(-1000)), author_id: 'P7' };
    expect(
      look({ inbox: waiting(), config: open, comments: [mine, person] }).inbox.decided,
    ).toHaveLength(1);
  });

  it('hostile lengths stay within the status schema', () => {
    const long = 'x'.repeat(5000);
    const plan = look({
      inbox: { ...waiting(posted(question())), steerSeq: 0 },
      config: config({ approvers: [], steering: true }),
      comments: [
        comment(`/deny a1-s0-1 ${long}`, long, at(-3000), `1${'9'.repeat(999)}`),
        comment(`${long}\n${long}`, long, at(-2000), long),
        comment(`/steer ${long.repeat(5)}`, long, at(-1000), `y${long}`),
      ],
    });
    expect(plan.inbox.decided).toHaveLength(2);
    expect(plan.inbox.steers).toHaveLength(1);
    expect(() => inboxStatusSchema.parse(plan.inbox)).not.toThrow();
  });

  it('reads oldest first, those without a time last, then by id', () => {
    const order = commentOrder([
      comment('', 'a', null, '3'),
      comment('', 'a', at(-5000), '10'),
      comment('', 'a', at(-5000), '9'),
      comment('', 'a', at(-9000), '11'),
    ]);
    expect(order.map((c) => c.id)).toEqual(['11', '9', '10', '3']);
  });

  it('keeps the newest handled comments only', () => {
    const handled = Array.from({ length: INBOX_LIMITS.handledComments }, (_, n) => `old-${n}`);
    const plan = look({
      inbox: { ...waiting(), handledComments: handled },
      comments: [comment('/approve', 'alice', at(-1), 'new')],
    });
    expect(plan.inbox.handledComments).toHaveLength(INBOX_LIMITS.handledComments);
    expect(plan.inbox.handledComments?.at(-1)).toBe('new');
    expect(plan.inbox.handledComments?.[0]).toBe('old-1');
  });
});

describe('steer and stop', () => {
  const steering = config({ steering: true });

  it('a /steer while running becomes the next steer, said and recorded', () => {
    const plan = look({
      inbox: { steerSeq: 2 },
      config: steering,
      comments: [comment('/steer use the v2 API\nand keep tests green', 'bob', at(-1000), '9')],
    });
    expect(plan.inbox.steers).toEqual([
      expect.objectContaining({ seq: 3, by: 'bob', commentId: '9', at: at(0) }),
    ]);
    expect(plan.inbox.steerSeq).toBe(3);
    expect(kinds(plan)).toEqual(['steer_received']);
    expect(reasons(plan)).toEqual(['SteerReceived']);
    expect(plan.events[0]?.name).toMatch(/inbox-steer-3$/);
  });

  it.each<[string, Case, string[]]>([
    ['steering off: told so', { config: config() }, ['steering_off']],
    [
      'a non-approver: told once',
      { config: steering, comments: [comment('/steer x', 'eve'), comment('/steer y', 'eve')] },
      ['not_approver'],
    ],
    [
      'the run not running: waits, unhandled',
      { config: steering, status: { phase: 'Pending' } },
      [],
    ],
  ])('/steer, %s', (_name, c, replies) => {
    const plan = look({ comments: [comment('/steer do it')], ...c });
    expect(kinds(plan)).toEqual(replies);
    expect(plan.inbox.steers).toEqual([]);
  });

  it('keeps the newest steers only', () => {
    const steers = Array.from({ length: INBOX_LIMITS.steers }, (_, n) => ({
      seq: n + 1,
      text: 't',
      at: at(-1),
    }));
    const plan = look({
      inbox: { steers, steerSeq: 16 },
      config: steering,
      comments: [comment('/steer more')],
    });
    expect(plan.inbox.steers?.map((s) => s.seq)).toEqual(
      Array.from({ length: 16 }, (_, n) => n + 2),
    );
  });

  it('/stop by an approver cancels the run, once, steering on or off', () => {
    const plan = look({ comments: [comment('/stop', 'alice', at(-1000), '4')] });
    expect(plan.cancel).toEqual({ note: '/stop by alice on ENG-1' });
    expect(plan.inbox.stopRequested).toBe(true);
    expect(kinds(plan)).toEqual(['stopped']);
    expect(reasons(plan)).toEqual(['StopRequested']);
    const again = look({ inbox: plan.inbox, comments: [comment('/stop', 'bob')] });
    expect(again.posts).toEqual([]);
    // The cancel is asked again until spec.cancelRequested says it is in.
    expect(again.cancel).not.toBeNull();
    expect(look({ inbox: plan.inbox, cancelRequested: true }).cancel).toBeNull();
  });

  it('/stop by a non-approver cancels nothing; the author is told once', () => {
    const plan = look({ comments: [comment('/stop', 'eve'), comment('/stop', 'eve')] });
    expect(plan.cancel).toBeNull();
    expect(kinds(plan)).toEqual(['not_approver']);
    expect(look({ inbox: plan.inbox, comments: [comment('/stop', 'eve')] }).posts).toEqual([]);
  });
});

describe('deadlines and the end of a run', () => {
  const late = (extra: Partial<InboxRequest> = {}) =>
    posted(request('a1-s0-1', { deadline: at(-5000), ...extra }));

  it('a request past its deadline times out, said on the issue', () => {
    const plan = look({ inbox: { pending: [late()] }, comments: null });
    expect(verdicts(plan)).toEqual(['a1-s0-1=timeout/timeout/-']);
    expect(kinds(plan)).toEqual(['timed_out']);
    expect(reasons(plan)).toEqual(['ApprovalTimedOut']);
    expect(plan.events[0]?.type).toBe('Warning');
  });

  it('a reply written before the deadline still decides; one after it is too late', () => {
    const early = look({
      inbox: { pending: [late()] },
      comments: [comment('/approve', 'alice', at(-6000))],
    });
    expect(verdicts(early)).toEqual(['a1-s0-1=approve/comment/alice']);
    const after = look({
      inbox: { pending: [late()] },
      comments: [comment('/approve', 'alice', at(-4000))],
    });
    expect(verdicts(after)).toEqual(['a1-s0-1=timeout/timeout/-']);
    expect(kinds(after)).toEqual(['timed_out', 'already_decided']);
  });

  const finished: Partial<IssueRunStatus> = { phase: 'Succeeded' };

  it('a finished run ends its pending requests as timeouts, with no word', () => {
    const plan = look({ inbox: waiting(), status: finished, comments: null });
    expect(verdicts(plan)).toEqual(['a1-s0-1=timeout/timeout/-']);
    expect(plan.posts).toEqual([]);
    expect(plan.cancel).toBeNull();
  });

  it('steers no slot took are said once when the run ends', () => {
    const steers = [1, 2, 3].map((seq) => ({
      seq,
      text: 't',
      by: seq === 3 ? 'bob' : 'alice',
      at: at(-1),
    }));
    const run = (inbox: InboxStatus) => {
      const r = issueRun({ status: { ...startedStatus(), ...finished, inbox } });
      r.metadata.annotations = { [inboxSteeredAnnotation(0)]: '1' };
      return decideInbox({ run: r, config: config({ steering: true }), comments: null, now: T0 });
    };
    const plan = run({ steers, steerSeq: 3 });
    expect(kinds(plan)).toEqual(['steer_undelivered']);
    expect(run(plan.inbox).posts).toEqual([]);
    expect(kinds(run({ steers: steers.slice(0, 1), steerSeq: 1 }))).toEqual([]);
  });

  it('keeps the newest decisions only', () => {
    const decided = Array.from({ length: INBOX_LIMITS.decided }, (_, n) => ({
      requestId: `a1-s0-${n + 10}`,
      verdict: 'approve' as const,
      via: 'comment' as const,
      at: at(-1),
    }));
    const plan = look({
      inbox: { ...waiting(), decided },
      comments: [comment('/approve a1-s0-1')],
    });
    expect(plan.inbox.decided).toHaveLength(INBOX_LIMITS.decided);
    expect(plan.inbox.decided?.at(-1)?.requestId).toBe('a1-s0-1');
  });
});
