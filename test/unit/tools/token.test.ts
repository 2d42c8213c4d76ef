// The gateway's small parts on their own: token format and comparison, the token bucket,
// the token cache, bind addresses.
import { describe, expect, it } from 'vitest';
import {
  bearerToken,
  createRateLimiter,
  createTokenVerifier,
  mintToken,
  parseBindAddress,
  parseToken,
  sha256HexEqual,
  tokenSha256,
  type ResolvedRun,
} from '../../../src/tools/index.js';
import { eachCase } from '../../support/cases.js';

const SECRET = Buffer.alloc(32, 7);

describe('tokens', () => {
  it('round-trips its subject, dots in the run name included', () => {
    const token = mintToken({ namespace: 'ns', run: 'app.eng-42', attempt: 12 }, SECRET);
    expect(token).toBe(`lzt1.ns.app.eng-42.12.${SECRET.toString('base64url')}`);
    expect(parseToken(token)).toEqual({ namespace: 'ns', run: 'app.eng-42', attempt: 12 });
  });

  it('has 32 fresh random bytes each time', () => {
    const a = mintToken({ namespace: 'ns', run: 'r', attempt: 1 });
    const b = mintToken({ namespace: 'ns', run: 'r', attempt: 1 });
    expect(a).not.toBe(b);
    expect(a.split('.').at(-1)).toHaveLength(43);
  });

  const secret = SECRET.toString('base64url');
  it.each([
    ['wrong version', `lzt2.ns.run.1.${secret}`],
    ['too few parts', `lzt1.ns.1.${secret}`],
    ['upper-case namespace', `lzt1.NS.run.1.${secret}`],
    ['attempt 0', `lzt1.ns.run.0.${secret}`],
    ['attempt not a number', `lzt1.ns.run.x.${secret}`],
    ['short secret', 'lzt1.ns.run.1.abc'],
    ['secret outside base64url', `lzt1.ns.run.1.${secret.slice(0, 42)}+`],
    ['empty run', `lzt1.ns..1.${secret}`],
    ['far too long', `lzt1.ns.${'a'.repeat(400)}.1.${secret}`],
  ])('refuses %s', (_case, token) => {
    expect(parseToken(token)).toBeNull();
  });

  eachCase('bearerToken(%j) is %j', bearerToken, [
    [undefined, null],
    [['Bearer a', 'Bearer b'], null],
    ['Bearer abc', 'abc'],
    ['bearer  abc ', 'abc'],
    ['Basic abc', null],
    ['Bearer a b', null],
  ]);

  it('compares sha256 digests, never matching a malformed one', () => {
    const hash = tokenSha256('x');
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(sha256HexEqual(hash, hash.toUpperCase())).toBe(true);
    expect(sha256HexEqual(hash, tokenSha256('y'))).toBe(false);
    expect(sha256HexEqual(hash, '')).toBe(false);
    expect(sha256HexEqual(hash, hash.slice(2))).toBe(false);
  });
});

describe('the rate limiter', () => {
  it('allows the burst, then refills at the rate, per key', () => {
    let now = 0;
    const limiter = createRateLimiter({ perMinute: 60, burst: 2, now: () => now });
    expect([limiter.take('a'), limiter.take('a'), limiter.take('a')]).toEqual([
      { ok: true },
      { ok: true },
      { ok: false, retryAfterSeconds: 1 },
    ]);
    expect(limiter.take('b')).toEqual({ ok: true });
    now += 1_000;
    expect(limiter.take('a')).toEqual({ ok: true });
    now += 60_000;
    expect([limiter.take('a'), limiter.take('a'), limiter.take('a').ok]).toEqual([
      { ok: true },
      { ok: true },
      false,
    ]);
  });

  it('keeps a bounded number of buckets without forgetting a drained one early', () => {
    let now = 0;
    const limiter = createRateLimiter({ perMinute: 1, burst: 1, now: () => now, maxBuckets: 2 });
    expect(limiter.take('drained').ok).toBe(true);
    now += 1;
    for (const key of ['x', 'y', 'z']) limiter.take(key);
    // Every bucket is drained, so the oldest had to go: a bounded leniency, not a leak.
    expect(limiter.take('drained').ok).toBe(true);
  });

  it.each([[{ perMinute: 0 }], [{ burst: 0 }]])('refuses %j', (options) => {
    expect(() => createRateLimiter(options)).toThrow(RangeError);
  });
});

describe('the token verifier', () => {
  const token = mintToken({ namespace: 'ns', run: 'r', attempt: 1 });
  const resolved = (revoked = false): ResolvedRun => ({
    uid: 'u',
    tokenHash: tokenSha256(token),
    issueId: 'i',
    trackerKind: 'memory',
    workflow: { tracker: { activeStates: [], terminalStates: [] } },
    createIssue: false,
    linearGraphql: false,
    revoked,
  });

  it('keeps at most cacheSize tokens, least recently used out first', async () => {
    const tokens = ['a', 'b', 'c'].map((run) => mintToken({ namespace: 'ns', run, attempt: 1 }));
    const asked: string[] = [];
    const verifier = createTokenVerifier({
      cacheSize: 2,
      resolveRun: (_ns, run) => {
        asked.push(run);
        const mine = tokens.find((t) => t.includes(`.${run}.`)) ?? '';
        return { ...resolved(), tokenHash: tokenSha256(mine) };
      },
    });
    for (const t of [tokens[0], tokens[1], tokens[0], tokens[2], tokens[0], tokens[1]]) {
      expect((await verifier.verify(`Bearer ${t}`)).ok).toBe(true);
    }
    expect(asked).toEqual(['a', 'b', 'c', 'b']);
  });

  it.each([
    [undefined, 'no_token'],
    ['Bearer nope', 'malformed'],
    [`Bearer ${token.replace('.r.', '.s.')}`, 'unknown_run'],
  ])('%j is refused as %s', async (header, refusal) => {
    const verifier = createTokenVerifier({
      resolveRun: (_ns, run) => (run === 'r' ? resolved() : null),
    });
    expect(await verifier.verify(header)).toEqual({ ok: false, refusal });
  });

  it('says revoked only to the holder of the right token', async () => {
    const verifier = createTokenVerifier({ resolveRun: () => resolved(true) });
    expect(await verifier.verify(`Bearer ${token}`)).toEqual({ ok: false, refusal: 'revoked' });
    const forged = `${token.slice(0, -43)}${'B'.repeat(43)}`;
    expect(await verifier.verify(`Bearer ${forged}`)).toEqual({
      ok: false,
      refusal: 'hash_mismatch',
    });
  });
});

describe('bind addresses', () => {
  eachCase('%s', parseBindAddress, [
    [':8090', { host: undefined, port: 8090 }],
    ['8090', { host: undefined, port: 8090 }],
    ['127.0.0.1:0', { host: '127.0.0.1', port: 0 }],
    ['[::1]:8090', { host: '::1', port: 8090 }],
  ]);

  it.each(['', ':http', ':70000', 'host:'])('refuses %j', (address) => {
    expect(() => parseBindAddress(address)).toThrow(RangeError);
  });
});
