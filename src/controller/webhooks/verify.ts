import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/** The senders a delivery URL may name (`/webhooks/{namespace}/{workflow}/{host}`). */
export const WEBHOOK_HOSTS = ['github', 'gitlab', 'linear', 'jira'] as const;
export type WebhookHost = (typeof WEBHOOK_HOSTS)[number];

export const isWebhookHost = (text: string): text is WebhookHost =>
  (WEBHOOK_HOSTS as readonly string[]).includes(text);

/** What a delivery brings that its proof is read from; header names in lower case. */
export interface SignedDelivery {
  host: WebhookHost;
  headers: Readonly<Record<string, string | undefined>>;
  /** The raw body: signatures are over these bytes, never over a re-encoding of them. */
  body: Buffer;
  /** The URL's query (Jira sends its shared secret there). */
  query: URLSearchParams;
}

export type VerifyResult =
  | { ok: true }
  /** unsigned: no proof at all; forged: a proof that does not match; stale: Linear's clock. */
  | { ok: false; reason: 'unsigned' | 'forged' | 'stale' };

/** How far Linear's `webhookTimestamp` may be from our clock (its docs suggest a minute). */
export const LINEAR_TIMESTAMP_WINDOW_MS = 60_000;

const SHA256_HEX = /^[0-9a-f]{64}$/i;

/**
 * Constant time over equal-length buffers: both sides are hashed first, so the length of
 * the secret is not told by how fast a wrong guess fails.
 */
export function sameSecret(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b);
}

/** An HMAC-SHA256 in hex against the one we compute; a malformed one is simply wrong. */
export function sameHmac(hex: string, secret: string, body: Buffer): boolean {
  if (!SHA256_HEX.test(hex)) return false;
  const expected = createHmac('sha256', secret).update(body).digest();
  return timingSafeEqual(Buffer.from(hex, 'hex'), expected);
}

/** Linear's `webhookTimestamp` (ms since the epoch) from the body; undefined if absent. */
function linearTimestamp(body: Buffer): number | undefined {
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    if (typeof parsed !== 'object' || parsed === null) return undefined;
    const value = (parsed as Record<string, unknown>).webhookTimestamp;
    return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Checks a delivery's proof as each sender documents it. Pure: the clock is a parameter.
 * - GitHub: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>`.
 * - GitLab: `X-Gitlab-Token` is the secret itself.
 * - Linear: `Linear-Signature: <hex HMAC-SHA256 of the body>`, and the body's
 *   `webhookTimestamp` within a minute of now (a captured delivery cannot be replayed later).
 * - Jira: the secret is in the URL it was given (`?secret=`).
 */
export function verifyDelivery(
  delivery: SignedDelivery,
  secret: string,
  nowMs: number,
): VerifyResult {
  const { headers } = delivery;
  switch (delivery.host) {
    case 'github': {
      const signature = headers['x-hub-signature-256'];
      if (!signature) return { ok: false, reason: 'unsigned' };
      const hex = signature.startsWith('sha256=') ? signature.slice('sha256='.length) : '';
      return sameHmac(hex, secret, delivery.body) ? { ok: true } : { ok: false, reason: 'forged' };
    }
    case 'gitlab': {
      const token = headers['x-gitlab-token'];
      if (!token) return { ok: false, reason: 'unsigned' };
      return sameSecret(token, secret) ? { ok: true } : { ok: false, reason: 'forged' };
    }
    case 'linear': {
      const signature = headers['linear-signature'];
      if (!signature) return { ok: false, reason: 'unsigned' };
      if (!sameHmac(signature.trim(), secret, delivery.body))
        return { ok: false, reason: 'forged' };
      const sentAt = linearTimestamp(delivery.body);
      if (sentAt === undefined || Math.abs(nowMs - sentAt) > LINEAR_TIMESTAMP_WINDOW_MS) {
        return { ok: false, reason: 'stale' };
      }
      return { ok: true };
    }
    case 'jira': {
      const given = delivery.query.get('secret');
      if (!given) return { ok: false, reason: 'unsigned' };
      return sameSecret(given, secret) ? { ok: true } : { ok: false, reason: 'forged' };
    }
  }
}
