import { createHmac } from 'node:crypto';
import { Registry } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Workflow } from '../../../../src/api/index.js';
import { createWakeBoard, type WakeTarget } from '../../../../src/controller/shared/wake.js';
import {
  parseRoute,
  startWebhookReceiver,
  type WebhookReceiver,
} from '../../../../src/controller/webhooks/receiver.js';
import type { SecretSource } from '../../../../src/controller/webhooks/secrets.js';
import { eachCase } from '../../../support/cases.js';

const SECRET = 'wh-s3cret';
const NOW = Date.parse('2026-12-02T12:00:00Z');

const workflow = (name: string, secretRef?: { name: string; key?: string }): Workflow => ({
  apiVersion: 'lorenz.dev/v1alpha1',
  kind: 'Workflow',
  metadata: { name, namespace: 'team' },
  spec: { workflow: '---\n---\n', ...(secretRef ? { webhooks: { secretRef } } : {}) },
});
const WORKFLOWS = new Map<string, Workflow>([
  ['team/wf', workflow('wf', { name: 'hooks' })],
  ['team/keyed', workflow('keyed', { name: 'hooks', key: 'other' })],
  ['team/no-ref', workflow('no-ref')],
  ['team/no-secret', workflow('no-secret', { name: 'missing' })],
]);
const SECRETS: Record<string, Record<string, string>> = {
  hooks: { webhook_secret: SECRET, other: 'other-secret' },
};
const secrets: SecretSource = {
  get: (_namespace, name, key) => Promise.resolve(SECRETS[name]?.[key]),
};

const sign = (body: string, secret = SECRET) =>
  createHmac('sha256', secret).update(body).digest('hex');

let receiver: WebhookReceiver;
let woken: WakeTarget[];
let registry: Registry;
let counter = 0;
/** The coalescing windows' timers: they end when a test says so, not when a slow host does. */
let timers: (() => void)[] = [];
const endWindows = () => {
  for (const callback of timers.splice(0)) callback();
};

beforeEach(async () => {
  woken = [];
  timers = [];
  registry = new Registry();
  const board = createWakeBoard();
  board.subscribe('poll', (target) => woken.push(target));
  board.subscribe('review', (target) => woken.push(target));
  receiver = await startWebhookReceiver({
    bindAddress: '127.0.0.1:0',
    workflows: { get: (namespace, name) => WORKFLOWS.get(`${namespace}/${name}`) },
    secrets,
    board,
    registry,
    now: () => NOW,
    maxBodyBytes: 4096,
    limits: {
      ratePerSecond: 1,
      burst: 5,
      timers: {
        setTimeout: (callback) => timers.push(callback),
        clearTimeout: () => undefined,
      },
    },
  });
});
afterEach(() => receiver.stop());

async function post(
  path: string,
  body: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: unknown }> {
  const response = await fetch(`http://127.0.0.1:${receiver.port}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
  return { status: response.status, json: await response.json() };
}

const githubIssue = () => {
  const body = JSON.stringify({ action: 'edited', issue: { number: 1 } });
  counter += 1;
  return {
    body,
    headers: {
      'x-github-event': 'issues',
      'x-github-delivery': `delivery-${counter}`,
      'x-hub-signature-256': `sha256=${sign(body)}`,
    },
  };
};

async function metric(host: string, result: string): Promise<number> {
  const values = (await registry.getSingleMetric('lorenz_webhook_deliveries_total')?.get())?.values;
  return values?.find((v) => v.labels.host === host && v.labels.result === result)?.value ?? 0;
}

describe('the webhook receiver', () => {
  it('wakes the poll of the Workflow a signed GitHub delivery names (202)', async () => {
    const { body, headers } = githubIssue();
    const answer = await post('/webhooks/team/wf/github', body, headers);
    expect(answer).toEqual({ status: 202, json: { accepted: ['poll'] } });
    expect(woken).toEqual([{ kind: 'poll', namespace: 'team', workflow: 'wf' }]);
    expect(await metric('github', 'accepted')).toBe(1);
  });

  it('wakes the review side with the branch of a pull request event', async () => {
    const body = JSON.stringify({ pull_request: { head: { ref: 'lorenz/eng-1' } } });
    const answer = await post('/webhooks/team/wf/github', body, {
      'x-github-event': 'pull_request_review',
      'x-hub-signature-256': `sha256=${sign(body)}`,
    });
    expect(answer.status).toBe(202);
    expect(woken).toEqual([
      { kind: 'review', namespace: 'team', workflow: 'wf', branch: 'lorenz/eng-1' },
    ]);
  });

  it('accepts each host signed as it documents', async () => {
    const linear = JSON.stringify({ type: 'Issue', webhookTimestamp: NOW - 1000 });
    const answers = [
      await post('/webhooks/team/wf/gitlab', '{}', {
        'x-gitlab-event': 'Issue Hook',
        'x-gitlab-token': SECRET,
      }),
      await post('/webhooks/team/wf/linear', linear, { 'linear-signature': sign(linear) }),
      await post(
        `/webhooks/team/wf/jira?secret=${encodeURIComponent(SECRET)}`,
        JSON.stringify({ webhookEvent: 'jira:issue_updated' }),
      ),
      await post('/webhooks/team/keyed/gitlab', '{}', {
        'x-gitlab-event': 'Issue Hook',
        'x-gitlab-token': 'other-secret',
      }),
    ];
    expect(answers.map((a) => a.status)).toEqual([202, 202, 202, 202]);
    // The three wakes of team/wf within the coalescing window collapse into the first.
    expect(woken.map((t) => t.workflow)).toEqual(['wf', 'keyed']);
  });

  const refused: {
    name: string;
    path: string;
    body?: string;
    headers?: () => Record<string, string>;
    status: number;
    host: string;
    result: string;
  }[] = [
    {
      name: 'forged',
      path: '/webhooks/team/wf/github',
      headers: () => ({ ...githubIssue().headers, 'x-hub-signature-256': `sha256=${sign('x')}` }),
      status: 401,
      host: 'github',
      result: 'forged',
    },
    {
      name: 'signed with another secret',
      path: '/webhooks/team/wf/gitlab',
      headers: () => ({ 'x-gitlab-event': 'Issue Hook', 'x-gitlab-token': 'other-secret' }),
      status: 401,
      host: 'gitlab',
      result: 'forged',
    },
    {
      name: 'unsigned',
      path: '/webhooks/team/wf/github',
      headers: () => ({ 'x-github-event': 'issues' }),
      status: 401,
      host: 'github',
      result: 'unsigned',
    },
    {
      name: 'Linear, stale timestamp',
      path: '/webhooks/team/wf/linear',
      body: JSON.stringify({ type: 'Issue', webhookTimestamp: NOW - 120_000 }),
      headers: () => ({
        'linear-signature': sign(
          JSON.stringify({ type: 'Issue', webhookTimestamp: NOW - 120_000 }),
        ),
      }),
      status: 401,
      host: 'linear',
      result: 'stale',
    },
    {
      name: 'oversize',
      path: '/webhooks/team/wf/github',
      body: JSON.stringify({ pad: 'x'.repeat(5000) }),
      headers: () => githubIssue().headers,
      status: 413,
      host: 'github',
      result: 'too_large',
    },
    {
      name: 'unknown workflow',
      path: '/webhooks/team/nope/github',
      headers: () => githubIssue().headers,
      status: 404,
      host: 'github',
      result: 'not_found',
    },
    {
      name: 'a Workflow without spec.webhooks',
      path: '/webhooks/team/no-ref/github',
      headers: () => githubIssue().headers,
      status: 404,
      host: 'github',
      result: 'not_found',
    },
    {
      name: 'a Workflow whose Secret is missing',
      path: '/webhooks/team/no-secret/github',
      headers: () => githubIssue().headers,
      status: 404,
      host: 'github',
      result: 'not_found',
    },
    {
      name: 'an unknown sender',
      path: '/webhooks/team/wf/bitbucket',
      headers: () => githubIssue().headers,
      status: 404,
      host: 'unknown',
      result: 'not_found',
    },
    {
      name: 'another path',
      path: '/webhooks/team/wf',
      status: 404,
      host: 'unknown',
      result: 'not_found',
    },
  ];
  it.each(refused)('$name: $status, nothing woken, counted', async (row) => {
    const body = row.body ?? githubIssue().body;
    const answer = await post(row.path, body, row.headers?.() ?? {});
    expect(answer.status).toBe(row.status);
    expect(woken).toEqual([]);
    expect(await metric(row.host, row.result)).toBe(1);
  });

  it('ignores a replayed delivery (200), waking nothing the second time', async () => {
    const { body, headers } = githubIssue();
    expect((await post('/webhooks/team/wf/github', body, headers)).status).toBe(202);
    endWindows();
    woken = [];
    const again = await post('/webhooks/team/wf/github', body, headers);
    expect(again).toEqual({ status: 200, json: { ignored: 'replay' } });
    expect(woken).toEqual([]);
    expect(await metric('github', 'replay')).toBe(1);
  });

  it('a forged delivery does not burn the id of the real one', async () => {
    const { body, headers } = githubIssue();
    const forged = { ...headers, 'x-hub-signature-256': `sha256=${sign(body, 'guess')}` };
    expect((await post('/webhooks/team/wf/github', body, forged)).status).toBe(401);
    expect((await post('/webhooks/team/wf/github', body, headers)).status).toBe(202);
  });

  it('ignores events that wake nothing (200)', async () => {
    const body = '{"zen":"hi"}';
    const answer = await post('/webhooks/team/wf/github', body, {
      'x-github-event': 'ping',
      'x-hub-signature-256': `sha256=${sign(body)}`,
    });
    expect(answer).toEqual({ status: 200, json: { ignored: 'event' } });
    expect(woken).toEqual([]);
  });

  it('refuses a flood with 429 past the burst, per Workflow', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 7; i += 1) {
      const { body, headers } = githubIssue();
      statuses.push((await post('/webhooks/team/wf/github', body, headers)).status);
    }
    expect(statuses).toEqual([202, 202, 202, 202, 202, 429, 429]);
    // Coalesced: five accepted deliveries for one target, one wake at once, one at the end.
    expect(woken).toHaveLength(1);
    endWindows();
    expect(woken).toHaveLength(2);
    endWindows();
    expect(woken).toHaveLength(2);
    const { body, headers } = githubIssue();
    const other = await post('/webhooks/team/keyed/github', body, {
      ...headers,
      'x-hub-signature-256': `sha256=${sign(body, 'other-secret')}`,
    });
    expect(other.status).toBe(202);
    expect(await metric('github', 'rate_limited')).toBe(2);
  });

  it('reads a form-encoded GitHub delivery', async () => {
    const body = new URLSearchParams({ payload: '{"issue":{}}' }).toString();
    const response = await fetch(`http://127.0.0.1:${receiver.port}/webhooks/team/wf/github`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-github-event': 'issues',
        'x-hub-signature-256': `sha256=${sign(body)}`,
      },
      body,
    });
    expect(response.status).toBe(202);
  });

  it('refuses a signed body that is not JSON (400)', async () => {
    const answer = await post('/webhooks/team/wf/github', 'not json', {
      'x-github-event': 'issues',
      'x-hub-signature-256': `sha256=${sign('not json')}`,
    });
    expect(answer.status).toBe(400);
    expect(woken).toEqual([]);
  });
});

describe('parseRoute', () => {
  eachCase('%s', parseRoute, [
    ['/webhooks/team/wf/github', { namespace: 'team', workflow: 'wf', host: 'github' }],
    ['/webhooks/team/wf/jira?secret=x', { namespace: 'team', workflow: 'wf', host: 'jira' }],
    ['/webhooks/team/wf/svn', null],
    ['/webhooks/team//github', null],
    ['/webhooks/team/wf/github/more', null],
    ['/hooks/team/wf/github', null],
    ['/webhooks/%E0%A4%A/wf/github', null],
  ]);
});
