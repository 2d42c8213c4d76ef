import { afterEach, describe, expect, it } from 'vitest';
import type { AskInput } from '../../../src/agent/inbox.js';
import {
  INBOX_LIMITS,
  INBOX_PATHS,
  inboxRequestSchema,
  policyReportSchema,
  type InboxDecision,
} from '../../../src/api/inbox.js';
import type { ApprovalsConfig } from '../../../src/workflow/approvals-config.js';
import { createInboxClient } from '../../../src/runner/inbox-client.js';
import { createRunnerInbox } from '../../../src/runner/inbox.js';
import { approvals, rule } from '../agent/inbox-support.js';
import { delay, fakeGateway, type FakeGateway, type GatewayCall } from './inbox-gateway.js';

let gateway: FakeGateway | undefined;
afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
});

const FACTS = { toolKind: 'execute', title: 'git push', command: 'git push --force', paths: [] };
const permission: AskInput = {
  kind: 'permission',
  turn: 2,
  facts: FACTS,
  options: [
    { optionId: 'allow', name: 'Allow', kind: 'allow_once' },
    { optionId: 'reject', name: 'Reject', kind: 'reject_once' },
  ],
  verdict: { action: 'ask', rule: 1, reason: 'pushes are checked' },
};
const question: AskInput = { kind: 'question', turn: 1, message: 'Which database?\nPick one.' };

/**
 * A gateway that takes every request and answers a poll with `decide(request id)` (null: not
 * yet; it holds the poll a little, as a real one holds it up to wait_ms).
 */
async function inboxOver(
  decide: (id: string) => Partial<InboxDecision> | null,
  config: ApprovalsConfig = approvals({ timeoutMs: 5000 }),
) {
  gateway = await fakeGateway(async (call: GatewayCall) => {
    if (call.path === INBOX_PATHS.requests) {
      const parsed = inboxRequestSchema.safeParse(call.body);
      return parsed.success ? { status: 202, body: { id: parsed.data.id } } : { status: 400 };
    }
    if (call.path === INBOX_PATHS.steers) {
      return { status: 200, body: { steers: [{ seq: 1, text: 'use tabs', by: 'bob' }] } };
    }
    if (call.path === INBOX_PATHS.reports) {
      return policyReportSchema.safeParse(call.body).success ? { status: 202 } : { status: 400 };
    }
    const id = decodeURIComponent(call.path.split('/').at(-1) ?? '');
    const decided = decide(id);
    if (!decided) await delay(30);
    const decision = decided && {
      requestId: id,
      via: 'comment',
      at: '2026-12-01T10:00:00.000Z',
      ...decided,
    };
    return { status: 200, body: { decision } };
  });
  const logs: string[] = [];
  const events: { type: string; message: Record<string, unknown> }[] = [];
  const client = createInboxClient({
    url: gateway.url,
    token: 'tok',
    log: (line) => logs.push(line),
    backoff: { initialMs: 10, maxMs: 40 },
    pollWaitMs: 100,
  });
  const inbox = createRunnerInbox({
    config,
    slot: 1,
    attempt: 3,
    client,
    emit: (type, message) => events.push({ type, message }),
    log: (line) => logs.push(line),
  });
  return { inbox, logs, events, calls: gateway.calls };
}

const signal = () => new AbortController().signal;
const posted = (calls: GatewayCall[]) => calls.filter((call) => call.path === INBOX_PATHS.requests);

describe('the runner inbox', () => {
  it('decides with agent.approvals', async () => {
    const { inbox } = await inboxOver(
      () => null,
      approvals({ rules: [rule(0, 'deny', { command: 'rm *' })] }),
    );
    expect(
      inbox.decide({ toolKind: 'execute', title: 'rm', command: 'rm -rf /', paths: [] }),
    ).toEqual({
      action: 'deny',
      rule: 0,
      reason: null,
    });
  });

  it('asks with an id a<attempt>-s<slot>-<n>, the facts and the deadline, and takes the decision', async () => {
    const { inbox, calls } = await inboxOver(() => ({ verdict: 'approve', by: 'alice' }));
    const requested: string[] = [];
    const before = Date.now();
    const answer = await inbox.ask(permission, signal(), (id) => requested.push(id));
    expect(answer).toEqual({
      requestId: 'a3-s1-1',
      verdict: 'approve',
      via: 'comment',
      by: 'alice',
    });
    expect(requested).toEqual(['a3-s1-1']);
    const body = inboxRequestSchema.parse(posted(calls)[0]?.body);
    expect(body).toMatchObject({
      id: 'a3-s1-1',
      kind: 'permission',
      slot: 1,
      attempt: 3,
      turn: 2,
      title: 'git push',
      toolKind: 'execute',
      command: 'git push --force',
      rule: 1,
      ruleReason: 'pushes are checked',
      options: permission.kind === 'permission' ? permission.options : [],
    });
    expect(Date.parse(body.deadline) - Date.parse(body.askedAt)).toBe(5000);
    expect(Date.parse(body.askedAt)).toBeGreaterThanOrEqual(before - 1);
  });

  it.each([
    {
      decided: { verdict: 'deny', reason: 'not now', by: 'bob' },
      answer: { verdict: 'deny', reason: 'not now', by: 'bob', via: 'comment' },
    },
    {
      decided: { verdict: 'approve_always', via: 'kubernetes' },
      answer: { verdict: 'approve_always', via: 'kubernetes' },
    },
    {
      decided: { verdict: 'timeout', via: 'timeout' },
      answer: { verdict: 'deny', via: 'timeout' },
    },
  ] as const)('maps a $decided.verdict decision', async ({ decided, answer }) => {
    const { inbox } = await inboxOver(() => decided);
    expect(await inbox.ask(permission, signal())).toMatchObject({
      requestId: 'a3-s1-1',
      ...answer,
    });
  });

  it('decides by on_timeout when nobody answers by the deadline', async () => {
    const config = approvals({ timeoutMs: 300, onTimeout: 'allow' });
    const { inbox } = await inboxOver(() => null, config);
    const started = Date.now();
    expect(await inbox.ask(permission, signal())).toEqual({
      requestId: 'a3-s1-1',
      verdict: 'approve',
      via: 'timeout',
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
  });

  it('answers a question with the reply, and declines one that times out', async () => {
    const answered = await inboxOver(() => ({
      verdict: 'answer',
      answer: 'postgres',
      by: 'carol',
    }));
    expect(await answered.inbox.ask(question, signal())).toEqual({
      requestId: 'a3-s1-1',
      verdict: 'answer',
      answer: 'postgres',
      by: 'carol',
      via: 'comment',
    });
    expect(inboxRequestSchema.parse(posted(answered.calls)[0]?.body)).toMatchObject({
      kind: 'question',
      title: 'Which database?',
      message: 'Which database?\nPick one.',
    });
    await gateway?.close();
    const timedOut = await inboxOver(() => ({ verdict: 'timeout', via: 'timeout' }));
    expect(await timedOut.inbox.ask(question, signal())).toMatchObject({
      verdict: 'decline',
      via: 'timeout',
    });
  });

  it('decides at once by on_timeout over asks_per_minute, and reports it', async () => {
    const { inbox, events, calls } = await inboxOver(
      () => ({ verdict: 'approve' }),
      approvals({ asksPerMinute: 2 }),
    );
    await inbox.ask(permission, signal());
    await inbox.ask(permission, signal());
    const requested: string[] = [];
    expect(await inbox.ask(permission, signal(), (id) => requested.push(id))).toMatchObject({
      requestId: 'a3-s1-3',
      verdict: 'deny',
      via: 'rate_limit',
    });
    expect(requested).toEqual([]);
    expect(posted(calls)).toHaveLength(2);
    expect(events).toEqual([
      {
        type: 'approval_rate_limited',
        message: expect.objectContaining({ turn: 2, requestId: 'a3-s1-3', outcome: 'deny' }),
      },
    ]);
    await delay(100);
    const reports = calls.filter((call) => call.path === INBOX_PATHS.reports);
    expect(reports.map((call) => policyReportSchema.parse(call.body))).toMatchObject([
      { outcome: 'deny', via: 'rate_limit', request: { id: 'a3-s1-3' } },
    ]);
  });

  it(`decides at once by on_timeout with ${INBOX_LIMITS.pending} requests already waiting`, async () => {
    const { inbox } = await inboxOver(
      () => null,
      approvals({ asksPerMinute: 100, timeoutMs: 60_000 }),
    );
    const abort = new AbortController();
    const waiting = Array.from({ length: INBOX_LIMITS.pending }, () =>
      inbox.ask(permission, abort.signal),
    );
    expect(await inbox.ask(permission, signal())).toMatchObject({
      verdict: 'deny',
      via: 'rate_limit',
    });
    abort.abort();
    await Promise.allSettled(waiting);
  });

  it('without a gateway decides every ask by on_timeout at once, saying why once', async () => {
    const logs: string[] = [];
    const inbox = createRunnerInbox({
      config: approvals({ onTimeout: 'deny' }),
      slot: 0,
      attempt: 1,
      client: undefined,
      emit: () => undefined,
      log: (line) => logs.push(line),
    });
    expect(await inbox.ask(permission, signal())).toMatchObject({
      requestId: 'a1-s0-1',
      verdict: 'deny',
      via: 'unavailable',
    });
    expect(await inbox.ask(question, signal())).toMatchObject({
      verdict: 'decline',
      via: 'unavailable',
    });
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatch(/no agent-tools gateway/);
    expect(await inbox.takeSteers()).toEqual([]);
    inbox.report(FACTS, 1, { action: 'deny', rule: 0, reason: null }, 'policy');
  });

  it('rejects when the run is cancelled while it waits', async () => {
    const { inbox } = await inboxOver(() => null);
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 50);
    await expect(inbox.ask(permission, abort.signal)).rejects.toThrow();
  });

  it("reports a policy decision as the contract says, and takes the slot's steers", async () => {
    const { inbox, calls } = await inboxOver(() => null);
    inbox.report(
      { toolKind: 'edit', title: 'Edit .env', command: null, paths: ['.env'] },
      4,
      { action: 'deny', rule: 2, reason: 'secrets' },
      'policy',
    );
    await delay(100);
    const report = policyReportSchema.parse(
      calls.find((call) => call.path === INBOX_PATHS.reports)?.body,
    );
    expect(report).toMatchObject({
      outcome: 'deny',
      via: 'policy',
      request: {
        id: 'a3-s1-1',
        kind: 'permission',
        turn: 4,
        title: 'Edit .env',
        paths: ['.env'],
        rule: 2,
        ruleReason: 'secrets',
      },
    });
    expect(await inbox.takeSteers()).toEqual([{ seq: 1, text: 'use tabs', by: 'bob' }]);
    expect(calls.find((call) => call.path === INBOX_PATHS.steers)?.body).toEqual({ slot: 1 });
  });
});
