import { EtagCache, conditionalGet, rememberAnswer } from '../tracker/github/cache.js';
import * as http from '../tracker/http.js';
import { LorenzError, type LorenzErrorCode } from '../workflow/errors.js';

/** How long one request may take, the answer's body included. */
export const GITLAB_REQUEST_TIMEOUT_MS = 30_000;
/** GitLab answers 429 with Retry-After; without it, a minute is the polite wait. */
export const GITLAB_DEFAULT_WAIT_MS = 60_000;

/**
 * The GitLab code hosts' own cache: entries are keyed by the token's digest and the full URL
 * (host included), so one process talking to several GitLab instances keeps them apart.
 */
export const SHARED_GITLAB_ETAG_CACHE = new EtagCache();

export interface GitlabTransport extends http.TransportReach {
  /** The API root without a trailing slash, e.g. https://gitlab.example/api/v4. */
  apiUrl: string;
  token: string;
  cache: EtagCache;
}

export interface GitlabAnswer {
  status: number;
  /** Parsed JSON (from the cache after a 304); the raw text for `as: 'text'`. */
  body: unknown;
  headers: Headers;
  /** The Link header of the answer (kept with a cached answer). */
  link: string | null;
  notModified: boolean;
}

export { isJsonMap } from '../tracker/http.js';

/** Every error leaves through here, so the token cannot reach a message even if echoed back. */
export function gitlabFailure(
  transport: Pick<GitlabTransport, 'token'>,
  code: LorenzErrorCode,
  message: string,
  detail: Record<string, unknown> = {},
): LorenzError {
  const quoted = http.scrubbedQuote(message, transport.token === '' ? [] : [transport.token]);
  return new LorenzError(code, quoted, { codehost: 'gitlab', ...detail });
}

/** GitLab's error bodies carry `message` (a string or a map of field errors) or `error`. */
function messageOf(body: unknown): string | null {
  if (!http.isJsonMap(body)) return null;
  const message = body.message ?? body.error;
  if (typeof message === 'string') return message;
  if (message !== undefined) return JSON.stringify(message);
  return null;
}

/**
 * When to retry a 429: Retry-After (seconds or an HTTP date), else RateLimit-Reset (epoch
 * seconds, as GitLab sends it), else a minute from now.
 */
export function retryAt(headers: Headers, now: number): number {
  const retryAfter = http.retryAfterTime(headers, now);
  if (retryAfter !== null) return retryAfter;
  const reset = Number(headers.get('ratelimit-reset') ?? '');
  if (Number.isFinite(reset) && reset > 0) return http.epochMs(reset);
  return now + GITLAB_DEFAULT_WAIT_MS;
}

/**
 * The token goes in PRIVATE-TOKEN, which GitLab takes for personal, project and group access
 * tokens alike (an OAuth token would need `Authorization: Bearer`; none is used here).
 */
function baseHeaders(transport: GitlabTransport): Record<string, string> {
  return {
    accept: 'application/json',
    'private-token': transport.token,
    'user-agent': 'lorenz-operator',
  };
}

/** GitLab as timedExchange reaches it. */
function service(transport: GitlabTransport): http.HttpService {
  return http.httpService('GitLab', transport, (message, detail) =>
    gitlabFailure(transport, 'codehost_request', message, detail),
  );
}

/** The path of a URL without its query: what an error may name (never a query value). */
function pathOf(url: string): string {
  return new URL(url).pathname;
}

function checkStatus(
  transport: GitlabTransport,
  url: string,
  response: Response,
  body: unknown,
  allow: readonly number[] | undefined,
): void {
  const path = pathOf(url);
  if (response.status === 429) {
    const now = transport.now();
    const { retryAt: when, retryAfterMs } = http.rateLimitDetail(
      429,
      retryAt(response.headers, now),
      now,
    );
    throw gitlabFailure(
      transport,
      'codehost_rate_limited',
      `GitLab rate-limited the request to ${path}; retry after ${when}`,
      { status: 429, path, retryAt: when, retryAfterMs },
    );
  }
  http.checkAnswered(
    { service: 'GitLab', status: response.status, path, message: messageOf(body), allow },
    (message, detail) => gitlabFailure(transport, 'codehost_status', message, detail),
    { path },
  );
}

function notJson(transport: GitlabTransport, url: string, status: number): LorenzError {
  const path = pathOf(url);
  return gitlabFailure(
    transport,
    'codehost_response',
    `GitLab answered ${path} with a body that is not JSON`,
    { status, path },
  );
}

/**
 * The Link header, or one made from `x-next-page` when GitLab sent only that: kept with a
 * cached answer, so the pages after a 304 are found too (a 304 carries no page headers).
 */
function linkOf(url: string, headers: Headers): string | null {
  const link = headers.get('link');
  if (link !== null && link !== '') return link;
  const page = headers.get('x-next-page')?.trim() ?? '';
  if (!/^\d+$/.test(page)) return null;
  const next = new URL(url);
  next.searchParams.set('page', page);
  return `<${next.toString()}>; rel="next"`;
}

export interface GetOptions {
  signal?: AbortSignal | undefined;
  /** Statuses the caller handles itself (404 for a branch that is not there). */
  allow?: readonly number[];
  /** `text` for a job trace (text/plain); JSON otherwise. */
  as?: 'json' | 'text';
}

/**
 * GET one URL. A remembered ETag goes out as If-None-Match and a 304 is answered from the
 * cache. A status outside 2xx that the caller does not allow throws: 429
 * `codehost_rate_limited`, others `codehost_status`; a body that is not JSON
 * `codehost_response`; no answer at all `codehost_request`.
 */
export async function gitlabGet(
  transport: GitlabTransport,
  url: string,
  options: GetOptions = {},
): Promise<GitlabAnswer> {
  const asText = options.as === 'text';
  const { response, text, cached } = await conditionalGet(
    service(transport),
    transport.cache,
    transport.token,
    url,
    { ...baseHeaders(transport), ...(asText ? { accept: 'text/plain' } : {}) },
    options.signal,
  );
  if (response.status === 304 && cached !== undefined) {
    const parsed = asText ? { ok: true as const, value: cached.body } : http.parseJson(cached.body);
    if (parsed.ok) {
      const headers = response.headers;
      return { status: 304, body: parsed.value, headers, link: cached.link, notModified: true };
    }
  }
  const parsed = asText ? { ok: true as const, value: text } : http.parseJson(text);
  const body = parsed.ok ? parsed.value : undefined;
  checkStatus(transport, url, response, body, options.allow);
  if (options.allow?.includes(response.status) === true) {
    transport.cache.delete(transport.token, url);
    return {
      status: response.status,
      body,
      headers: response.headers,
      link: null,
      notModified: false,
    };
  }
  if (!parsed.ok) {
    throw notJson(transport, url, response.status);
  }
  const link = linkOf(url, response.headers);
  rememberAnswer(transport.cache, transport.token, url, { headers: response.headers, text, link });
  return { status: response.status, body, headers: response.headers, link, notModified: false };
}

/**
 * A write (POST or PUT with a JSON body); never cached. GitLab answers a conditional GET of a
 * changed resource with 200 and a new ETag, so the cache needs no invalidation here.
 */
export async function gitlabSend(
  transport: GitlabTransport,
  method: 'POST' | 'PUT',
  url: string,
  payload: Record<string, unknown>,
  options: { signal?: AbortSignal | undefined; allow?: readonly number[] } = {},
): Promise<{ status: number; body: unknown }> {
  const { response, text } = await http.timedExchange(
    service(transport),
    url,
    http.jsonRequest(method, baseHeaders(transport), payload),
    options.signal,
  );
  const parsed = http.parseJson(text);
  const body = parsed.ok ? parsed.value : undefined;
  checkStatus(transport, url, response, body, options.allow);
  if (options.allow?.includes(response.status) === true) return { status: response.status, body };
  if (!parsed.ok) {
    throw notJson(transport, url, response.status);
  }
  return { status: response.status, body };
}
