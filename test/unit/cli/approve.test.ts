// `lorenz approve RUN`: which request it answers, the spec.decisions patch it writes (with the
// resourceVersion it read, the list bounded), a 409 read again, and every refusal as one
// line with a code: nothing waiting, a request not waiting, a verdict that does not fit, the
// apiserver's 403.
import { describe, expect, it } from 'vitest';
import { INBOX_LIMITS, type InboxPending } from '../../../src/api/inbox.js';
import { approveCommand, verdictOf } from '../../../src/cli/approve.js';
import type { UserCluster } from '../../../src/cli/runs/kube.js';
import {
  KubeApiError,
  type KubeClient,
  type RequestOptions,
} from '../../../src/controller/runtime/client.js';
import { permissionRequest } from '../../support/fakes/objects.js';
import { userCluster } from './user-cluster.js';

const request = (id: string, askedAt: string, extra: Partial<InboxPending> = {}): InboxPending =>
  permissionRequest({
    id,
    title: 'git push',
    toolKind: 'execute',
    command: 'git push --force origin main',
    options: [{ optionId: 'allow', name: 'Allow', kind: 'allow_once' }],
    askedAt,
    deadline: '2026-12-02T18:00:00Z',
    ...extra,
  });

function issueRun(pending: InboxPending[], decisions: unknown[] = [], resourceVersion = '7') {
  return {
    apiVersion: 'lorenz.dev/v1alpha1',
    kind: 'IssueRun',
    metadata: { name: 'eng-42', namespace: 'team-a', resourceVersion },
    spec: { issue: { identifier: 'ENG-42', title: 't' }, decisions },
    status: { inbox: { pending } },
  };
}

interface Fake {
  cluster: () => UserCluster;
  calls: RequestOptions[];
}

/** A cluster whose apiserver answers GETs with `runs` in turn and PATCHes with `patches`. */
function fakeCluster(runs: unknown[], patches: (Error | undefined)[] = []): Fake {
  const calls: RequestOptions[] = [];
  const client: KubeClient = {
    async request<T>(options: RequestOptions): Promise<T> {
      calls.push(options);
      if (options.method === 'PATCH') {
        const failure = patches.shift();
        if (failure) throw failure;
        return {} as T;
      }
      const run = runs.length > 1 ? runs.shift() : runs[0];
      if (!run) throw new KubeApiError(404, { message: 'not found' }, 'GET', options.path);
      return run as T;
    },
    stream: async () => {},
    close() {},
  };
  const cluster = userCluster(client);
  return { cluster: () => cluster, calls };
}

async function approve(fake: Fake, args: string[]) {
  let out = '';
  let err = '';
  const code = await approveCommand(
    ['eng-42', ...args],
    (text) => void (out += text),
    (text) => void (err += text),
    { cluster: fake.cluster },
  );
  const patch = fake.calls.filter((call) => call.method === 'PATCH').at(-1);
  return { code, out, err, patch };
}

const OLD = request('a1-s0-1', '2026-12-02T17:00:00Z');
const NEW = request('a1-s0-2', '2026-12-02T17:05:00Z', { command: 'rm -rf build' });
const QUESTION = request('a1-s0-3', '2026-12-02T17:01:00Z', {
  kind: 'question',
  title: 'Which branch?',
  message: 'Which branch should I push to?',
  options: [],
});

describe('lorenz approve: the request it answers and the entry it writes', () => {
  it.each<[string, InboxPending[], unknown[], string[], Record<string, unknown>]>([
    ['the only one waiting', [OLD], [], [], { requestId: 'a1-s0-1', verdict: 'approve' }],
    ['the oldest of several', [NEW, OLD], [], [], { requestId: 'a1-s0-1', verdict: 'approve' }],
    [
      'the one --request names',
      [OLD, NEW],
      [],
      ['--request', 'a1-s0-2', '--always'],
      { requestId: 'a1-s0-2', verdict: 'approve_always' },
    ],
    [
      'the next one when the oldest is answered in spec already',
      [OLD, NEW],
      [{ requestId: 'a1-s0-1', verdict: 'approve' }],
      [],
      { requestId: 'a1-s0-2', verdict: 'approve' },
    ],
    [
      'a denial with its reason',
      [OLD],
      [],
      ['--deny', 'not on main'],
      { requestId: 'a1-s0-1', verdict: 'deny', reason: 'not on main' },
    ],
    [
      "a question's answer",
      [QUESTION],
      [],
      ['--answer', 'the feature branch'],
      { requestId: 'a1-s0-3', verdict: 'answer', answer: 'the feature branch' },
    ],
    [
      'a question declined',
      [QUESTION],
      [],
      ['--deny', 'ask someone else'],
      { requestId: 'a1-s0-3', verdict: 'deny', reason: 'ask someone else' },
    ],
  ])('%s', async (_name, pending, decisions, args, want) => {
    const fake = fakeCluster([issueRun(pending, decisions)]);
    const result = await approve(fake, args);
    expect(result.err).toBe('');
    expect(result.code).toBe(0);
    expect(result.patch?.path).toBe('/apis/lorenz.dev/v1alpha1/namespaces/team-a/issueruns/eng-42');
    expect(result.patch?.patchType ?? 'merge').toBe('merge');
    expect(result.patch?.body).toEqual({
      metadata: { resourceVersion: '7' },
      spec: { decisions: [...decisions, { ...want, by: 'alice' }] },
    });
    expect(result.out).toContain(`request ${String(want.requestId)}`);
    expect(result.out).toContain('of run team-a/eng-42 as alice');
  });

  it('keeps at most INBOX_LIMITS.specDecisions entries, dropping the oldest', async () => {
    const old = Array.from({ length: INBOX_LIMITS.specDecisions }, (_, i) => ({
      requestId: `a0-s0-${i}`,
      verdict: 'approve',
    }));
    const result = await approve(fakeCluster([issueRun([OLD], old)]), []);
    const written = (result.patch?.body as { spec: { decisions: { requestId: string }[] } }).spec
      .decisions;
    expect(written).toHaveLength(INBOX_LIMITS.specDecisions);
    expect(written[0]?.requestId).toBe('a0-s0-1');
    expect(written.at(-1)?.requestId).toBe('a1-s0-1');
  });

  it('reads the run again after a 409 and writes with the new resourceVersion', async () => {
    const conflict = new KubeApiError(
      409,
      { message: 'the object has been modified' },
      'PATCH',
      '/x',
    );
    const fake = fakeCluster([issueRun([OLD], [], '7'), issueRun([OLD], [], '8')], [conflict]);
    const result = await approve(fake, []);
    expect(result.code).toBe(0);
    expect(fake.calls.filter((call) => call.method === 'PATCH')).toHaveLength(2);
    expect(result.patch?.body).toMatchObject({ metadata: { resourceVersion: '8' } });
  });
});

describe('lorenz approve: refusals', () => {
  it.each<[string, unknown[], string[], RegExp]>([
    ['nothing waits', [issueRun([])], [], /^lorenz: no_pending_request: run team-a\/eng-42: /],
    [
      'the named request does not wait',
      [issueRun([OLD])],
      ['--request', 'a9-s0-1'],
      /^lorenz: request_not_found: .*no request a9-s0-1 is waiting \(waiting: a1-s0-1\)/,
    ],
    [
      'a question approved without an answer',
      [issueRun([QUESTION])],
      [],
      /^lorenz: verdict_mismatch: .*is a question.*--answer TEXT/,
    ],
    [
      'an answer to a permission request',
      [issueRun([OLD])],
      ['--answer', 'yes'],
      /^lorenz: verdict_mismatch: .*permission request/,
    ],
    [
      'the request is answered in spec already',
      [issueRun([OLD], [{ requestId: 'a1-s0-1', verdict: 'deny' }])],
      ['--request', 'a1-s0-1'],
      /^lorenz: already_decided: /,
    ],
    [
      'a reason over the limit',
      [issueRun([OLD])],
      ['--deny', 'x'.repeat(INBOX_LIMITS.reasonLength + 1)],
      /^lorenz: invalid_decision: .*reason/,
    ],
    ['no such run', [undefined], [], /^lorenz: not_found: run team-a\/eng-42 not found/],
  ])('%s', async (_name, runs, args, want) => {
    const fake = fakeCluster(runs);
    const result = await approve(fake, args);
    expect(result.code).toBe(1);
    expect(result.err).toMatch(want);
    expect(result.patch).toBeUndefined();
    expect(result.out).toBe('');
  });

  it("shows the apiserver's 403 for a user who may not patch issueruns", async () => {
    const forbidden = new KubeApiError(
      403,
      {
        message:
          'issueruns.lorenz.dev "eng-42" is forbidden: User "bob" cannot patch resource "issueruns" in API group "lorenz.dev" in the namespace "team-a"',
      },
      'PATCH',
      '/apis/lorenz.dev/v1alpha1/namespaces/team-a/issueruns/eng-42',
    );
    const result = await approve(fakeCluster([issueRun([OLD])], [forbidden]), []);
    expect(result.code).toBe(1);
    expect(result.err).toMatch(
      /^lorenz: kube_forbidden: PATCH .*403 .*cannot patch resource "issueruns"/,
    );
  });

  it.each([
    [['--deny', 'no', '--always']],
    [['--deny', 'no', '--answer', 'x']],
    [['--always', '--answer', 'x']],
  ])('contradicting flags %j are a usage error', (args) => {
    const values = {
      deny: args.includes('--deny') ? 'no' : undefined,
      always: args.includes('--always'),
      answer: args.includes('--answer') ? 'x' : undefined,
    };
    expect(() => verdictOf(values)).toThrow(/approve: --/);
  });
});
