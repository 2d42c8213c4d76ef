import { afterEach, describe, expect, it } from 'vitest';
import {
  INBOX_PATHS,
  inboxRequestSchema,
  type InboxDecision,
  type InboxRequest,
} from '../../../src/api/inbox.js';
import { createInboxClient } from '../../../src/runner/inbox-client.js';
import {
  delay,
  fakeGateway,
  freePort,
  type FakeGateway,
  type GatewayHandler,
} from './inbox-gateway.js';

const TOKEN = 'run-token-123';
let gateway: FakeGateway | undefined;
afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
});

function request(id = 'a1-s0-1'): InboxRequest {
  const now = Date.now();
  return {
    id,
    kind: 'permission',
    slot: 0,
    attempt: 1,
    turn: 1,
    title: 'git push',
    options: [{ optionId: 'allow', name: 'Allow', kind: 'allow_once' }],
    askedAt: new Date(now).toISOString(),
    deadline: new Date(now + 60_000).toISOString(),
  };
}

const decision = (id = 'a1-s0-1'): InboxDecision => ({
  requestId: id,
  verdict: 'approve',
  by: 'alice',
  via: 'comment',
  at: '2026-12-01T10:00:00.000Z',
});

async function client(handler: GatewayHandler) {
  gateway = await fakeGateway(handler);
  const logs: string[] = [];
  const inbox = createInboxClient({
    url: gateway.url,
    token: TOKEN,
    log: (line) => logs.push(line),
    backoff: { initialMs: 20, maxMs: 80 },
    pollWaitMs: 200,
  });
  return { inbox, logs, calls: gateway.calls };
}

const signal = () => new AbortController().signal;

describe('the runner inbox client', () => {
  it('POSTs a request with the token, retrying after 503 until the gateway takes it', async () => {
    const { inbox, calls, logs } = await client((call, index) =>
      index < 2 ? { status: 503 } : { status: 202, body: { id: (call.body as { id: string }).id } },
    );
    expect(await inbox.postRequest(request(), Date.now() + 5000, signal())).toBe('taken');
    expect(calls).toHaveLength(3);
    for (const call of calls) {
      expect(call).toMatchObject({
        method: 'POST',
        path: INBOX_PATHS.requests,
        authorization: `Bearer ${TOKEN}`,
      });
      expect(inboxRequestSchema.safeParse(call.body).success).toBe(true);
    }
    expect(logs).toHaveLength(1);
  });

  it('keeps POSTing while the gateway refuses connections, and gets through once it is up', async () => {
    const port = await freePort();
    const logs: string[] = [];
    const inbox = createInboxClient({
      url: `http://127.0.0.1:${port}/mcp`,
      token: TOKEN,
      log: (line) => logs.push(line),
      backoff: { initialMs: 20, maxMs: 50 },
    });
    const posting = inbox.postRequest(request(), Date.now() + 5000, signal());
    await delay(200);
    gateway = await fakeGateway(
      (call) => ({ status: 202, body: { id: (call.body as { id: string }).id } }),
      port,
    );
    expect(await posting).toBe('taken');
    expect(gateway.calls).toHaveLength(1);
    expect(logs[0]).toMatch(/could not post request a1-s0-1/);
  });

  it('gives up on a 4xx no retry mends, and at the deadline', async () => {
    const refusing = await client(() => ({ status: 401 }));
    expect(await refusing.inbox.postRequest(request(), Date.now() + 5000, signal())).toBe(
      'refused',
    );
    await gateway?.close();
    const failing = await client(() => ({ status: 500 }));
    expect(await failing.inbox.postRequest(request(), Date.now() + 150, signal())).toBe('deadline');
  });

  it('long-polls until a decision, asking the gateway to wait', async () => {
    const { inbox, calls } = await client(async (call, index) => {
      await delay(50);
      return index < 2
        ? { status: 200, body: { decision: null } }
        : { status: 200, body: { decision: decision() } };
    });
    expect(await inbox.waitDecision(request(), Date.now() + 5000, signal())).toEqual(decision());
    expect(calls.map((call) => [call.method, call.path, call.query.get('wait_ms')])).toEqual([
      ['GET', INBOX_PATHS.request('a1-s0-1'), '200'],
      ['GET', INBOX_PATHS.request('a1-s0-1'), '200'],
      ['GET', INBOX_PATHS.request('a1-s0-1'), '200'],
    ]);
    expect(calls.every((call) => call.authorization === `Bearer ${TOKEN}`)).toBe(true);
  });

  it('ends with no decision at the deadline', async () => {
    const { inbox } = await client(async (call) => {
      await delay(Math.min(Number(call.query.get('wait_ms')), 100));
      return { status: 200, body: { decision: null } };
    });
    const started = Date.now();
    expect(await inbox.waitDecision(request(), Date.now() + 400, signal())).toBeNull();
    expect(Date.now() - started).toBeGreaterThanOrEqual(390);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it.each([
    { name: 'not JSON', reply: { status: 200, raw: 'not json' } },
    { name: 'no decision field', reply: { status: 200, body: { answer: 'yes' } } },
    {
      name: 'a decision that breaks the schema',
      reply: { status: 200, body: { decision: { requestId: 'a1-s0-1', verdict: 'sure' } } },
    },
    {
      name: "another request's decision",
      reply: { status: 200, body: { decision: decision('a1-s0-9') } },
    },
    { name: 'a 502', reply: { status: 502 } },
  ])('ignores $name and polls again', async ({ reply }) => {
    const { inbox, calls } = await client((_call, index) =>
      index === 0 ? reply : { status: 200, body: { decision: decision() } },
    );
    expect(await inbox.waitDecision(request(), Date.now() + 5000, signal())).toEqual(decision());
    expect(calls).toHaveLength(2);
  });

  it('posts again a request the gateway does not know (404)', async () => {
    const { inbox, calls } = await client((call, index) => {
      if (call.method === 'POST') return { status: 202, body: { id: 'a1-s0-1' } };
      return index === 0 ? { status: 404 } : { status: 200, body: { decision: decision() } };
    });
    expect(await inbox.waitDecision(request(), Date.now() + 5000, signal())).toEqual(decision());
    expect(calls.map((call) => call.method)).toEqual(['GET', 'POST', 'GET']);
  });

  it('stops waiting when the signal aborts', async () => {
    const { inbox } = await client(async () => {
      await delay(150);
      return { status: 200, body: { decision: null } };
    });
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 50);
    await expect(inbox.waitDecision(request(), Date.now() + 5000, abort.signal)).rejects.toThrow();
  });

  it('takes steers, and none (logged) on a failure or a bad body', async () => {
    const steers = [{ seq: 1, text: 'use tabs', by: 'bob' }];
    const good = await client(() => ({ status: 200, body: { steers } }));
    expect(await good.inbox.takeSteers(2)).toEqual(steers);
    expect(good.calls[0]).toMatchObject({
      method: 'POST',
      path: INBOX_PATHS.steers,
      body: { slot: 2 },
      authorization: `Bearer ${TOKEN}`,
    });
    await gateway?.close();
    const bad = await client((_call, index) =>
      index === 0 ? { status: 500 } : { status: 200, body: { steers: [{ text: 1 }] } },
    );
    expect(await bad.inbox.takeSteers(0)).toEqual([]);
    expect(await bad.inbox.takeSteers(0)).toEqual([]);
    expect(bad.logs).toHaveLength(2);
  });

  it('reports fire and forget; a failure is logged once and never thrown', async () => {
    const { inbox, calls, logs } = await client(() => ({ status: 503 }));
    const { deadline: _deadline, ...asked } = request();
    inbox.postReport({ request: asked, outcome: 'deny', via: 'policy' });
    inbox.postReport({ request: asked, outcome: 'allow', via: 'policy' });
    await delay(200);
    expect(calls.map((call) => call.path)).toEqual([INBOX_PATHS.reports, INBOX_PATHS.reports]);
    expect(logs).toHaveLength(1);
  });
});
