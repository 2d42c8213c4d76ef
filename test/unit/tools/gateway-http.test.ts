// The tools gateway's HTTP side (harness in fakes/tools-gateway.ts): 401 for every bad token
// with nothing written, revocation through the token cache, methods and paths, and the
// per-run rate limit.
import { describe, expect, it } from 'vitest';
import { mintToken } from '../../../src/tools/index.js';
import {
  call,
  connect,
  post,
  resolvedFor,
  start,
  useToolsHarness,
} from '../../support/fakes/tools-gateway.js';

useToolsHarness();

describe('authentication', () => {
  const forge = (token: string) => token.slice(0, -43) + 'A'.repeat(43);
  const otherRun = (token: string) => token.replace('app-eng-42', 'app-eng-7');
  it.each([
    ['no header', () => null],
    ['not Bearer', (t: string) => `Basic ${t}`],
    ['a bad format', () => 'Bearer lzt1.team-a.app-eng-42.1.short'],
    ['another version', (t: string) => `Bearer ${t.replace(/^lzt1/, 'lzt2')}`],
    ['a forged secret', (t: string) => `Bearer ${forge(t)}`],
    ["another run's names on this secret", (t: string) => `Bearer ${otherRun(t)}`],
    ['another attempt', (t: string) => `Bearer ${t.replace('.1.', '.2.')}`],
  ])('%s → 401 and nothing written', async (_case, header) => {
    const h = await start();
    // The other run exists, with its own token: this run's secret must not open it.
    const other = mintToken({ namespace: 'team-a', run: 'app-eng-7', attempt: 1 });
    h.runs.set('team-a/app-eng-7/1', resolvedFor(other, { issueId: 'uuid-7' }));
    const answer = await post(h, header(h.token));
    expect(answer.status).toBe(401);
    expect(JSON.parse(answer.body)).toMatchObject({ jsonrpc: '2.0', error: { code: -32001 } });
    expect(h.writer.writes).toEqual([]);
    expect(h.records).toEqual([]);
  });

  it('the SDK client fails to connect without a valid token', async () => {
    const h = await start();
    await expect(connect(h, forge(h.token))).rejects.toThrow(/401|Unauthorized/);
  });

  it('a revoked run → 401', async () => {
    const h = await start({ revoked: true });
    expect((await post(h, `Bearer ${h.token}`)).status).toBe(401);
    expect(h.writer.writes).toEqual([]);
  });

  it('revocation reaches a cached token: at once with revoke(), else after the cache TTL', async () => {
    const h = await start({}, { tokenCacheTtlMs: 10_000 });
    expect((await post(h, `Bearer ${h.token}`)).status).toBe(200);
    expect((await post(h, `Bearer ${h.token}`)).status).toBe(200);
    expect(h.resolveCalls).toBe(1);
    const finished = { ...h.runs.get('team-a/app-eng-42/1')!, revoked: true };
    h.runs.set('team-a/app-eng-42/1', finished);
    expect((await post(h, `Bearer ${h.token}`)).status).toBe(200);
    h.revoke('team-a', 'app-eng-42');
    expect((await post(h, `Bearer ${h.token}`)).status).toBe(401);

    const g = await start({}, { tokenCacheTtlMs: 10_000 });
    expect((await post(g, `Bearer ${g.token}`)).status).toBe(200);
    g.runs.set('team-a/app-eng-42/1', { ...g.runs.get('team-a/app-eng-42/1')!, revoked: true });
    g.clock.now += 10_001;
    expect((await post(g, `Bearer ${g.token}`)).status).toBe(401);
  });

  it('a resolver failure is a 503 and writes nothing', async () => {
    const h = await start(
      {},
      {},
      {
        resolveRun: () => Promise.reject(new Error('apiserver away')),
      },
    );
    expect((await post(h, `Bearer ${h.token}`)).status).toBe(503);
    expect(h.writer.writes).toEqual([]);
  });

  it.each([
    ['GET', 405],
    ['DELETE', 405],
  ])('%s /mcp with a valid token → %i (stateless)', async (method, status) => {
    const h = await start();
    const response = await fetch(h.url, {
      method,
      headers: { authorization: `Bearer ${h.token}` },
    });
    expect(response.status).toBe(status);
  });

  it('another path → 404', async () => {
    const h = await start();
    const response = await fetch(new URL('/other', h.url), { method: 'POST' });
    expect(response.status).toBe(404);
  });
});

describe('rate limit per run', () => {
  it('refuses past the burst, tells when to retry, and refills with time', async () => {
    const h = await start({}, { burst: 3, callsPerMinute: 30 });
    const client = await connect(h);
    const results = [];
    for (let i = 0; i < 4; i += 1)
      results.push(await call(client, 'tracker_comment', { body: `n${i}` }));
    expect(results.map((r) => r.isError)).toEqual([false, false, false, true]);
    expect(results[3]?.text).toBe('rate limited: retry after 2 s');
    expect(h.writer.writes).toHaveLength(3);
    // Calls the SDK refuses (bad arguments) count too.
    h.clock.now += 2_000;
    expect((await call(client, 'tracker_comment', {})).isError).toBe(true);
    expect((await call(client, 'tracker_comment', { body: 'late' })).text).toMatch(/rate limited/);
    h.clock.now += 2_000;
    expect((await call(client, 'tracker_comment', { body: 'later' })).isError).toBe(false);
    expect(h.records.map((r) => r.ok)).toEqual([true, true, true, false, false, false, true]);
  });

  it('is per run: another run keeps its own bucket', async () => {
    const h = await start({}, { burst: 1 });
    const other = mintToken({ namespace: 'team-a', run: 'app-eng-7', attempt: 1 });
    h.runs.set(
      'team-a/app-eng-7/1',
      resolvedFor(other, { issueId: 'uuid-7', issueIdentifier: 'ENG-7' }),
    );
    const mine = await connect(h);
    const theirs = await connect(h, other);
    expect((await call(mine, 'tracker_read_issue')).isError).toBe(false);
    expect((await call(mine, 'tracker_read_issue')).text).toMatch(/rate limited/);
    expect((await call(theirs, 'tracker_comment', { body: 'x' })).isError).toBe(false);
    expect(h.writer.writes).toEqual(['comment uuid-7 x']);
  });
});
