// The runner's inbox endpoints on the tools gateway, over HTTP against a fake InboxStore:
// the same token as /mcp, the attempt check, bounded and validated bodies, the idempotent
// request, the long poll (early on a decision, null on time, ended by the client going or
// the gateway closing), steers handed once per slot, policy reports, and the rate limit.
import http from 'node:http';
import { describe, expect, it } from 'vitest';
import {
  INBOX_LIMITS,
  INBOX_PATHS,
  type InboxDecision,
  type InboxRequest,
  type InboxSteer,
  type PolicyReport,
  type SteerDelivery,
} from '../../../src/api/inbox.js';
import type {
  InboxLimits,
  InboxStore,
  ResolvedRun,
  VerifiedRun,
} from '../../../src/tools/index.js';
import { start, useToolsHarness, type Harness } from '../../support/fakes/tools-gateway.js';
import { inboxRequest } from '../../support/fakes/objects.js';

useToolsHarness();

/** An inbox in memory: what was stored, decided, reported, and who waits for a change. */
class FakeInboxStore implements InboxStore {
  requests = new Map<string, InboxRequest>();
  writes = 0;
  decided = new Map<string, InboxDecision>();
  steers: InboxSteer[] = [];
  marks = new Map<number, number>();
  reports: PolicyReport[] = [];
  waiters = new Set<() => void>();
  seen: VerifiedRun[] = [];

  async storeRequest(run: VerifiedRun, request: InboxRequest) {
    this.seen.push(run);
    if (this.requests.has(request.id)) return;
    this.requests.set(request.id, request);
    this.writes += 1;
  }
  decisionOf(_run: VerifiedRun, id: string) {
    return this.decided.get(id) ?? null;
  }
  nextChange(_run: VerifiedRun, signal: AbortSignal) {
    return new Promise<void>((resolve) => {
      const done = () => {
        this.waiters.delete(done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      this.waiters.add(done);
      signal.addEventListener('abort', done, { once: true });
    });
  }
  /** A change of the run, as an informer update would bring. */
  change(decision?: InboxDecision) {
    if (decision) this.decided.set(decision.requestId, decision);
    for (const waiter of [...this.waiters]) waiter();
  }
  async takeSteers(_run: VerifiedRun, slot: number): Promise<SteerDelivery[]> {
    const mark = this.marks.get(slot) ?? 0;
    const fresh = this.steers.filter((steer) => steer.seq > mark);
    if (fresh.length > 0) this.marks.set(slot, Math.max(...fresh.map((steer) => steer.seq)));
    return fresh.map(({ seq, text, by }) => ({ seq, text, ...(by ? { by } : {}) }));
  }
  policyDecided(_run: VerifiedRun, report: PolicyReport) {
    this.reports.push(report);
  }
}

const request = (over: Partial<InboxRequest> = {}): InboxRequest =>
  inboxRequest({
    toolKind: 'execute',
    command: 'npm test',
    options: [{ optionId: 'allow', name: 'Allow', kind: 'allow_once' }],
    ...over,
  });
const decision = (requestId = 'a1-s0-1'): InboxDecision => ({
  requestId,
  verdict: 'approve',
  by: 'alice',
  via: 'comment',
  at: '2026-12-02T10:01:00Z',
});
const { deadline: _deadline, ...reported } = request();
const report: PolicyReport = { request: reported, outcome: 'allow', via: 'policy' };

async function startInbox(
  limits: InboxLimits = {},
  run: Partial<ResolvedRun> = {},
): Promise<{ h: Harness; store: FakeInboxStore }> {
  const store = new FakeInboxStore();
  const h = await start(run, {}, { inbox: { store, limits } });
  return { h, store };
}

interface Answer {
  status: number;
  json: Record<string, unknown>;
  headers: Headers;
}

async function send(
  h: Harness,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
  init: { token?: string | null; signal?: AbortSignal; raw?: string } = {},
): Promise<Answer> {
  const token = init.token === undefined ? h.token : init.token;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token !== null) headers.authorization = `Bearer ${token}`;
  const response = await fetch(new URL(path, h.url), {
    method,
    headers,
    ...(init.raw !== undefined ? { body: init.raw } : {}),
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    ...(init.signal ? { signal: init.signal } : {}),
  });
  const text = await response.text();
  return {
    status: response.status,
    json: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>),
    headers: response.headers,
  };
}

const until = async (check: () => boolean, ms = 2000): Promise<void> => {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};

const endpoints: Array<[string, 'GET' | 'POST', string, unknown]> = [
  ['requests', 'POST', INBOX_PATHS.requests, request()],
  ['request', 'GET', INBOX_PATHS.request('a1-s0-1'), undefined],
  ['reports', 'POST', INBOX_PATHS.reports, report],
  ['steers', 'POST', INBOX_PATHS.steers, { slot: 0 }],
];

describe('the inbox endpoints: tokens and routing', () => {
  it.each(endpoints)(
    '%s: no token, a forged one, a revoked run → 401',
    async (_n, m, path, body) => {
      const { h, store } = await startInbox();
      expect((await send(h, m, path, body, { token: null })).status).toBe(401);
      const forged = h.token.slice(0, -43) + 'A'.repeat(43);
      expect((await send(h, m, path, body, { token: forged })).status).toBe(401);
      const revoked = await startInbox({}, { revoked: true });
      const answer = await send(revoked.h, m, path, body);
      expect(answer.status).toBe(401);
      expect(answer.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect([store.writes, revoked.store.writes, store.reports.length]).toEqual([0, 0, 0]);
    },
  );

  it.each(endpoints)('%s: 404 when the gateway has no inbox', async (_n, method, path, body) => {
    const h = await start();
    expect((await send(h, method, path, body)).status).toBe(404);
  });

  it.each([
    ['GET on requests', 'GET', INBOX_PATHS.requests, 405],
    ['POST on a request', 'POST', INBOX_PATHS.request('a1-s0-1'), 405],
    ['GET on steers', 'GET', INBOX_PATHS.steers, 405],
    ['an unknown inbox path', 'POST', '/inbox/v1/nothing', 404],
  ] as const)('%s → %i', async (_case, method, path, status) => {
    const { h } = await startInbox();
    const answer = await send(h, method, path, method === 'POST' ? {} : undefined);
    expect(answer.status).toBe(status);
    expect(answer.json).toMatchObject({ error: expect.any(String) });
  });
});

describe('the inbox endpoints: bodies', () => {
  it.each([
    ['requests', INBOX_PATHS.requests, request({ attempt: 2 })],
    ['reports', INBOX_PATHS.reports, { ...report, request: { ...reported, attempt: 2 } }],
  ])("%s of another attempt than the token's → 403", async (_case, path, body) => {
    const { h, store } = await startInbox();
    const answer = await send(h, 'POST', path, body);
    expect(answer.status).toBe(403);
    expect(answer.json).toMatchObject({ error: 'wrong_attempt', field: 'attempt' });
    expect([store.writes, store.reports.length]).toEqual([0, 0]);
  });

  const { id: _id, ...noId } = request();
  it.each<[string, 'GET' | 'POST', string, unknown, string]>([
    ['a request without id', 'POST', INBOX_PATHS.requests, noId, 'id'],
    ['a bad id', 'POST', INBOX_PATHS.requests, request({ id: 'A_1' }), 'id'],
    ['a bad kind', 'POST', INBOX_PATHS.requests, { ...request(), kind: 'shell' }, 'kind'],
    ['a long title', 'POST', INBOX_PATHS.requests, request({ title: 'x'.repeat(1025) }), 'title'],
    [
      'too many options',
      'POST',
      INBOX_PATHS.requests,
      request({ options: Array(17).fill(request().options[0]) }),
      'options',
    ],
    [
      'an option without name',
      'POST',
      INBOX_PATHS.requests,
      request({ options: [{ optionId: 'a', kind: 'x' }] as never }),
      'options.0.name',
    ],
    ['an array', 'POST', INBOX_PATHS.requests, [], 'body'],
    ['a bad outcome', 'POST', INBOX_PATHS.reports, { ...report, outcome: 'maybe' }, 'outcome'],
    ['a negative slot', 'POST', INBOX_PATHS.steers, { slot: -1 }, 'slot'],
    ['no slot', 'POST', INBOX_PATHS.steers, {}, 'slot'],
    [
      'wait_ms not a number',
      'GET',
      `${INBOX_PATHS.request('a1-s0-1')}?wait_ms=soon`,
      undefined,
      'wait_ms',
    ],
    [
      'wait_ms past the most',
      'GET',
      `${INBOX_PATHS.request('a1-s0-1')}?wait_ms=${INBOX_LIMITS.maxWaitMs + 1}`,
      undefined,
      'wait_ms',
    ],
    ['a bad request id in the path', 'GET', `${INBOX_PATHS.requests}/Bad_Id`, undefined, 'id'],
    ['a broken escape in the path', 'GET', `${INBOX_PATHS.requests}/%E0%A4%A`, undefined, 'id'],
  ])('%s → 400 naming the field', async (_case, method, path, body, field) => {
    const { h, store } = await startInbox();
    const answer = await send(h, method, path, body);
    expect(answer.status).toBe(400);
    expect(answer.json).toMatchObject({ error: 'invalid', field });
    expect(answer.json.message).toContain(field);
    expect(store.writes).toBe(0);
  });

  it('a body that is not JSON → 400 naming the body', async () => {
    const { h } = await startInbox();
    const answer = await send(h, 'POST', INBOX_PATHS.requests, undefined, { raw: '{"id":' });
    expect(answer.status).toBe(400);
    expect(answer.json).toMatchObject({ error: 'bad_json', field: 'body' });
  });

  it('a body past 64 KiB → 413, by its length and as it streams in', async () => {
    const { h, store } = await startInbox();
    const big = request({ message: 'x'.repeat(70 * 1024) });
    const answer = await send(h, 'POST', INBOX_PATHS.requests, big);
    expect(answer.status).toBe(413);
    expect(answer.json).toMatchObject({ error: 'too_large' });
    // Chunked, with no content-length: refused once the count passes the bound.
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request(new URL(INBOX_PATHS.requests, h.url), {
        method: 'POST',
        headers: { authorization: `Bearer ${h.token}`, 'transfer-encoding': 'chunked' },
      });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      for (let i = 0; i < 70; i += 1) req.write('x'.repeat(1024));
      req.end();
    });
    expect(status).toBe(413);
    expect(store.writes).toBe(0);
  });
});

describe('the inbox endpoints: requests and decisions', () => {
  it('stores a request once: the same id again → 202, nothing new', async () => {
    const { h, store } = await startInbox();
    for (const _ of [1, 2]) {
      const answer = await send(h, 'POST', INBOX_PATHS.requests, request());
      expect(answer).toMatchObject({ status: 202, json: { id: 'a1-s0-1' } });
    }
    expect(store.writes).toBe(1);
    expect(store.seen[0]).toMatchObject({ namespace: 'team-a', run: 'app-eng-42', attempt: 1 });
  });

  it('answers a decision at once, and null at once with no wait', async () => {
    const { h, store } = await startInbox();
    expect((await send(h, 'GET', INBOX_PATHS.request('a1-s0-1'))).json).toEqual({ decision: null });
    store.change(decision());
    const answer = await send(h, 'GET', `${INBOX_PATHS.request('a1-s0-1')}?wait_ms=30000`);
    expect(answer).toMatchObject({ status: 200, json: { decision: decision() } });
  });

  it('a long poll returns as soon as the decision comes, not on another change', async () => {
    const { h, store } = await startInbox();
    const started = Date.now();
    const polled = send(h, 'GET', `${INBOX_PATHS.request('a1-s0-1')}?wait_ms=20000`);
    await until(() => store.waiters.size === 1);
    store.change(decision('a1-s0-9'));
    await until(() => store.waiters.size === 1);
    store.change(decision());
    expect((await polled).json).toEqual({ decision: decision() });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(store.waiters.size).toBe(0);
  });

  it('a long poll times out to null', async () => {
    const { h, store } = await startInbox();
    const started = Date.now();
    const answer = await send(h, 'GET', `${INBOX_PATHS.request('a1-s0-1')}?wait_ms=150`);
    expect(answer).toMatchObject({ status: 200, json: { decision: null } });
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(store.waiters.size).toBe(0);
  });

  it('a long poll ends when the client goes away', async () => {
    const { h, store } = await startInbox();
    const controller = new AbortController();
    const polled = send(h, 'GET', `${INBOX_PATHS.request('a1-s0-1')}?wait_ms=20000`, undefined, {
      signal: controller.signal,
    });
    await until(() => store.waiters.size === 1);
    controller.abort();
    await expect(polled).rejects.toThrow();
    await until(() => store.waiters.size === 0);
  });

  it('a long poll ends with null when the gateway ends its waits (closing)', async () => {
    const { h, store } = await startInbox();
    const polled = send(h, 'GET', `${INBOX_PATHS.request('a1-s0-1')}?wait_ms=20000`);
    await until(() => store.waiters.size === 1);
    h.endWaits();
    expect(await polled).toMatchObject({ status: 200, json: { decision: null } });
    expect(store.waiters.size).toBe(0);
  });
});

describe('the inbox endpoints: steers, reports, the rate limit', () => {
  it('hands each steer to a slot once', async () => {
    const { h, store } = await startInbox();
    const steer = (seq: number): InboxSteer => ({
      seq,
      text: `do ${seq}`,
      at: '2026-12-02T10:00:00Z',
    });
    store.steers = [steer(1), steer(2)];
    const take = async (slot: number) =>
      (await send(h, 'POST', INBOX_PATHS.steers, { slot })).json.steers as SteerDelivery[];
    expect((await take(0)).map((s) => s.seq)).toEqual([1, 2]);
    expect(await take(0)).toEqual([]);
    store.steers.push(steer(3));
    expect(await take(0)).toEqual([{ seq: 3, text: 'do 3' }]);
    expect((await take(1)).map((s) => s.seq)).toEqual([1, 2, 3]);
  });

  it('records a policy report → 202', async () => {
    const { h, store } = await startInbox();
    expect((await send(h, 'POST', INBOX_PATHS.reports, report)).status).toBe(202);
    expect(store.reports).toEqual([report]);
  });

  it('rate-limits per run: 429 with retry-after past the burst', async () => {
    const { h } = await startInbox({ burst: 2, callsPerMinute: 60 });
    const path = INBOX_PATHS.request('a1-s0-1');
    expect((await send(h, 'GET', path)).status).toBe(200);
    expect((await send(h, 'GET', path)).status).toBe(200);
    const limited = await send(h, 'GET', path);
    expect(limited.status).toBe(429);
    expect(limited.json).toMatchObject({ error: 'rate_limited' });
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    h.clock.now += 60_000;
    expect((await send(h, 'GET', path)).status).toBe(200);
  });
});
