import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import type { Workflow } from '../../api/index.js';
import { parseBindAddress } from '../../tools/index.js';
import { errorMessage } from '../../workflow/errors.js';
import type { WakeBoard } from '../shared/wake.js';
import { wakesOf, type WebhookRoute } from './events.js';
import {
  createCoalescer,
  createReplayGuard,
  createTokenBuckets,
  deliveryId,
  type Timers,
} from './limits.js';
import type { SecretSource } from './secrets.js';
import { isWebhookHost, verifyDelivery, type WebhookHost } from './verify.js';
import { listening } from '../../tools/listen.js';

/** Largest delivery read; GitHub caps its payloads at 25 MB, but what we read is a few fields. */
export const MAX_WEBHOOK_BODY = 1024 * 1024;
/** The key of `spec.webhooks.secretRef` when it names none. */
export const DEFAULT_WEBHOOK_SECRET_KEY = 'webhook_secret';

export interface WebhookReceiverOptions {
  /** `host:port`, `:port` or a port; 0 picks a free one (tests). */
  bindAddress: string;
  workflows: { get(namespace: string, name: string): Workflow | undefined };
  secrets: SecretSource;
  board: WakeBoard;
  /** The manager's registry: `lorenz_webhook_deliveries_total{host,result}`. */
  registry: Registry;
  logger?: Logger;
  now?: () => number;
  maxBodyBytes?: number;
  limits?: { ratePerSecond?: number; burst?: number; coalesceMs?: number; timers?: Timers };
}

export interface WebhookReceiver {
  port: number;
  stop(): Promise<void>;
}

/** What a delivery came to; every answer is counted under one of these. */
export type DeliveryResult =
  | 'accepted'
  | 'ignored'
  | 'replay'
  | 'unsigned'
  | 'forged'
  | 'stale'
  | 'not_found'
  | 'too_large'
  | 'rate_limited'
  | 'bad_request'
  | 'error';

interface Answer {
  status: number;
  result: DeliveryResult;
  body: Record<string, unknown>;
}

const answer = (status: number, result: DeliveryResult, body: Record<string, unknown>): Answer => ({
  status,
  result,
  body,
});

class TooLarge extends Error {}

/** The body, up to `limit` bytes: a longer one (declared or sent) throws TooLarge. */
async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit) throw new TooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > limit) throw new TooLarge();
    chunks.push(buffer);
  }
  return Buffer.concat(chunks);
}

/** `/webhooks/{namespace}/{workflow}/{host}` → its parts; null for anything else. */
export function parseRoute(url: string): (WebhookRoute & { host: WebhookHost }) | null {
  const path = url.split('?', 1)[0] ?? '';
  const parts = path.split('/');
  if (parts.length !== 5 || parts[0] !== '' || parts[1] !== 'webhooks') return null;
  const [namespace, workflow, host] = parts.slice(2).map((part) => {
    try {
      return decodeURIComponent(part);
    } catch {
      return '';
    }
  });
  if (!namespace || !workflow || !host || !isWebhookHost(host)) return null;
  return { namespace, workflow, host };
}

/** The body as JSON; GitHub may be set to send it form-encoded, as `payload=`. */
function parseBody(req: IncomingMessage, body: Buffer): unknown {
  const text = body.toString('utf8');
  if (req.headers['content-type']?.startsWith('application/x-www-form-urlencoded')) {
    return JSON.parse(new URLSearchParams(text).get('payload') ?? '');
  }
  return JSON.parse(text);
}

function lowerHeaders(req: IncomingMessage): Record<string, string | undefined> {
  const headers: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    headers[name.toLowerCase()] = Array.isArray(value) ? value[0] : value;
  }
  return headers;
}

/**
 * The webhook receiver (docs/webhooks.md): a verified delivery wakes the Workflow it is
 * addressed to, through the board; what it says is never trusted beyond its kind of event.
 * The order matters: the route and the rate limit before the body is read, the proof before
 * anything is remembered (a forged delivery cannot burn a real delivery's id), the replay
 * check before anything is woken. No payload text and no URL (Jira's holds the secret) is
 * logged.
 */
// eslint-disable-next-line max-lines-per-function -- a factory: the closures it returns share the state it keeps
export async function startWebhookReceiver(
  options: WebhookReceiverOptions,
): Promise<WebhookReceiver> {
  const now = options.now ?? Date.now;
  const limit = options.maxBodyBytes ?? MAX_WEBHOOK_BODY;
  const deliveries = new Counter({
    name: 'lorenz_webhook_deliveries_total',
    help: 'Webhook deliveries received, by sender and what came of them.',
    labelNames: ['host', 'result'] as const,
    registers: [options.registry],
  });
  const replays = createReplayGuard({ now });
  const buckets = createTokenBuckets({ ...options.limits, now });
  const coalescer = createCoalescer({
    emit: (target) => options.board.wake(target),
    ...(options.limits?.coalesceMs === undefined ? {} : { windowMs: options.limits.coalesceMs }),
    ...(options.limits?.timers ? { timers: options.limits.timers } : {}),
  });

  async function handle(req: IncomingMessage): Promise<Answer & { host: string }> {
    const route = req.method === 'POST' ? parseRoute(req.url ?? '') : null;
    if (!route) return { host: 'unknown', ...answer(404, 'not_found', { error: 'not found' }) };
    const { host, namespace, workflow: name } = route;
    const found = (status: Answer) => ({ host, ...status });
    const secretRef = options.workflows.get(namespace, name)?.spec.webhooks?.secretRef;
    if (!secretRef) return found(answer(404, 'not_found', { error: 'no webhooks here' }));
    if (!buckets.take(`${namespace}/${name}`)) {
      return found(answer(429, 'rate_limited', { error: 'too many deliveries' }));
    }
    let body: Buffer;
    try {
      body = await readBody(req, limit);
    } catch (error) {
      if (error instanceof TooLarge) {
        return found(answer(413, 'too_large', { error: 'delivery too large' }));
      }
      throw error;
    }
    const secret = await options.secrets.get(
      namespace,
      secretRef.name,
      secretRef.key ?? DEFAULT_WEBHOOK_SECRET_KEY,
    );
    if (secret === undefined || secret === '') {
      options.logger?.warn(
        { namespace, workflow: name, secret: secretRef.name },
        'webhook delivery refused: the webhook Secret or its key is missing',
      );
      return found(answer(404, 'not_found', { error: 'no webhooks here' }));
    }
    const headers = lowerHeaders(req);
    const query = new URL(req.url ?? '/', 'http://receiver').searchParams;
    const verified = verifyDelivery({ host, headers, body, query }, secret, now());
    if (!verified.ok) return found(answer(401, verified.reason, { error: 'not verified' }));
    if (replays.seen(`${namespace}/${name}/${deliveryId(host, headers, body)}`)) {
      return found(answer(200, 'replay', { ignored: 'replay' }));
    }
    let parsed: unknown;
    try {
      parsed = parseBody(req, body);
    } catch {
      return found(answer(400, 'bad_request', { error: 'not JSON' }));
    }
    const targets = wakesOf(host, headers, parsed, { namespace, workflow: name });
    if (targets.length === 0) return found(answer(200, 'ignored', { ignored: 'event' }));
    for (const target of targets) coalescer.push(target);
    return found(answer(202, 'accepted', { accepted: targets.map((target) => target.kind) }));
  }

  const respond = (res: ServerResponse, status: number, body: Record<string, unknown>) => {
    if (res.headersSent) return;
    // A refused body may still be arriving: close rather than read the rest of it.
    if (status === 413) res.setHeader('connection', 'close');
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };

  const server: Server = createServer((req, res) => {
    handle(req)
      .then(({ host, status, result, body }) => {
        deliveries.inc({ host, result });
        options.logger?.debug({ host, status, result }, 'webhook delivery');
        respond(res, status, body);
      })
      .catch((error: unknown) => {
        deliveries.inc({ host: parseRoute(req.url ?? '')?.host ?? 'unknown', result: 'error' });
        options.logger?.warn({ err: errorMessage(error) }, 'webhook delivery failed');
        respond(res, 503, { error: 'try again' });
      });
  });
  // A sender that opens a connection and sends nothing must not hold it.
  server.requestTimeout = 30_000;
  server.headersTimeout = 10_000;
  const { host, port } = parseBindAddress(options.bindAddress);
  await listening(server, port, host);
  return {
    port: (server.address() as AddressInfo).port,
    async stop() {
      coalescer.close();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      // Deliveries are short and a lost one costs one poll interval: no grace period.
      server.closeAllConnections();
      await closed;
    },
  };
}
