import { LorenzError, type LorenzErrorCode } from '../../workflow/errors.js';
import {
  httpService,
  isJsonMap,
  jsonRequest,
  rateLimitFailure,
  retryAfterTime,
  scrubbedQuote,
  timedExchange,
} from '../http.js';
import type { TransportReach } from '../http.js';

/** How long one request may take, the answer's body included. */
export const JIRA_REQUEST_TIMEOUT_MS = 30_000;

export interface JiraTransport extends TransportReach {
  site: string;
  email: string;
  token: string;
}

type JsonMap = Record<string, unknown>;

export { isJsonMap };

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
  const quoted = scrubbedQuote(message, secrets);
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
  const retryAfter = retryAfterTime(headers, now);
  if (retryAfter !== null) return retryAfter;
  const reset = Date.parse(headers.get('x-ratelimit-reset') ?? '');
  return Number.isNaN(reset) ? null : reset;
}

function rateLimited(transport: JiraTransport, response: Response): LorenzError {
  const now = transport.now();
  const at = jiraRetryTime(response.headers, now);
  return rateLimitFailure('Jira', response.status, at, now, (message, detail) =>
    failure(transport, 'tracker_rate_limited', message, detail),
  );
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
  const service = httpService('Jira', transport, (message, detail) =>
    failure(transport, 'tracker_request', message, detail),
  );
  const headers = { accept: 'application/json', authorization: basicAuth(transport) };
  const init = body === null ? { method, headers } : jsonRequest(method, headers, body);
  const { response, text } = await timedExchange(
    service,
    `${transport.site}${path}`,
    init,
    callerSignal,
  );
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
