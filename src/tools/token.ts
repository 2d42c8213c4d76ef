import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Per-attempt bearer tokens for the tools gateway: `lzt1.<namespace>.<run>.<attempt>.<secret>`.
 * The clear parts tell the gateway which run to look up; only the secret (32 random bytes,
 * base64url) makes the token hard to forge. The controller keeps nothing but the sha256 of the
 * whole token, so a leaked Secret annotation or a heap dump does not hand out a usable token.
 */
export const TOKEN_VERSION = 'lzt1';

/** The bytes of randomness in a token's secret part. */
export const TOKEN_SECRET_BYTES = 32;

export interface TokenSubject {
  namespace: string;
  run: string;
  attempt: number;
}

// A namespace is a DNS label; a run name a DNS subdomain (dots allowed, which is why the
// parser takes the run name as everything between the namespace and the attempt).
const NAMESPACE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const RUN_NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;
const ATTEMPT = /^[1-9][0-9]{0,8}$/;
// 32 bytes in unpadded base64url are exactly 43 characters.
const SECRET = /^[A-Za-z0-9_-]{43}$/;
/** Longer than any well-formed token: a bound on what is hashed for a stranger. */
const MAX_TOKEN_LENGTH = 4 + 1 + 63 + 1 + 253 + 1 + 9 + 1 + 43;

/** A fresh token for one attempt of a run. `secret` is for tests; leave it out otherwise. */
export function mintToken(subject: TokenSubject, secret?: Buffer): string {
  const bytes = secret ?? randomBytes(TOKEN_SECRET_BYTES);
  if (bytes.length !== TOKEN_SECRET_BYTES) {
    throw new RangeError(`a token secret is ${TOKEN_SECRET_BYTES} bytes`);
  }
  const parts = [
    TOKEN_VERSION,
    subject.namespace,
    subject.run,
    String(subject.attempt),
    bytes.toString('base64url'),
  ];
  const token = parts.join('.');
  if (!parseToken(token)) throw new RangeError('not a valid namespace, run name or attempt');
  return token;
}

/** The lower-case hex sha256 of a token: what the Secret's annotation and resolveRun carry. */
export function tokenSha256(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Who a token claims to be, or null when it is not a well-formed token. Proves nothing. */
export function parseToken(token: string): TokenSubject | null {
  if (token.length > MAX_TOKEN_LENGTH) return null;
  const parts = token.split('.');
  if (parts.length < 5 || parts[0] !== TOKEN_VERSION) return null;
  const namespace = parts[1] ?? '';
  const secret = parts[parts.length - 1] ?? '';
  const attempt = parts[parts.length - 2] ?? '';
  const run = parts.slice(2, -2).join('.');
  if (!NAMESPACE.test(namespace) || !RUN_NAME.test(run)) return null;
  if (!ATTEMPT.test(attempt) || !SECRET.test(secret)) return null;
  return { namespace, run, attempt: Number(attempt) };
}

/** The token of an `Authorization: Bearer <token>` header, or null. */
export function bearerToken(header: string | string[] | undefined): string | null {
  // Several Authorization headers are ambiguous: refuse rather than pick one.
  if (typeof header !== 'string') return null;
  const match = /^Bearer +(\S+) *$/i.exec(header);
  return match?.[1] ?? null;
}

const HEX_SHA256 = /^[0-9a-f]{64}$/;

/**
 * Whether two sha256 hex digests are equal, in time that does not depend on where they
 * differ (so a caller cannot learn a stored hash byte by byte). A malformed stored hash
 * never matches.
 */
export function sha256HexEqual(actual: string, expected: string): boolean {
  const want = expected.trim().toLowerCase();
  if (!HEX_SHA256.test(actual) || !HEX_SHA256.test(want)) return false;
  return timingSafeEqual(Buffer.from(actual, 'hex'), Buffer.from(want, 'hex'));
}
