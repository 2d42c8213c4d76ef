// The parts of an HTTP transport that every tracker and code host does alike: one timed
// exchange, the words for a request that got no answer, Retry-After, and the quoting of a
// server's message. Each transport keeps its own error codes, origin and error-body format.
import { LorenzError } from '../workflow/errors.js';
import type { FetchLike } from './types.js';

// Messages quote the server; a long body would drown a status condition.
const MAX_QUOTED = 300;

/** Whether a URL is one a token may be sent to: http or https (no file:, data:, ssh:, …). */
export function isHttpUrl(url: URL): boolean {
  return url.protocol === 'https:' || url.protocol === 'http:';
}

/** tracker.endpoint as a URL, null when it is not set; anything but an http(s) URL is refused. */
export function endpointUrl(endpoint: string | null): URL | null {
  const value = endpoint?.trim() ?? '';
  if (value === '') return null;
  const url = URL.parse(value);
  if (url === null || !isHttpUrl(url)) {
    throw new LorenzError('invalid_tracker_config', 'tracker.endpoint: must be an http(s) URL', {
      keys: ['tracker.endpoint'],
    });
  }
  return url;
}

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

/**
 * Throws for a status outside 2xx that the caller does not handle itself (`allow`), quoting
 * the server's own message when its error body had one; the detail always names the status.
 */
export function checkAnswered(
  answer: {
    service: string;
    status: number;
    path: string;
    message: string | null;
    allow: readonly number[] | undefined;
  },
  fail: FailureOf,
  detail: Record<string, unknown> = {},
): void {
  const { service, status, path, message } = answer;
  if (answer.allow?.includes(status) === true) return;
  if (status >= 200 && status <= 299) return;
  throw fail(
    `${service} answered HTTP ${status} for ${path}${message === null ? '' : `: ${message}`}`,
    { status, ...detail },
  );
}

/** Builds the transport's own error for a message and its detail. */
export type FailureOf = (message: string, detail?: Record<string, unknown>) => LorenzError;

/**
 * Who answers (for messages, e.g. `GitHub`), how to reach it, and how the transport words a
 * request that got no answer (its `*_request` code, its origin, its scrubbing).
 */
export interface HttpService {
  name: string;
  fetch: FetchLike;
  timeoutMs: number;
  requestFailure: FailureOf;
}

/** What an adapter's options may set of its transport's reach; each falls back to a default. */
export interface TransportOptions {
  fetch?: FetchLike | undefined;
  timeoutMs?: number | undefined;
  now?: (() => number) | undefined;
}

/** How a transport reaches its server: the fetch, the per-request timeout and the clock. */
export interface TransportReach {
  fetch: FetchLike;
  /** One request, the answer's body included. */
  timeoutMs: number;
  /** The clock for Retry-After and rate-limit reset times (epoch ms); injectable for tests. */
  now: () => number;
}

/** The fetch, the timeout and the clock of a transport: the options', else the defaults. */
export function transportReach(
  options: TransportOptions,
  defaultTimeoutMs: number,
): TransportReach {
  return {
    fetch: options.fetch ?? globalThis.fetch,
    timeoutMs: options.timeoutMs ?? defaultTimeoutMs,
    now: options.now ?? Date.now,
  };
}

/** A request that sends `payload` as JSON, with the transport's own headers. */
export function jsonRequest(
  method: string,
  headers: Record<string, string>,
  payload: Record<string, unknown>,
): RequestInit {
  return {
    method,
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify(payload),
  };
}

/** The service a transport's fetch and timeout reach, its no-answer errors built by `fail`. */
export function httpService(
  name: string,
  transport: { fetch: FetchLike; timeoutMs: number },
  fail: FailureOf,
): HttpService {
  return { name, fetch: transport.fetch, timeoutMs: transport.timeoutMs, requestFailure: fail };
}

/**
 * The rate-limit error of a service that names no status in its message: with the time to
 * retry at when the answer gave one.
 */
export function rateLimitFailure(
  name: string,
  status: number,
  at: number | null,
  now: number,
  fail: FailureOf,
): LorenzError {
  if (at === null) return fail(`${name} rate-limited the request`, { status });
  const detail = rateLimitDetail(status, at, now);
  return fail(`${name} rate-limited the request; retry after ${detail.retryAt}`, detail);
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
 * answer at all throws the service's request failure.
 */
export async function timedExchange(
  service: HttpService,
  url: string,
  init: RequestInit,
  callerSignal: AbortSignal | undefined,
): Promise<{ response: Response; text: string }> {
  const timeout = AbortSignal.timeout(service.timeoutMs);
  const signal = callerSignal === undefined ? timeout : AbortSignal.any([timeout, callerSignal]);
  try {
    const response = await service.fetch(url, { ...init, signal });
    return { response, text: await response.text() };
  } catch (error) {
    throw requestFailure(service, error, signal, service.requestFailure);
  }
}
