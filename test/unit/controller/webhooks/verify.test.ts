import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  sameHmac,
  sameSecret,
  verifyDelivery,
  type SignedDelivery,
} from '../../../../src/controller/webhooks/verify.js';
import { eachCase } from '../../../support/cases.js';

const NOW = Date.parse('2026-12-02T12:00:00Z');
const hmac = (secret: string, body: string) =>
  createHmac('sha256', secret).update(body).digest('hex');

const delivery = (
  host: SignedDelivery['host'],
  body: string,
  headers: Record<string, string> = {},
  query = '',
): SignedDelivery => ({
  host,
  headers,
  body: Buffer.from(body),
  query: new URLSearchParams(query),
});

describe('verifyDelivery', () => {
  it("accepts GitHub's documented test vector", () => {
    // docs.github.com, "Validating webhook deliveries": the example secret and payload.
    const vector = delivery('github', 'Hello, World!', {
      'x-hub-signature-256':
        'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17',
    });
    expect(verifyDelivery(vector, "It's a Secret to Everybody", NOW)).toEqual({ ok: true });
    expect(verifyDelivery(vector, 'another secret', NOW)).toEqual({ ok: false, reason: 'forged' });
  });

  const linearBody = (at: number) => JSON.stringify({ type: 'Issue', webhookTimestamp: at });
  const cases: {
    name: string;
    delivery: SignedDelivery;
    expected: ReturnType<typeof verifyDelivery>;
  }[] = [
    {
      name: 'github: no signature',
      delivery: delivery('github', '{}'),
      expected: { ok: false, reason: 'unsigned' },
    },
    {
      name: 'github: the sha1 header only is unsigned',
      delivery: delivery('github', '{}', { 'x-hub-signature': `sha1=${'0'.repeat(40)}` }),
      expected: { ok: false, reason: 'unsigned' },
    },
    {
      name: 'github: no sha256= prefix',
      delivery: delivery('github', '{}', { 'x-hub-signature-256': hmac('s3cret', '{}') }),
      expected: { ok: false, reason: 'forged' },
    },
    {
      name: 'github: a short signature',
      delivery: delivery('github', '{}', { 'x-hub-signature-256': 'sha256=abcd' }),
      expected: { ok: false, reason: 'forged' },
    },
    {
      name: 'github: signed over another body',
      delivery: delivery('github', '{"a":2}', {
        'x-hub-signature-256': `sha256=${hmac('s3cret', '{"a":1}')}`,
      }),
      expected: { ok: false, reason: 'forged' },
    },
    {
      name: 'github: signed',
      delivery: delivery('github', '{"a":1}', {
        'x-hub-signature-256': `sha256=${hmac('s3cret', '{"a":1}')}`,
      }),
      expected: { ok: true },
    },
    {
      name: 'gitlab: the token',
      delivery: delivery('gitlab', '{}', { 'x-gitlab-token': 's3cret' }),
      expected: { ok: true },
    },
    {
      name: 'gitlab: a wrong token',
      delivery: delivery('gitlab', '{}', { 'x-gitlab-token': 's3cre' }),
      expected: { ok: false, reason: 'forged' },
    },
    {
      name: 'gitlab: no token',
      delivery: delivery('gitlab', '{}'),
      expected: { ok: false, reason: 'unsigned' },
    },
    {
      name: 'linear: signed and fresh',
      delivery: delivery('linear', linearBody(NOW - 5000), {
        'linear-signature': hmac('s3cret', linearBody(NOW - 5000)),
      }),
      expected: { ok: true },
    },
    {
      name: 'linear: signed but stale',
      delivery: delivery('linear', linearBody(NOW - 61_000), {
        'linear-signature': hmac('s3cret', linearBody(NOW - 61_000)),
      }),
      expected: { ok: false, reason: 'stale' },
    },
    {
      name: 'linear: signed, from the future',
      delivery: delivery('linear', linearBody(NOW + 61_000), {
        'linear-signature': hmac('s3cret', linearBody(NOW + 61_000)),
      }),
      expected: { ok: false, reason: 'stale' },
    },
    {
      name: 'linear: signed, no timestamp',
      delivery: delivery('linear', '{"type":"Issue"}', {
        'linear-signature': hmac('s3cret', '{"type":"Issue"}'),
      }),
      expected: { ok: false, reason: 'stale' },
    },
    {
      name: 'linear: a fresh body with a forged signature',
      delivery: delivery('linear', linearBody(NOW), { 'linear-signature': hmac('x', 'y') }),
      expected: { ok: false, reason: 'forged' },
    },
    {
      name: 'linear: unsigned',
      delivery: delivery('linear', linearBody(NOW)),
      expected: { ok: false, reason: 'unsigned' },
    },
    {
      name: 'jira: the secret in the URL',
      delivery: delivery('jira', '{}', {}, 'secret=s3cret'),
      expected: { ok: true },
    },
    {
      name: 'jira: a wrong secret in the URL',
      delivery: delivery('jira', '{}', {}, 'secret=s3cret2'),
      expected: { ok: false, reason: 'forged' },
    },
    {
      name: 'jira: a secret in a header does not count',
      delivery: delivery('jira', '{}', { 'x-gitlab-token': 's3cret' }),
      expected: { ok: false, reason: 'unsigned' },
    },
  ];
  it.each(cases)('$name', ({ delivery: given, expected }) => {
    expect(verifyDelivery(given, 's3cret', NOW)).toEqual(expected);
  });
});

describe('constant-time comparisons', () => {
  eachCase('sameSecret(%j, %j) is %s', sameSecret, [
    ['s3cret', 's3cret', true],
    ['s3cret', 's3cre', false],
    ['', 's3cret', false],
    ['s3cret-and-more', 's3cret', false],
  ]);

  it('sameHmac refuses malformed hex without throwing', () => {
    const body = Buffer.from('x');
    expect(sameHmac('zz'.repeat(32), 'k', body)).toBe(false);
    expect(sameHmac(hmac('k', 'x').toUpperCase(), 'k', body)).toBe(true);
    expect(sameHmac(`${hmac('k', 'x')}00`, 'k', body)).toBe(false);
  });
});
