import { describe, expect, it } from 'vitest';
import { EtagCache, nextLink } from '../../../src/tracker/github/index.js';
import { codeForRole, githubFailure } from '../../../src/tracker/github/transport.js';
import { LorenzError } from '../../../src/workflow/errors.js';
import { githubIssue, recordedScenario } from '../../support/fakes/github-data.js';
import { checkRequest, checkResponse, findOperation } from '../../support/fakes/github-openapi.js';
import type { GithubFault, Pagination } from '../../support/fakes/github-server.js';
import { NOW, harnessPerTest } from '../../support/fakes/github-tracker.js';
import { failureOf } from '../../support/lorenz-errors.js';
import { eachCase } from '../../support/cases.js';

const start = harnessPerTest();

/** Everything an error carries that could end up in a condition, an Event or a log. */
const everything = (error: LorenzError) => `${error.message} ${JSON.stringify(error.detail)}`;

const board = [{ number: 1, title: 'One' }];

describe('github: rate limits', () => {
  it.each<[string, GithubFault | 'primary', string]>([
    ['primary: remaining 0 until the reset', 'primary', '2030-03-17T17:46:40.000Z'],
    [
      'secondary with Retry-After',
      { kind: 'secondary', retryAfterSeconds: 30 },
      '2026-03-01T12:00:30.000Z',
    ],
    ['secondary by its message alone: a minute', { kind: 'secondary' }, '2026-03-01T12:01:00.000Z'],
    [
      '429 with Retry-After',
      { kind: 'http-429', retryAfterSeconds: 5 },
      '2026-03-01T12:00:05.000Z',
    ],
  ])('%s', async (_, fault, retryAt) => {
    const { standIn, tracker } = await start(board);
    if (fault === 'primary') standIn.rateLimit.remaining = 0;
    else standIn.faults.push(fault);
    const error = await failureOf(tracker().fetchCandidates());
    expect(error.code).toBe('tracker_rate_limited');
    expect(error.detail).toMatchObject({ retryAt, retryAfterMs: Date.parse(retryAt) - NOW });
    expect(error.message).toContain(retryAt);
  });

  it('a 403 that is no rate limit is tracker_status', async () => {
    const { standIn, tracker } = await start(board);
    standIn.faults.push({
      kind: 'status',
      status: 403,
      message: 'Resource not accessible by integration',
    });
    const error = await failureOf(tracker().fetchCandidates());
    expect(error.code).toBe('tracker_status');
    expect(error.message).toMatch(/HTTP 403 .*Resource not accessible/);
  });
});

describe('github: failures', () => {
  const [recordedError] = recordedScenario('errors');
  it.each<[string, GithubFault, string, RegExp]>([
    [
      '401',
      { kind: 'status', status: 401, message: 'Bad credentials' },
      'tracker_status',
      /HTTP 401.*Bad credentials/,
    ],
    [
      '404 on the list (no such repository)',
      { kind: 'status', status: 404, message: 'Not Found' },
      'tracker_status',
      /HTTP 404/,
    ],
    ['500', { kind: 'status', status: 500, message: 'Server Error' }, 'tracker_status', /HTTP 500/],
    [
      'the recorded 422',
      { kind: 'recorded', interaction: recordedError! },
      'tracker_status',
      /HTTP 422.*Validation Failed/,
    ],
    ['a truncated body', { kind: 'malformed' }, 'tracker_response', /not JSON/],
    ['an object where the list belongs', { kind: 'not-a-list' }, 'tracker_response', /no list/],
    ['a cut connection', { kind: 'reset' }, 'tracker_request', /request to GitHub failed/],
    ['silence', { kind: 'hang' }, 'tracker_request', /did not answer within 200 ms/],
  ])('%s', async (_, fault, code, message) => {
    const { standIn, tracker } = await start(board);
    standIn.faults.push(fault);
    const error = await failureOf(tracker({}, { timeoutMs: 200 }).fetchCandidates());
    expect(error.code).toBe(code);
    expect(error.message).toMatch(message);
    expect(everything(error)).not.toContain(standIn.token);
  });

  it('fetchByIds: a failure other than 404/410 is not taken for a gone issue', async () => {
    const { standIn, tracker } = await start(board);
    standIn.faults.push({ kind: 'status', status: 502, message: 'Bad Gateway' });
    expect((await failureOf(tracker().fetchByIds(['1']))).code).toBe('tracker_status');
  });

  it('never lets the token into an error, even when the server echoes it', async () => {
    const { standIn, tracker } = await start(board);
    standIn.faults.push({ kind: 'echo-authorization' });
    const error = await failureOf(tracker().fetchCandidates());
    expect(error.code).toBe('tracker_status');
    expect(error.message).toContain('[redacted]');
    expect(everything(error)).not.toContain(standIn.token);
  });
});

describe('github: pagination that does not add up', () => {
  const many = Array.from({ length: 120 }, (_, index) => ({
    number: index + 1,
    title: `Issue ${index + 1}`,
  }));
  it.each<[Pagination, RegExp]>([
    ['repeat-next', /earlier page/],
    ['endless', /past 5/],
    ['foreign-next', /leaves http:\/\/127\.0\.0\.1/],
  ])('%s', async (pagination, message) => {
    const { standIn, tracker } = await start(many);
    standIn.pagination = pagination;
    const error = await failureOf(tracker({}, { maxPages: 5 }).fetchCandidates());
    expect(error.code).toBe('tracker_pagination');
    expect(error.message).toMatch(message);
    expect(
      standIn.requests.every((request) => request.url.host === new URL(standIn.url).host),
    ).toBe(true);
  });

  eachCase('nextLink(%j)', nextLink, [
    ['<https://a/x?page=2>; rel="next", <https://a/x?page=5>; rel="last"', 'https://a/x?page=2'],
    ['<https://a/x?q=a,b&page=3>; rel="prev next"', 'https://a/x?q=a,b&page=3'],
    ['<https://a/x?page=1>; rel="first"', null],
    [null, null],
  ]);
});

describe('github: items that cannot be normalized are dropped', () => {
  it('keeps the good ones', async () => {
    const { standIn, tracker } = await start(
      Array.from({ length: 6 }, (_, index) => ({ number: index + 1, title: `Issue ${index + 1}` })),
    );
    standIn.rewrite = (items) => {
      delete items[0]?.number;
      if (items[1]) items[1].title = 42;
      if (items[2]) items[2].labels = 'bug';
      if (items[3]) items[3].state = 'archived';
      return [...items, 'not an issue', null];
    };
    const issues = await tracker().fetchCandidates();
    expect(issues.map((issue) => issue.id)).toEqual(['5', '6']);
  });
});

describe('github: recorded interactions of @octokit/fixtures', () => {
  it('replays paginate-issues: five recorded pages followed by their own Link headers', async () => {
    const { standIn, tracker } = await start([], {
      repository: 'octokit-fixture-org/paginate-issues',
    });
    standIn.replay = recordedScenario('paginate-issues');
    const issues = await tracker().fetchCandidates();
    expect(issues.map((issue) => issue.id)).toEqual(
      Array.from({ length: 13 }, (_, index) => String(13 - index)),
    );
    expect(issues[0]?.identifier).toBe('octokit-fixture-org/paginate-issues#13');
    expect(standIn.requests.slice(1).map((r) => `${r.url.pathname}${r.url.search}`)).toEqual(
      [2, 3, 4, 5].map((page) => `/repositories/1000/issues?per_page=3&page=${page}`),
    );
  });
});

describe('the stand-in’s own checks', () => {
  it('flags requests and answers the description does not allow', () => {
    const list = new URL('http://x/repos/acme/app/issues?state=opened&bogus=1&per_page=ten');
    expect(checkRequest('GET', list)).toEqual([
      'GET /repos/{owner}/{repo}/issues: query state=opened does not fit its schema',
      'GET /repos/{owner}/{repo}/issues: undocumented query parameter bogus',
      'GET /repos/{owner}/{repo}/issues: query per_page=ten does not fit its schema',
    ]);
    expect(checkRequest('GET', new URL('http://x/repos/acme/app/issues/abc'))).toHaveLength(1);
    expect(checkRequest('GET', new URL('http://x/no/such/path'))).toHaveLength(1);
    const operation = findOperation('GET', '/repos/acme/app/issues/1')?.operation;
    if (operation === undefined) throw new Error('issues/get is documented');
    const issue = githubIssue('acme/app', { number: 1, title: 'One' });
    expect(checkResponse(operation, 200, issue)).toEqual([]);
    expect(checkResponse(operation, 200, { ...issue, number: '1' })).not.toEqual([]);
    expect(checkResponse(operation, 200, { ...issue, title: undefined })).not.toEqual([]);
  });
});

describe('the ETag cache', () => {
  it('evicts the least recently used answers past its entry and byte bounds', () => {
    const cache = new EtagCache(3, 10);
    const answer = (body: string) => ({ etag: `"${body}"`, body, link: null });
    cache.set('t', 'a', answer('1234'));
    cache.set('t', 'b', answer('1234'));
    expect(cache.get('t', 'a')?.body).toBe('1234');
    cache.set('t', 'c', answer('1234'));
    // 12 bytes > 10: b, the least recently used, goes.
    expect([cache.get('t', 'b'), cache.size]).toEqual([undefined, 2]);
    cache.set('t', 'huge', answer('x'.repeat(11)));
    expect(cache.get('t', 'huge')).toBeUndefined();
    expect(cache.get('other-token', 'a')).toBeUndefined();
  });
});

describe('github: the transport in the code host role', () => {
  it.each([
    ['tracker_request', undefined, 'tracker_request'],
    ['tracker_status', 'tracker', 'tracker_status'],
    ['tracker_request', 'codehost', 'codehost_request'],
    ['tracker_status', 'codehost', 'codehost_status'],
    ['tracker_response', 'codehost', 'codehost_response'],
    ['tracker_rate_limited', 'codehost', 'codehost_rate_limited'],
    ['tracker_pagination', 'codehost', 'codehost_response'],
    ['codehost_status', 'codehost', 'codehost_status'],
    ['invalid_tracker_config', 'codehost', 'invalid_tracker_config'],
  ] as const)('raises %s as %s in role %s', (code, role, expected) => {
    expect(codeForRole(role, code)).toBe(expected);
    const error = githubFailure({ token: 'ghp_secret', role }, code, 'echo ghp_secret');
    expect(error).toMatchObject({ code: expected, message: 'echo [redacted]' });
    expect(error.detail).toEqual(
      role === 'codehost' ? { codehost: 'github' } : { tracker: 'github' },
    );
  });
});
