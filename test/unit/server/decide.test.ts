// The web view's decide action: reviewed as "patch issueruns" (403 without, nothing written),
// written with the caller's own client as `lorenz approve` writes it (by: the caller), and
// every refusal mapped to the view API's codes: 409 for a request that does not wait or a run
// that kept changing, 400 for a verdict that does not fit or the apiserver's 422.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { InboxPending } from '../../../src/api/inbox.js';
import {
  KubeApiError,
  type KubeClient,
  type RequestOptions,
} from '../../../src/controller/runtime/client.js';
import type { AccessControl, CallerAccess } from '../../../src/server/access.js';
import type { AccessAttributes } from '../../../src/server/auth.js';
import type { ViewCache } from '../../../src/server/cache.js';
import { decideAction, decideRequestOf } from '../../../src/server/decide.js';
import { ApiError } from '../../../src/server/errors.js';
import { viewHandler } from '../../../src/server/view-server.js';
import type { DecideRequest } from '../../../src/server/view-api.js';

const PERMISSION: InboxPending = {
  id: 'a1-s0-1',
  kind: 'permission',
  slot: 0,
  attempt: 1,
  turn: 1,
  title: 'push',
  toolKind: 'execute',
  command: 'git push --force origin main',
  options: [],
  askedAt: '2026-12-02T17:00:00Z',
  deadline: '2026-12-02T18:00:00Z',
};
const QUESTION: InboxPending = {
  ...PERMISSION,
  id: 'a1-s0-2',
  kind: 'question',
  message: 'Which?',
};

const runWith = (pending: InboxPending[]) => ({
  metadata: { name: 'eng-42', namespace: 'team-a', resourceVersion: '11' },
  spec: { decisions: [] },
  status: { phase: 'Running', inbox: { pending } },
});

interface Fixture {
  access: CallerAccess;
  reviews: AccessAttributes[];
  patches: RequestOptions[];
}

function fixture(options: { may: boolean; run?: unknown; patchFailures?: Error[] }): Fixture {
  const reviews: AccessAttributes[] = [];
  const patches: RequestOptions[] = [];
  const failures = [...(options.patchFailures ?? [])];
  const client: KubeClient = {
    async request<T>(request: RequestOptions): Promise<T> {
      if (request.method === 'PATCH') {
        patches.push(request);
        const failure = failures.shift();
        if (failure) throw failure;
        return {} as T;
      }
      if (!options.run) throw new KubeApiError(404, { message: 'gone' }, 'GET', request.path);
      return options.run as T;
    },
    stream: async () => {},
    close() {},
  };
  const yes = async () => true;
  const access: CallerAccess = {
    caller: { username: 'system:serviceaccount:default:operator', groups: [] },
    token: 't',
    may: async (attributes) => {
      reviews.push(attributes);
      return options.may;
    },
    mayReadRuns: yes,
    mayReadWorkflows: yes,
    writer: () => ({ client, release() {} }),
  };
  return { access, reviews, patches };
}

const decide = (f: Fixture, body: DecideRequest) =>
  decideAction(f.access, 'team-a', 'eng-42', body);

const failureOf = async (promise: Promise<unknown>): Promise<ApiError> => {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
};

describe('the decide action', () => {
  it('without patch on the IssueRun: 403 naming the permission, nothing written', async () => {
    const f = fixture({ may: false, run: runWith([PERMISSION]) });
    const error = await failureOf(decide(f, { verdict: 'approve' }));
    expect(error.status).toBe(403);
    expect(error.message).toBe(
      'system:serviceaccount:default:operator may not patch issueruns.lorenz.dev eng-42 in namespace team-a',
    );
    expect(f.reviews).toEqual([
      { verb: 'patch', resource: 'issueruns', namespace: 'team-a', name: 'eng-42' },
    ]);
    expect(f.patches).toEqual([]);
  });

  it.each<[string, InboxPending[], DecideRequest, Record<string, unknown>]>([
    ['approve', [PERMISSION], { verdict: 'approve' }, { requestId: 'a1-s0-1', verdict: 'approve' }],
    [
      'approve always, the request named',
      [PERMISSION, QUESTION],
      { verdict: 'approve_always', requestId: 'a1-s0-1' },
      { requestId: 'a1-s0-1', verdict: 'approve_always' },
    ],
    [
      'deny with a reason',
      [PERMISSION],
      { verdict: 'deny', reason: '<b>not</b> on main' },
      { requestId: 'a1-s0-1', verdict: 'deny', reason: '<b>not</b> on main' },
    ],
    [
      'an answer',
      [QUESTION],
      { verdict: 'answer', answer: 'the feature branch' },
      { requestId: 'a1-s0-2', verdict: 'answer', answer: 'the feature branch' },
    ],
  ])('%s: writes spec.decisions with the caller as by', async (_name, pending, body, want) => {
    const f = fixture({ may: true, run: runWith(pending) });
    const result = await decide(f, body);
    expect(result).toEqual({
      action: 'decided',
      namespace: 'team-a',
      name: 'eng-42',
      requestId: want.requestId,
      verdict: want.verdict,
    });
    expect(f.patches).toHaveLength(1);
    expect(f.patches[0]?.path).toBe('/apis/lorenz.dev/v1alpha1/namespaces/team-a/issueruns/eng-42');
    expect(f.patches[0]?.body).toEqual({
      metadata: { resourceVersion: '11' },
      spec: { decisions: [{ ...want, by: 'system:serviceaccount:default:operator' }] },
    });
  });

  const conflict = () =>
    new KubeApiError(409, { message: 'the object has been modified' }, 'PATCH', '/x');
  it.each<[string, unknown, DecideRequest, Error[], number, string, RegExp]>([
    [
      'nothing waits',
      runWith([]),
      { verdict: 'approve' },
      [],
      409,
      'conflict',
      /no request is waiting/,
    ],
    [
      'the request does not wait',
      runWith([PERMISSION]),
      { verdict: 'approve', requestId: 'a9-s9-9' },
      [],
      409,
      'conflict',
      /no request a9-s9-9 is waiting/,
    ],
    [
      'the run kept changing (409 on every write)',
      runWith([PERMISSION]),
      { verdict: 'approve' },
      [conflict(), conflict(), conflict()],
      409,
      'conflict',
      /kept changing/,
    ],
    [
      'a question approved',
      runWith([QUESTION]),
      { verdict: 'approve' },
      [],
      400,
      'invalid_parameter',
      /is a question/,
    ],
    [
      "the apiserver's 422",
      runWith([PERMISSION]),
      { verdict: 'approve' },
      [new KubeApiError(422, { message: 'spec.decisions: Too many: 33' }, 'PATCH', '/x')],
      400,
      'invalid_parameter',
      /Too many/,
    ],
    [
      "the apiserver's own 403 (RBAC changed after the review)",
      runWith([PERMISSION]),
      { verdict: 'approve' },
      [new KubeApiError(403, { message: 'cannot patch resource "issueruns"' }, 'PATCH', '/x')],
      403,
      'forbidden',
      /cannot patch/,
    ],
    ['no such run', undefined, { verdict: 'approve' }, [], 404, 'not_found', /not found/],
  ])('%s: %i %s', async (_name, run, body, failures, status, code, message) => {
    const f = fixture({ may: true, run, patchFailures: failures });
    const error = await failureOf(decide(f, body));
    expect({ status: error.status, code: error.code }).toEqual({ status, code });
    expect(error.message).toMatch(message);
  });

  it.each([
    [null, /not a JSON object/],
    [{ verdict: 'maybe' }, /verdict must be one of/],
    [{ verdict: 'deny', reason: 7 }, /reason must be a string/],
  ])('refuses the body %j', (body, message) => {
    expect(() => decideRequestOf(body)).toThrow(message);
  });
});

describe('POST /api/v1/namespaces/{ns}/runs/{name}/decide', () => {
  let server: http.Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  });

  async function serve(f: Fixture): Promise<string> {
    const access: AccessControl = { mode: 'cluster', forRequest: async () => f.access };
    const cache = { hasSynced: () => true } as unknown as ViewCache;
    const { handler } = viewHandler({
      access,
      cache,
      client: f.access.writer().client,
      webRoot: '/nonexistent',
    });
    server = http.createServer(handler);
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/namespaces/team-a/runs/eng-42/decide`;
  }

  it('reads the JSON body and answers the ActionResult', async () => {
    const f = fixture({ may: true, run: runWith([PERMISSION]) });
    const response = await fetch(await serve(f), {
      method: 'POST',
      headers: { 'X-Lorenz-Request': '1', 'Content-Type': 'application/json' },
      body: JSON.stringify({ verdict: 'deny', reason: 'no' }),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ action: 'decided', verdict: 'deny' });
    expect(f.patches[0]?.body).toMatchObject({
      spec: { decisions: [{ requestId: 'a1-s0-1', verdict: 'deny', reason: 'no' }] },
    });
  });

  it.each([
    ['without X-Lorenz-Request', {}, JSON.stringify({ verdict: 'approve' }), 403],
    ['with a body that is not JSON', { 'X-Lorenz-Request': '1' }, '{nope', 400],
    ['with a body over the limit', { 'X-Lorenz-Request': '1' }, 'x'.repeat(200 * 1024), 400],
  ])('%s: %i, nothing written', async (_name, headers, body, status) => {
    const f = fixture({ may: true, run: runWith([PERMISSION]) });
    const response = await fetch(await serve(f), { method: 'POST', headers, body });
    expect(response.status).toBe(status);
    expect(f.patches).toEqual([]);
  });
});
