// What the webhook rows of `npm run bench:dispatch` share (dispatch-webhook.ts,
// dispatch-review.ts): the Workflow's webhook Secret, a signed GitHub delivery, a fine-grained
// probe for a Pod, and the latency table beside its goal.
import { createHmac } from 'node:crypto';
import type { KubeClient } from '../src/controller/runtime/client.js';

export const WEBHOOK_SECRET = 'bench-webhook-secret';
/** The Secret a Workflow's `webhooks.secretRef` names. */
export const WEBHOOK_SECRET_NAME = 'hooks';

export type Percentile = (values: number[], p: number) => number;
export type Say = (line: string) => void;

export async function createWebhookSecret(admin: KubeClient, ns: string): Promise<void> {
  await admin.request({
    method: 'POST',
    path: `/api/v1/namespaces/${ns}/secrets`,
    body: {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: WEBHOOK_SECRET_NAME },
      stringData: { webhook_secret: WEBHOOK_SECRET },
    },
  });
}

/** A GitHub delivery signed as GitHub signs it (X-Hub-Signature-256); throws unless 202. */
export async function deliverGithub(
  port: number | undefined,
  route: { namespace: string; workflow: string },
  event: string,
  delivery: string,
  payload: object,
): Promise<void> {
  if (port === undefined) throw new Error('the controller serves no webhooks');
  const body = JSON.stringify(payload);
  const response = await fetch(
    `http://127.0.0.1:${port}/webhooks/${route.namespace}/${route.workflow}/github`,
    {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-github-event': event,
        'x-github-delivery': delivery,
        'x-hub-signature-256': `sha256=${createHmac('sha256', WEBHOOK_SECRET).update(body).digest('hex')}`,
      },
      body,
    },
  );
  if (response.status !== 202) throw new Error(`the ${event} delivery answered ${response.status}`);
}

/** Lists Pods every 20 ms until one matches (a 250 ms probe is too coarse for 1–2 s goals). */
export async function podExists(
  admin: KubeClient,
  ns: string,
  labelSelector: string,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const pods = await admin.request<{ items: unknown[] }>({
      path: `/api/v1/namespaces/${ns}/pods`,
      query: { labelSelector },
    });
    if (pods.items.length > 0) return;
    if (Date.now() > deadline) throw new Error(`no Pod ${labelSelector} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The table every latency row prints: p50 and p99 beside the goal on p99. */
export function printLatencyRow(
  title: string,
  setting: { label: string; value: string },
  latencies: number[],
  goalMs: number,
  percentile: Percentile,
): void {
  console.log(`\n## ${title}\n`);
  console.log(`| ${setting.label} | samples | p50 | p99 | goal (p99) |`);
  console.log('|---:|---:|---:|---:|---:|');
  console.log(
    `| ${setting.value} | ${latencies.length} | ${percentile(latencies, 50).toFixed(0)} ms | ${percentile(latencies, 99).toFixed(0)} ms | ≤ ${goalMs} ms |`,
  );
  console.log('\n(the probe lists Pods every 20 ms, so figures are up to 20 ms high)');
}
