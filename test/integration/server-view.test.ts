// `lorenz server` on the real control plane with the real controller and real runs: the view
// API's answers (live and archived), its streams, its actions as the caller, its RBAC
// filtering for a user without the namespace, and its defences (CSP, X-Lorenz-Request, the
// local mode's Host check). The browser tests (web/) drive the same server.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssueRun } from '../../src/api/index.js';
import type { RunDetail, RunList, WhoAmI, WorkflowList } from '../../src/server/view-api.js';
import { CSP } from '../../src/server/view-server.js';
import { readSse, startServerEnv, type ServerEnv } from '../support/server.js';
import { NAMESPACE, createWorkflow, finished, getRun, path, until } from './operator-harness.js';

const HOSTILE =
  '<script>alert(1)</script><img src=x onerror=alert(2)> javascript:alert(3) \u001b[31mred';

describe('lorenz server', () => {
  let s: ServerEnv;
  const auth = (token: string) => ({ Authorization: `Bearer ${token}` });
  const get = (p: string, token?: string, headers: Record<string, string> = {}) =>
    fetch(`${s.url}${p}`, { headers: { ...(token ? auth(token) : {}), ...headers } });
  const post = (
    p: string,
    token: string,
    headers: Record<string, string> = { 'X-Lorenz-Request': '1' },
  ) => fetch(`${s.url}${p}`, { method: 'POST', headers: { ...auth(token), ...headers } });
  const json = async <T>(response: Response): Promise<T> => {
    const text = await response.text();
    if (!response.ok) throw new Error(`${response.status}: ${text}`);
    return JSON.parse(text) as T;
  };
  const createRun = (name: string, issue: object, workflow = 'view') =>
    s.env.admin.request({
      method: 'POST',
      path: path.issueRuns(),
      body: {
        apiVersion: 'lorenz.dev/v1alpha1',
        kind: 'IssueRun',
        metadata: { name },
        spec: { workflowRef: { name: workflow }, issue: { state: 'Todo', ...issue } },
      },
    });

  beforeAll(async () => {
    s = await startServerEnv();
    await createWorkflow(s.env, 'view', {
      tracker: '  issues: []',
      prompt: `@say ${JSON.stringify(HOSTILE)
        .slice(1, -1)
        .replace(/\\u001b/g, '')}\n@write done.txt ok`,
      hooks: {
        before_run: `printf '%s\\n' '<img src=x onerror=alert(1)>'; echo one; sleep 5; echo two`,
      },
    });
    await until('the server cache synced', async () =>
      (await get('/readyz')).ok ? true : undefined,
    );
  }, 300_000);
  afterAll(async () => {
    await s?.stop();
  });

  it('says who the caller is (TokenReview) and that the archive is on', async () => {
    const me = await json<WhoAmI>(await get('/api/v1/whoami', s.tokens.operator));
    expect(me).toMatchObject({
      mode: 'cluster',
      username: 'system:serviceaccount:default:operator',
      archive: true,
    });
    const none = await get('/api/v1/whoami');
    expect(none.status).toBe(401);
    expect(await none.json()).toMatchObject({ code: 'unauthenticated' });
  });

  it('sends a run created in the cluster to /watch at once, and lists it in /runs and /workflows', async () => {
    const watch = readSse(`${s.url}/api/v1/watch`, auth(s.tokens.operator));
    await watch.next((e) => e.event === 'heartbeat');
    expect(watch.headers?.get('content-security-policy')).toBe(CSP);
    const before = Date.now();
    await createRun('view-live', {
      id: 'l1',
      identifier: 'VIEW-1',
      title: HOSTILE,
      url: 'javascript:alert(1)',
    });
    const seen = await watch.next(
      (e) => e.event === 'run' && (e.data as { name: string }).name === 'view-live',
    );
    // The second is a target that `npm run bench:server` measures; on a loaded 2-core machine
    // (CI, every tier at once) the apiserver alone can take longer, so the test holds the
    // event to arriving, and arriving promptly, not to the figure.
    expect(seen.at - before).toBeLessThan(10_000);
    const list = await json<RunList>(
      await get('/api/v1/runs?namespace=default', s.tokens.operator),
    );
    const row = list.runs.find((run) => run.name === 'view-live');
    // Hostile text comes back as the JSON string it was; a javascript: URL is dropped.
    expect(row).toMatchObject({
      source: 'live',
      workflow: 'view',
      issue: { identifier: 'VIEW-1', title: HOSTILE },
    });
    expect(row?.issue.url).toBeUndefined();
    const workflows = await json<WorkflowList>(await get('/api/v1/workflows', s.tokens.operator));
    expect(workflows.workflows.map((w) => `${w.namespace}/${w.name}`)).toContain('default/view');
    watch.close();
  });

  it('follows the transcript of a running run as it grows, then ends', async () => {
    await until('view-live running', async () => {
      const run = await getRun(s.env, 'view-live');
      return run.status?.podName ? run : undefined;
    });
    const stream = readSse(
      `${s.url}/api/v1/namespaces/default/runs/view-live/transcript?follow=true`,
      auth(s.tokens.operator),
    );
    const one = await stream.next(
      (e) => e.event === 'entry' && /\bone\n/.test((e.data as { text?: string }).text ?? ''),
      60_000,
    );
    const two = await stream.next(
      (e) => e.event === 'entry' && /\btwo\n/.test((e.data as { text?: string }).text ?? ''),
      60_000,
    );
    // Streamed as it happened: "two" came about 3 s after "one", on the same stream.
    expect(two.at - one.at).toBeGreaterThan(1500);
    expect(
      stream.events.some(
        (e) =>
          e.event === 'entry' &&
          ((e.data as { text?: string }).text ?? '').includes('<img src=x onerror=alert(1)>\n'),
      ),
    ).toBe(true);
    await stream.next((e) => e.event === 'end', 90_000);
    const messages = stream.events.filter(
      (e) => e.event === 'entry' && (e.data as { kind: string }).kind === 'message',
    );
    expect(messages.map((e) => (e.data as { text: string }).text).join('')).toContain(
      '<script>alert(1)</script>',
    );
    stream.close();
  }, 180_000);

  it('serves a finished and deleted run from the archive: detail, transcript and hook output', async () => {
    const run = await finished(s.env, 'view-live');
    const uid = run.metadata.uid ?? '';
    await s.env.admin.request({ method: 'DELETE', path: path.issueRuns('view-live') });
    await until('view-live gone from the cluster', async () =>
      (await getRun(s.env, 'view-live')
        .then(() => false)
        .catch(() => true))
        ? true
        : undefined,
    );
    const detail = await until('the archived run in /runs/...', async () => {
      const response = await get('/api/v1/namespaces/default/runs/view-live', s.tokens.operator);
      if (!response.ok) return undefined;
      const body = (await response.json()) as RunDetail;
      return body.run.source === 'archive' ? body : undefined;
    });
    expect(detail.run).toMatchObject({ uid, phase: 'Succeeded', issue: { title: HOSTILE } });
    expect(detail.run.deletedAt).toBeDefined();
    expect(detail.attempts.length).toBeGreaterThanOrEqual(1);
    const beforeRun = detail.attempts[0]?.hooks.find((hook) => hook.hookName === 'before_run');
    expect(beforeRun).toMatchObject({ status: 'completed' });
    expect(detail.timeline.map((bar) => bar.kind)).toEqual(
      expect.arrayContaining(['attempt', 'hook', 'turn']),
    );
    const listed = await json<RunList>(await get('/api/v1/runs?source=archive', s.tokens.operator));
    expect(listed.runs.map((r) => r.uid)).toContain(uid);

    const stream = readSse(
      `${s.url}/api/v1/namespaces/default/runs/view-live/transcript?uid=${uid}`,
      auth(s.tokens.operator),
    );
    await stream.next((e) => e.event === 'end');
    expect(
      stream.events.some((e) =>
        /\bone\n/.test((e.data as { text?: string } | undefined)?.text ?? ''),
      ),
    ).toBe(true);

    const output = await get(
      `/api/v1/namespaces/default/runs/view-live/hooks/${beforeRun?.seq ?? 0}/output?uid=${uid}`,
      s.tokens.operator,
    );
    expect(output.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(await output.text()).toBe('<img src=x onerror=alert(1)>\none\ntwo\n');
  }, 180_000);

  it('cancels a run as the caller; after_run still runs', async () => {
    await createWorkflow(s.env, 'slow', {
      tracker: '  issues: []',
      hooks: { before_run: 'sleep 600', after_run: 'echo after-run-ran' },
    });
    await createRun('view-slow', { id: 's1', identifier: 'SLOW-1', title: 'Slow' }, 'slow');
    await until('view-slow running', async () => {
      const run = await getRun(s.env, 'view-slow');
      return run.status?.hooks?.some((hook) => hook.name === 'before_run') ? run : undefined;
    });
    // No X-Lorenz-Request: refused, nothing changed.
    const bare = await post(
      '/api/v1/namespaces/default/runs/view-slow/cancel',
      s.tokens.operator,
      {},
    );
    expect(bare.status).toBe(403);
    expect((await getRun(s.env, 'view-slow')).spec.cancelRequested).toBeUndefined();
    // An outsider: 403 forbidden, nothing changed.
    const foreign = await post(
      '/api/v1/namespaces/default/runs/view-slow/cancel',
      s.tokens.outsider,
    );
    expect(foreign.status).toBe(403);
    expect(await foreign.json()).toMatchObject({ code: 'forbidden' });
    expect((await getRun(s.env, 'view-slow')).spec.cancelRequested).toBeUndefined();

    const done = await post('/api/v1/namespaces/default/runs/view-slow/cancel', s.tokens.operator);
    expect(await json(done)).toEqual({
      action: 'cancel_requested',
      namespace: 'default',
      name: 'view-slow',
    });
    const run: IssueRun = await finished(s.env, 'view-slow', 120_000);
    expect(run.status?.reason).toBe('Cancelled');
    expect(run.status?.hooks?.find((hook) => hook.name === 'after_run')).toMatchObject({
      status: 'completed',
    });

    // Retry of the Failed (cancelled) run: a new run, attempt 2; again: 409, the name is taken.
    expect(run.status?.phase).toBe('Failed');
    const retry = await post('/api/v1/namespaces/default/runs/view-slow/retry', s.tokens.operator);
    expect(await json(retry)).toEqual({
      action: 'retried',
      namespace: 'default',
      name: 'view-slow-retry-2',
    });
    const again = await post('/api/v1/namespaces/default/runs/view-slow/retry', s.tokens.operator);
    expect(again.status).toBe(409);
    const retried = await getRun(s.env, 'view-slow-retry-2');
    expect(retried.spec).toMatchObject({ attempt: 2, issue: { identifier: 'SLOW-1' } });
    // A run that is not Failed is not retried.
    const notFailed = await post(
      '/api/v1/namespaces/default/runs/view-slow-retry-2/retry',
      s.tokens.operator,
    );
    expect(notFailed.status).toBe(409);
    expect(await notFailed.json()).toMatchObject({ code: 'conflict' });
    await post('/api/v1/namespaces/default/runs/view-slow-retry-2/cancel', s.tokens.operator);
    const suspended = await post(
      '/api/v1/namespaces/default/workflows/slow/suspend',
      s.tokens.operator,
    );
    expect(await json(suspended)).toMatchObject({ action: 'suspended' });
    const workflow = await s.env.admin.request<{ spec: { suspend?: boolean } }>({
      path: path.workflows('slow'),
    });
    expect(workflow.spec.suspend).toBe(true);
  }, 240_000);

  it('shows a user without the namespace nothing of it: /runs, /workflows, /watch, detail', async () => {
    const runs = await json<RunList>(await get('/api/v1/runs', s.tokens.outsider));
    expect(runs.runs.filter((run) => run.namespace === NAMESPACE)).toEqual([]);
    const flows = await json<WorkflowList>(await get('/api/v1/workflows', s.tokens.outsider));
    expect(flows.workflows).toEqual([]);
    expect(flows.recentFailures).toEqual([]);
    expect((await get('/api/v1/runs?namespace=default', s.tokens.outsider)).status).toBe(403);
    expect((await get('/api/v1/namespaces/default/runs/view-slow', s.tokens.outsider)).status).toBe(
      403,
    );
    const watch = readSse(`${s.url}/api/v1/watch`, auth(s.tokens.outsider));
    const mine = readSse(`${s.url}/api/v1/watch`, auth(s.tokens.operator));
    await watch.next((e) => e.event === 'heartbeat');
    await mine.next((e) => e.event === 'heartbeat');
    await createRun('view-hidden', { id: 'h1', identifier: 'HID-1', title: 'Hidden' }, 'slow');
    await mine.next(
      (e) => e.event === 'run' && (e.data as { name: string }).name === 'view-hidden',
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(watch.events.filter((e) => e.event !== 'heartbeat')).toEqual([]);
    watch.close();
    mine.close();
  });

  it('answers every response with the CSP and nosniff; pages are index.html, JSON is never HTML', async () => {
    for (const p of [
      '/',
      '/runs/default/x',
      '/usage',
      '/api/v1/runs',
      '/healthz',
      '/assets/app.js',
      '/api/v1/nope',
    ]) {
      const response = await get(p, s.tokens.operator);
      expect(response.headers.get('content-security-policy'), p).toBe(CSP);
      expect(response.headers.get('x-content-type-options'), p).toBe('nosniff');
      expect(response.headers.get('referrer-policy'), p).toBe('no-referrer');
      if (p.startsWith('/api/'))
        expect(response.headers.get('content-type'), p).toMatch(/^application\/json/);
    }
    expect((await get('/runs/default/x')).headers.get('content-type')).toMatch(/^text\/html/);
    const asset = await get('/assets/app.js');
    expect(asset.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(asset.headers.get('cache-control')).toMatch(/immutable/);
    const metrics = await (await get('/metrics')).text();
    expect(metrics).toMatch(/lorenz_server_requests_total\{route="runs",code="200"\} \d+/);
  });

  it('in local mode acts as the kubeconfig user and refuses a foreign Host header', async () => {
    const local = await s.startLocal();
    const base = `http://127.0.0.1:${local.address.port}`;
    await until('the local cache synced', async () =>
      (await fetch(`${base}/readyz`)).ok ? true : undefined,
    );
    const me = await json<WhoAmI>(await fetch(`${base}/api/v1/whoami`));
    expect(me).toMatchObject({ mode: 'local', username: 'system:serviceaccount:default:operator' });
    // fetch never sends a Host of its own: a raw request does, as a rebinding page would.
    const foreign = await new Promise<number>((resolve, reject) => {
      http
        .get(
          {
            host: '127.0.0.1',
            port: local.address.port,
            path: '/api/v1/whoami',
            headers: { Host: 'evil.example' },
          },
          (response) => {
            response.resume();
            resolve(response.statusCode ?? 0);
          },
        )
        .on('error', reject);
    });
    expect(foreign).toBe(403);
    const runs = await json<RunList>(await fetch(`${base}/api/v1/runs`));
    expect(runs.runs.some((run) => run.name === 'view-slow')).toBe(true);
  });
});
