// The HTTP helpers every tracker and code host transport shares.
import { describe, expect, it } from 'vitest';
import {
  type FailureOf,
  epochMs,
  requestFailure,
  retryAfterTime,
  scrubbedQuote,
  timedExchange,
} from '../../../src/tracker/http.js';
import { LorenzError } from '../../../src/workflow/errors.js';

const NOW = Date.parse('2026-03-01T10:00:00.000Z');
const fail: FailureOf = (message, detail) => new LorenzError('tracker_request', message, detail);

describe('retryAfterTime', () => {
  it('reads seconds and HTTP dates, and nothing else', () => {
    expect(retryAfterTime(new Headers({ 'retry-after': ' 30 ' }), NOW)).toBe(NOW + 30_000);
    const date = 'Sun, 01 Mar 2026 10:05:00 GMT';
    expect(retryAfterTime(new Headers({ 'retry-after': date }), NOW)).toBe(Date.parse(date));
    expect(retryAfterTime(new Headers({ 'retry-after': 'soon' }), NOW)).toBeNull();
    expect(retryAfterTime(new Headers(), NOW)).toBeNull();
  });
});

describe('epochMs', () => {
  it('takes small values as seconds and keeps milliseconds', () => {
    expect(epochMs(1_772_359_200)).toBe(1_772_359_200_000);
    expect(epochMs(1_772_359_200_000)).toBe(1_772_359_200_000);
  });
});

describe('scrubbedQuote', () => {
  it('redacts every secret and cuts a long message', () => {
    expect(scrubbedQuote('a s3cret and b0th', ['s3cret', 'b0th'])).toBe(
      'a [redacted] and [redacted]',
    );
    expect(scrubbedQuote('x'.repeat(400), [])).toBe(`${'x'.repeat(300)}…`);
  });
});

describe('requestFailure', () => {
  const service = { name: 'Jira', timeoutMs: 50 };

  it('names a timeout, an abort and the socket error under the fetch error', () => {
    const timedOut = AbortSignal.abort(new DOMException('late', 'TimeoutError'));
    const timeout = requestFailure(service, new Error('x'), timedOut, fail);
    expect(timeout.message).toBe('Jira did not answer within 50 ms');
    expect(timeout.detail).toEqual({ timeoutMs: 50 });
    expect(requestFailure(service, new Error('x'), AbortSignal.abort(), fail).message).toBe(
      'the request to Jira was aborted',
    );
    const socket = new TypeError('fetch failed', { cause: new Error('ECONNREFUSED') });
    expect(requestFailure(service, socket, new AbortController().signal, fail).message).toBe(
      'the request to Jira failed: ECONNREFUSED',
    );
  });

  it('is what timedExchange throws when fetch gets no answer', async () => {
    const refused = () => Promise.reject(new Error('ECONNRESET'));
    const exchange = timedExchange(
      { ...service, fetch: refused, requestFailure: fail },
      'http://jira.test/x',
      {},
      undefined,
    );
    await expect(exchange).rejects.toThrow('the request to Jira failed: ECONNRESET');
  });
});
