// The parts of an HTTP transport that every tracker and code host does alike: one timed
// exchange, the words for a request that got no answer, Retry-After, and the quoting of a
// server's message. Each transport keeps its own error codes, origin and error-body format.
import type { LorenzError } from '../workflow/errors.js';
import type { FetchLike } from './types.js';

// Messages quote the server; a long body would drown a status condition.
const MAX_QUOTED = 300;

export function isJsonMap(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A message with every secret replaced by `[redacted]`, cut to a length a condition can hold. */
export function scrubbedQuote(message: string, secrets: readonly string[]): string {
  const scrubbed = secrets
    .filter((secret) => secret !== '')
    .reduce((text, secret) => text.split(secret).join('[redacted]'), message);
  return scrubbed.length > MAX_QUOTED ? `${scrubbed.slice(0, MAX_QUOTED)}…` : scrubbed;
}

export function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

export function numberHeader(headers: Headers, name: string): number | null {
  const raw = headers.get(name);
  if (raw === null || raw.trim() === '') return null;
  const value = Number(raw);
  return Number.isFinite(value) ? value : null;
}

/** Reset headers come in epoch seconds or milliseconds; a value below 1e12 is seconds. */
export function epochMs(value: number): number {
  return value < 1e12 ? value * 1000 : value;
}

/** The time Retry-After names (seconds from now, or an HTTP date), or null without one. */
export function retryAfterTime(headers: Headers, now: number): number | null {
  const retryAfter = headers.get('retry-after')?.trim() ?? '';
  if (retryAfter === '') return null;
  const seconds = Number(retryAfter);
  if (Number.isFinite(seconds) && seconds >= 0) return now + seconds * 1000;
  const date = Date.parse(retryAfter);
  return Number.isNaN(date) ? null : date;
}

/** What a rate-limit error carries besides its message. */
export function rateLimitDetail(
  status: number,
  at: number,
  now: number,
): { status: number; retryAt: string; retryAfterMs: number } {
  return { status, retryAt: new Date(at).toISOString(), retryAfterMs: Math.max(0, at - now) };
}

/** Builds the transport's own error for a message and its detail. */
export type FailureOf = (message: string, detail?: Record<string, unknown>) => LorenzError;

/** Who answers (for messages, e.g. `GitHub`) and how to reach it. */
export interface HttpService {
  name: string;
  fetch: FetchLike;
  timeoutMs: number;
}

/** The error for a request that got no answer: timed out, aborted, or failed on the socket. */
export function requestFailure(
  service: Pick<HttpService, 'name' | 'timeoutMs'>,
  error: unknown,
  signal: AbortSignal,
  fail: FailureOf,
): LorenzError {
  const reason: unknown = signal.reason;
  if (signal.aborted && reason instanceof DOMException && reason.name === 'TimeoutError') {
    return fail(`${service.name} did not answer within ${service.timeoutMs} ms`, {
      timeoutMs: service.timeoutMs,
    });
  }
  if (signal.aborted) return fail(`the request to ${service.name} was aborted`);
  // fetch wraps the socket error in `cause`; that says more than "fetch failed".
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  const text = cause instanceof Error ? cause.message : String(cause);
  return fail(`the request to ${service.name} failed: ${text}`);
}

/**
 * One request and its whole body, under the service's timeout and the caller's signal. No
 * answer at all throws the error `fail` builds (the transport's `*_request` code).
 */
export async function timedExchange(
  service: HttpService,
  url: string,
  init: RequestInit,
  callerSignal: AbortSignal | undefined,
  fail: FailureOf,
): Promise<{ response: Response; text: string }> {
  const timeout = AbortSignal.timeout(service.timeoutMs);
  const signal = callerSignal === undefined ? timeout : AbortSignal.any([timeout, callerSignal]);
  try {
    const response = await service.fetch(url, { ...init, signal });
    return { response, text: await response.text() };
  } catch (error) {
    throw requestFailure(service, error, signal, fail);
  }
}
