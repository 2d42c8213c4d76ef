import { LorenzError, type LorenzErrorCode } from '../../workflow/errors.js';
import * as http from '../http.js';
import { type EtagCache, conditionalGet, rememberAnswer } from './cache.js';
import { GITHUB_API_VERSION } from './settings.js';

/** How long one request may take, the answer's body included. */
export const GITHUB_REQUEST_TIMEOUT_MS = 30_000;
/**
 * GitHub asks clients hit by a secondary rate limit without Retry-After to wait at least a
 * minute.
 */
export const GITHUB_SECONDARY_WAIT_MS = 60_000;

export interface GithubTransport extends http.TransportReach {
  token: string;
  cache: EtagCache;
  /**
   * Whose failures these are: the tracker's (`tracker_*` codes, the default) or the code
   * host's (`codehost_*`), so one transport serves both without either seeing the other's codes.
   */
  role?: GithubRole;
}

export type GithubRole = 'tracker' | 'codehost';

export interface GithubAnswer {
  status: number;
  /** Parsed JSON; from the cache when GitHub answered 304. */
  body: unknown;
  link: string | null;
  /** True when the answer came from the cache after a 304. */
  notModified: boolean;
}

export { isJsonMap } from '../http.js';

type TrackerCode = Extract<LorenzErrorCode, `tracker_${string}`>;

// The code host has no pagination code: a broken next link is an answer not as promised.
const CODEHOST_CODES: Partial<Record<TrackerCode, LorenzErrorCode>> = {
  tracker_request: 'codehost_request',
  tracker_status: 'codehost_status',
  tracker_response: 'codehost_response',
  tracker_rate_limited: 'codehost_rate_limited',
  tracker_pagination: 'codehost_response',
};

/** A tracker code as the transport's role names it; codes of other families pass unchanged. */
export function codeForRole(role: GithubRole | undefined, code: LorenzErrorCode): LorenzErrorCode {
  if (role !== 'codehost') return code;
  return CODEHOST_CODES[code as TrackerCode] ?? code;
}

/** Every error leaves through here, so the token cannot reach a message even if echoed back. */
export function githubFailure(
  transport: Pick<GithubTransport, 'token' | 'role'>,
  code: LorenzErrorCode,
  message: string,
  detail: Record<string, unknown> = {},
): LorenzError {
  const quoted = http.scrubbedQuote(message, [transport.token]);
  const origin = transport.role === 'codehost' ? { codehost: 'github' } : { tracker: 'github' };
  return new LorenzError(codeForRole(transport.role, code), quoted, { ...origin, ...detail });
}

function messageOf(body: unknown): string | null {
  return http.isJsonMap(body) && typeof body.message === 'string' ? body.message : null;
}

/**
 * When to retry, if this answer is a rate limit, else null. Primary: X-RateLimit-Remaining 0
 * (retry at X-RateLimit-Reset). Secondary: 403/429 with Retry-After, or whose message says
 * so (retry after a minute). A 429 is a rate limit whatever it says.
 */
export function rateLimitRetryAt(
  status: number,
  headers: Headers,
  body: unknown,
  now: number,
): number | null {
  if (status !== 403 && status !== 429) return null;
  const retryAfter = http.retryAfterTime(headers, now);
  if (retryAfter !== null) return retryAfter;
  const remaining = http.numberHeader(headers, 'x-ratelimit-remaining');
  const reset = http.numberHeader(headers, 'x-ratelimit-reset');
  // Reset headers are epoch seconds on GitHub; a value that is clearly milliseconds is kept.
  if (remaining !== null && remaining <= 0) {
    return reset !== null ? http.epochMs(reset) : now + GITHUB_SECONDARY_WAIT_MS;
  }
  if (status === 429 || /rate limit/i.test(messageOf(body) ?? '')) {
    return now + GITHUB_SECONDARY_WAIT_MS;
  }
  return null;
}

function rateLimited(transport: GithubTransport, status: number, at: number): LorenzError {
  const detail = http.rateLimitDetail(status, at, transport.now());
  return githubFailure(
    transport,
    'tracker_rate_limited',
    `GitHub rate-limited the request (HTTP ${status}); retry after ${detail.retryAt}`,
    detail,
  );
}

/** The headers every request carries; GitHub refuses requests without a User-Agent. */
function baseHeaders(transport: GithubTransport): Record<string, string> {
  return {
    accept: 'application/vnd.github+json',
    authorization: `Bearer ${transport.token}`,
    'x-github-api-version': GITHUB_API_VERSION,
    'user-agent': 'lorenz-operator',
  };
}

/** GitHub as timedExchange reaches it. */
function service(transport: GithubTransport): http.HttpService {
  return http.httpService('GitHub', transport, (message, detail) =>
    githubFailure(transport, 'tracker_request', message, detail),
  );
}

/** Throws for a rate limit or a status outside 2xx that the caller does not handle itself. */
function checkStatus(
  transport: GithubTransport,
  url: string,
  response: Response,
  body: unknown,
  allow: readonly number[] | undefined,
): void {
  const retryAt = rateLimitRetryAt(response.status, response.headers, body, transport.now());
  if (retryAt !== null) throw rateLimited(transport, response.status, retryAt);
  http.checkAnswered(
    {
      service: 'GitHub',
      status: response.status,
      path: new URL(url).pathname,
      message: messageOf(body),
      allow,
    },
    (message, detail) => githubFailure(transport, 'tracker_status', message, detail),
  );
}

const notJson = (transport: GithubTransport, status: number) =>
  githubFailure(transport, 'tracker_response', 'GitHub answered with a body that is not JSON', {
    status,
  });

/**
 * GET one URL. A remembered ETag goes out as If-None-Match, and a 304 is answered from the
 * cache. `allow` lists statuses the caller handles itself (404 and 410 for an issue that is
 * gone); their body is returned unread. Anything else outside 2xx throws: a rate limit
 * `tracker_rate_limited`, others `tracker_status`; a body that is not JSON `tracker_response`;
 * no answer at all `tracker_request`.
 */
export async function githubGet(
  transport: GithubTransport,
  url: string,
  options: { signal?: AbortSignal | undefined; allow?: readonly number[] } = {},
): Promise<GithubAnswer> {
  const { response, text, cached } = await conditionalGet(
    service(transport),
    transport.cache,
    transport.token,
    url,
    baseHeaders(transport),
    options.signal,
  );
  if (response.status === 304 && cached !== undefined) {
    const parsed = http.parseJson(cached.body);
    if (parsed.ok) {
      return { status: 304, body: parsed.value, link: cached.link, notModified: true };
    }
  }
  const parsed = http.parseJson(text);
  const body = parsed.ok ? parsed.value : undefined;
  checkStatus(transport, url, response, body, options.allow);
  if (options.allow?.includes(response.status) === true) {
    transport.cache.delete(transport.token, url);
    return { status: response.status, body, link: null, notModified: false };
  }
  if (!parsed.ok) throw notJson(transport, response.status);
  const link = response.headers.get('link');
  rememberAnswer(transport.cache, transport.token, url, { headers: response.headers, text, link });
  return { status: response.status, body, link, notModified: false };
}

/**
 * A write (POST or PATCH with a JSON body). Never cached: the ETag cache only stands for GETs,
 * and those need no invalidation here, because GitHub answers a conditional GET of a changed
 * resource with 200 and a new ETag. The errors are githubGet's.
 */
export async function githubSend(
  transport: GithubTransport,
  method: 'POST' | 'PATCH',
  url: string,
  payload: Record<string, unknown>,
  signal?: AbortSignal,
): Promise<{ status: number; body: unknown }> {
  const { response, text } = await http.timedExchange(
    service(transport),
    url,
    http.jsonRequest(method, baseHeaders(transport), payload),
    signal,
  );
  const parsed = http.parseJson(text);
  const body = parsed.ok ? parsed.value : undefined;
  checkStatus(transport, url, response, body, undefined);
  if (!parsed.ok) throw notJson(transport, response.status);
  return { status: response.status, body };
}
