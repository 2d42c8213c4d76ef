import { LorenzError, type LorenzErrorCode } from '../../workflow/errors.js';
import type { FetchLike } from '../types.js';

/** How long one request may take, the answer's body included. */
export const JIRA_REQUEST_TIMEOUT_MS = 30_000;

export interface JiraTransport {
  site: string;
  email: string;
  token: string;
  fetch: FetchLike;
  timeoutMs: number;
  /** The clock for Retry-After (epoch ms); injectable for tests. */
  now: () => number;
}

type JsonMap = Record<string, unknown>;

// Messages quote the server; a long body would drown a status condition.
const MAX_QUOTED = 300;

export function isJsonMap(value: unknown): value is JsonMap {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The Basic credentials: `email:token`, base64. */
export function basicAuth(transport: Pick<JiraTransport, 'email' | 'token'>): string {
  return `Basic ${Buffer.from(`${transport.email}:${transport.token}`).toString('base64')}`;
}

/**
 * Every error leaves through here. The token is scrubbed in every form a server or a
 * network library could echo it back in: bare, and inside the Basic credentials.
 */
function failure(
  transport: JiraTransport,
  code: LorenzErrorCode,
  message: string,
  detail: JsonMap = {},
): LorenzError {
  const secrets = [basicAuth(transport).slice('Basic '.length), transport.token];
  const scrubbed = secrets.reduce((text, secret) => text.split(secret).join('[redacted]'), message);
  const quoted = scrubbed.length > MAX_QUOTED ? `${scrubbed.slice(0, MAX_QUOTED)}…` : scrubbed;
  return new LorenzError(code, quoted, { tracker: 'jira', ...detail });
}

/** Jira's error body: `{"errorMessages": [...], "errors": {"field": "message"}}`. */
function jiraErrorText(body: unknown): string | null {
  if (!isJsonMap(body)) return null;
  const messages = Array.isArray(body.errorMessages)
    ? body.errorMessages.filter((m): m is string => typeof m === 'string')
    : [];
  const fields = isJsonMap(body.errors)
    ? Object.entries(body.errors).map(([key, value]) => `${key}: ${String(value)}`)
    : [];
  const all = [...messages, ...fields];
  return all.length > 0 ? all.join('; ') : null;
}

/**
 * When a rate-limited request may be sent again: Retry-After (seconds, or an HTTP date),
 * else X-RateLimit-Reset, which Jira gives as an ISO-8601 time.
 */
export function jiraRetryTime(headers: Headers, now: number): number | null {
  const retryAfter = headers.get('retry-after')?.trim() ?? '';
  if (retryAfter !== '') {
    const seconds = Number(retryAfter);
    if (Number.isFinite(seconds) && seconds >= 0) return now + seconds * 1000;
    const date = Date.parse(retryAfter);
    if (!Number.isNaN(date)) return date;
  }
  const reset = Date.parse(headers.get('x-ratelimit-reset') ?? '');
  return Number.isNaN(reset) ? null : reset;
}

function rateLimited(transport: JiraTransport, response: Response): LorenzError {
  const now = transport.now();
  const at = jiraRetryTime(response.headers, now);
  if (at === null) {
    return failure(transport, 'tracker_rate_limited', 'Jira rate-limited the request', {
      status: response.status,
    });
  }
  const retryAt = new Date(at).toISOString();
  return failure(
    transport,
    'tracker_rate_limited',
    `Jira rate-limited the request; retry after ${retryAt}`,
    { status: response.status, retryAt, retryAfterMs: Math.max(0, at - now) },
  );
}

function requestFailure(transport: JiraTransport, error: unknown, signal: AbortSignal) {
  const reason: unknown = signal.reason;
  if (signal.aborted && reason instanceof DOMException && reason.name === 'TimeoutError') {
    return failure(
      transport,
      'tracker_request',
      `Jira did not answer within ${transport.timeoutMs} ms`,
      { timeoutMs: transport.timeoutMs },
    );
  }
  if (signal.aborted)
    return failure(transport, 'tracker_request', 'the request to Jira was aborted');
  // fetch wraps the socket error in `cause`; that says more than "fetch failed".
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  const text = cause instanceof Error ? cause.message : String(cause);
  return failure(transport, 'tracker_request', `the request to Jira failed: ${text}`);
}

export type JiraMethod = 'GET' | 'POST' | 'PUT';

/**
 * Send one request to `path` (under the site) and return the status and the JSON Jira
 * answers (null for an empty 2xx body, as a transition's 204). HTTP 429 is
 * `tracker_rate_limited`; another non-2xx status not in `allow` `tracker_status` with Jira's
 * own message; a body that is not JSON `tracker_response`; no answer at all `tracker_request`.
 */
export async function jiraSend(
  transport: JiraTransport,
  method: JiraMethod,
  path: string,
  body: JsonMap | null,
  callerSignal: AbortSignal | undefined,
  allow: readonly number[] = [],
): Promise<{ status: number; body: unknown }> {
  const timeout = AbortSignal.timeout(transport.timeoutMs);
  const signal = callerSignal === undefined ? timeout : AbortSignal.any([timeout, callerSignal]);
  let response: Response;
  let text: string;
  try {
    const headers = { accept: 'application/json', authorization: basicAuth(transport) };
    response = await transport.fetch(`${transport.site}${path}`, {
      method,
      ...(body === null
        ? { headers }
        : {
            headers: { ...headers, 'content-type': 'application/json' },
            body: JSON.stringify(body),
          }),
      signal,
    });
    text = await response.text();
  } catch (error) {
    throw requestFailure(transport, error, signal);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (response.status === 429) throw rateLimited(transport, response);
  if (allow.includes(response.status)) return { status: response.status, body: parsed ?? null };
  if (!response.ok) {
    const reason = jiraErrorText(parsed);
    throw failure(
      transport,
      'tracker_status',
      `Jira answered HTTP ${response.status}${reason === null ? '' : `: ${reason}`}`,
      { status: response.status },
    );
  }
  if (text.trim() === '' && response.status === 204) return { status: 204, body: null };
  if (parsed === undefined) {
    throw failure(transport, 'tracker_response', 'Jira answered with a body that is not JSON');
  }
  return { status: response.status, body: parsed };
}

async function jiraRequest(
  transport: JiraTransport,
  path: string,
  body: JsonMap | null,
  signal: AbortSignal | undefined,
): Promise<unknown> {
  return (await jiraSend(transport, body === null ? 'GET' : 'POST', path, body, signal)).body;
}

/** POST a JSON body; the answer must be a JSON object. */
export async function jiraPost(
  transport: JiraTransport,
  path: string,
  body: JsonMap,
  signal?: AbortSignal,
): Promise<JsonMap> {
  const answer = await jiraRequest(transport, path, body, signal);
  if (!isJsonMap(answer)) {
    throw failure(transport, 'tracker_response', `Jira answered ${path} with no JSON object`);
  }
  return answer;
}

/** GET a JSON answer, whatever its shape (some endpoints answer a bare list). */
export function jiraGet(transport: JiraTransport, path: string, signal?: AbortSignal) {
  return jiraRequest(transport, path, null, signal);
}

/** A `tracker_response` or `tracker_pagination` error from outside this module, scrubbed too. */
export function jiraFailure(
  transport: JiraTransport,
  code: 'tracker_response' | 'tracker_pagination' | 'tracker_status' | 'invalid_tracker_config',
  message: string,
  detail?: JsonMap,
): LorenzError {
  return failure(transport, code, message, detail);
}
