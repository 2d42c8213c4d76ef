// Webhook deliveries wake a Workflow's poll at once (docs/webhooks.md). Two Workflows on
// local boards poll every 30 s; their issues are moved to Todo after their first poll, so
// only a wake can dispatch them within the test's few seconds. Forged, unsigned and
// replayed deliveries wake nothing; a delivery for B wakes only B. Deliveries are signed
// as GitHub and GitLab document it.
import { createHmac } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Workflow } from '../../src/api/index.js';
import { isNotFound } from '../../src/controller/runtime/client.js';
import { capturedLogger, path, until, useOperatorEnv } from './operator-harness.js';

const SECRET = 'wh_it_7Qe2Lx9Vb4Nc';
const POLL_MS = 30_000;
/** Far less than a poll interval: only a wake dispatches this fast. */
const WOKEN_WITHIN_MS = 5_000;

const issue = (state: string) =>
  `---\nstatus: ${state}\nlabels: [agent]\n---\n# Say done\nWrite a file.\n`;
const sign = (body: string) => `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`;

describe('webhook deliveries', () => {
  let port: number;
  const boards: Record<string, string> = {};
  const controllerLog: string[] = [];
  afterAll(async () => {
    for (const board of Object.values(boards)) await rm(board, { recursive: true, force: true });
  });
  const env = useOperatorEnv({
    webhookBindAddress: '127.0.0.1:0',
    logger: capturedLogger(controllerLog),
  });

  beforeAll(async () => {
    port = env.controller?.webhookPort() ?? 0;
    await env.createSecret('hooks', { webhook_secret: SECRET });
    for (const name of ['wh-a', 'wh-b']) {
      const board = await mkdtemp(join(tmpdir(), `lorenz-${name}-`));
      boards[name] = board;
      await writeFile(join(board, 'BOARD-1.md'), issue('Backlog'));
      await env.createWorkflow(
        name,
        {
          trackerKind: 'local',
          tracker: `  path: ${board}`,
          pollingMs: POLL_MS,
        },
        { webhooks: { secretRef: { name: 'hooks' } } },
      );
    }
    // Both polled once (nothing active yet); from now on the next poll is 30 s away.
    for (const name of ['wh-a', 'wh-b']) {
      await until(`${name} polled`, async () => {
        const workflow = await env.admin.request<Workflow>({ path: path.workflows(name) });
        return workflow.status?.dispatch?.lastPollTime ? true : undefined;
      });
    }
    for (const board of Object.values(boards)) {
      await writeFile(join(board, 'BOARD-1.md'), issue('Todo'));
    }
  });

  const deliver = async (url: string, body: string, headers: Record<string, string>) => {
    const response = await fetch(`http://127.0.0.1:${port}${url}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });
    return { status: response.status, body: await response.text() };
  };
  const runExists = async (name: string) => {
    try {
      await env.admin.request({ path: path.issueRuns(`${name}-board-1`) });
      return true;
    } catch (error) {
      if (isNotFound(error)) return false;
      throw error;
    }
  };
  const polls = async (workflow: string) => {
    const metric = await env.controller?.manager.metrics.registry
      .getSingleMetric('lorenz_tracker_polls_total')
      ?.get();
    return (metric?.values ?? [])
      .filter((value) => value.labels.workflow === workflow)
      .reduce((sum, value) => sum + value.value, 0);
  };
  const podWithin = async (workflow: string, ms: number) => {
    const started = Date.now();
    await until(
      `the run Pod of ${workflow}`,
      async () => ((await env.runPodNames(`${workflow}-board-1`)).length > 0 ? true : undefined),
      ms,
    );
    return Date.now() - started;
  };

  const ISSUE_EVENT = JSON.stringify({ action: 'edited', issue: { number: 1 } });

  it('forged and unsigned deliveries are refused (401) and wake nothing', async () => {
    const pollsBefore = await polls('wh-a');
    const forged = await deliver('/webhooks/default/wh-a/github', ISSUE_EVENT, {
      'x-github-event': 'issues',
      'x-github-delivery': 'forged-1',
      'x-hub-signature-256': `sha256=${'0'.repeat(64)}`,
    });
    const unsigned = await deliver('/webhooks/default/wh-a/github', ISSUE_EVENT, {
      'x-github-event': 'issues',
      'x-github-delivery': 'unsigned-1',
    });
    const wrongToken = await deliver('/webhooks/default/wh-a/gitlab', '{}', {
      'x-gitlab-event': 'Issue Hook',
      'x-gitlab-token': 'guess',
    });
    expect([forged.status, unsigned.status, wrongToken.status]).toEqual([401, 401, 401]);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(await polls('wh-a')).toBe(pollsBefore);
    expect(await runExists('wh-a')).toBe(false);
  });

  /** The same signed GitHub issue event for B each time: the second is a replay. */
  const deliverSignedToB = () =>
    deliver('/webhooks/default/wh-b/github', ISSUE_EVENT, {
      'x-github-event': 'issues',
      'x-github-delivery': 'delivery-b-1',
      'x-hub-signature-256': sign(ISSUE_EVENT),
    });

  it('a signed delivery for B dispatches B at once, and only B', async () => {
    const pollsOfA = await polls('wh-a');
    const answer = await deliverSignedToB();
    expect(answer).toEqual({ status: 202, body: '{"accepted":["poll"]}' });
    expect(await podWithin('wh-b', WOKEN_WITHIN_MS)).toBeLessThan(WOKEN_WITHIN_MS);
    expect(await runExists('wh-a')).toBe(false);
    expect(await polls('wh-a')).toBe(pollsOfA);
  });

  it('the same delivery again is a replay: 200, nothing woken', async () => {
    await new Promise((resolve) => setTimeout(resolve, 500)); // past the coalescing window
    const pollsOfB = await polls('wh-b');
    const answer = await deliverSignedToB();
    expect(answer).toEqual({ status: 200, body: '{"ignored":"replay"}' });
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(await polls('wh-b')).toBe(pollsOfB);
  });

  it('a GitLab delivery with the token dispatches A at once', async () => {
    const answer = await deliver('/webhooks/default/wh-a/gitlab', '{"object_kind":"issue"}', {
      'x-gitlab-event': 'Issue Hook',
      'x-gitlab-event-uuid': 'gitlab-a-1',
      'x-gitlab-token': SECRET,
    });
    expect(answer.status).toBe(202);
    expect(await podWithin('wh-a', WOKEN_WITHIN_MS)).toBeLessThan(WOKEN_WITHIN_MS);
  });

  it('counts every delivery by result, and logs neither the secret nor a payload', async () => {
    const metric = await env.controller?.manager.metrics.registry
      .getSingleMetric('lorenz_webhook_deliveries_total')
      ?.get();
    const count = (host: string, result: string) =>
      metric?.values.find((v) => v.labels.host === host && v.labels.result === result)?.value;
    expect(count('github', 'forged')).toBe(1);
    expect(count('github', 'unsigned')).toBe(1);
    expect(count('gitlab', 'forged')).toBe(1);
    expect(count('github', 'accepted')).toBe(1);
    expect(count('github', 'replay')).toBe(1);
    expect(count('gitlab', 'accepted')).toBe(1);
    const log = controllerLog.join('');
    expect(log).toContain('webhook receiver listening');
    expect(log).not.toContain(SECRET);
    expect(log).not.toContain('"action":"edited"');
  });
});
