import { LorenzError, type LorenzErrorCode } from '../../workflow/errors.js';
import {
  epochMs,
  httpService,
  isJsonMap,
  numberHeader,
  rateLimitFailure,
  retryAfterTime,
  scrubbedQuote,
  timedExchange,
} from '../http.js';
import type { TransportReach } from '../http.js';

/** How long one GraphQL request may take, the answer's body included. */
export const LINEAR_REQUEST_TIMEOUT_MS = 30_000;

export interface LinearTransport extends TransportReach {
  endpoint: string;
  apiKey: string;
}

type JsonMap = Record<string, unknown>;

interface GraphQLErrorShape {
  message: string;
  code: string | null;
}

export { isJsonMap };

/**
 * Every error leaves through here, so the key can never reach a message even if a server or
 * a network library echoed it back.
 */
function failure(
  transport: LinearTransport,
  code: LorenzErrorCode,
  message: string,
  detail: Record<string, unknown> = {},
): LorenzError {
  const quoted = scrubbedQuote(message, [transport.apiKey]);
  return new LorenzError(code, quoted, { tracker: 'linear', ...detail });
}

/** Linear answers errors as GraphQL `errors` entries, even with a non-2xx status. */
function graphQLErrors(body: unknown): GraphQLErrorShape[] {
  if (!isJsonMap(body) || !Array.isArray(body.errors)) return [];
  return body.errors.map((entry: unknown) => {
    const message =
      isJsonMap(entry) && typeof entry.message === 'string' ? entry.message : 'unknown error';
    const extensions = isJsonMap(entry) && isJsonMap(entry.extensions) ? entry.extensions : {};
    return { message, code: typeof extensions.code === 'string' ? extensions.code : null };
  });
}

/**
 * When the request may be retried, if the answer says: Retry-After (seconds or an HTTP
 * date) first; else the latest reset among Linear's budgets (requests, complexity) that are
 * spent, or among all of them when none says it is spent.
 */
export function retryTime(headers: Headers, now: number): number | null {
  const retryAfter = retryAfterTime(headers, now);
  if (retryAfter !== null) return retryAfter;
  const budgets = ['requests', 'complexity', 'endpoint-requests'].map((budget) => ({
    remaining: numberHeader(headers, `x-ratelimit-${budget}-remaining`),
    reset: numberHeader(headers, `x-ratelimit-${budget}-reset`),
  }));
  const withReset = budgets.filter((budget) => budget.reset !== null);
  const spent = withReset.filter((budget) => budget.remaining !== null && budget.remaining <= 0);
  // Linear's reset headers are epoch milliseconds; a value in seconds is taken as seconds.
  const resets = (spent.length > 0 ? spent : withReset).map((budget) => epochMs(budget.reset ?? 0));
  return resets.length > 0 ? Math.max(...resets) : null;
}

function rateLimited(transport: LinearTransport, response: Response): LorenzError {
  const now = transport.now();
  const at = retryTime(response.headers, now);
  return rateLimitFailure('Linear', response.status, at, now, (message, detail) =>
    failure(transport, 'tracker_rate_limited', message, detail),
  );
}

/**
 * POST one GraphQL operation and return its `data`. A rate limit (HTTP 429, or Linear's own
 * answer, an error coded RATELIMITED, which comes with HTTP 400) is `tracker_rate_limited`;
 * another non-2xx status `tracker_status`; `errors` or a body that is not a GraphQL answer
 * `tracker_response`; no answer at all `tracker_request`.
 */
export async function linearRequest(
  transport: LinearTransport,
  query: string,
  variables: JsonMap,
  callerSignal?: AbortSignal,
): Promise<JsonMap> {
  const service = httpService('Linear', transport, (message, detail) =>
    failure(transport, 'tracker_request', message, detail),
  );
  const init: RequestInit = {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json',
      // Personal API keys go bare; only OAuth tokens take a `Bearer` prefix.
      authorization: transport.apiKey,
    },
    body: JSON.stringify({ query, variables }),
  };
  const { response, text } = await timedExchange(service, transport.endpoint, init, callerSignal);

  let body: unknown;
  let parsed = true;
  try {
    body = JSON.parse(text);
  } catch {
    parsed = false;
  }
  const errors = graphQLErrors(body);
  if (response.status === 429 || errors.some((error) => error.code === 'RATELIMITED')) {
    throw rateLimited(transport, response);
  }
  if (!response.ok) {
    const first = errors[0];
    throw failure(
      transport,
      'tracker_status',
      `Linear answered HTTP ${response.status}${first ? `: ${first.message}` : ''}`,
      { status: response.status, ...(first?.code ? { graphqlCode: first.code } : {}) },
    );
  }
  if (!parsed || !isJsonMap(body)) {
    throw failure(
      transport,
      'tracker_response',
      'Linear answered with a body that is not a JSON object',
    );
  }
  const first = errors[0];
  if (first) {
    throw failure(
      transport,
      'tracker_response',
      `Linear answered with an error: ${first.message}`,
      {
        ...(first.code ? { graphqlCode: first.code } : {}),
      },
    );
  }
  if (!isJsonMap(body.data)) {
    throw failure(transport, 'tracker_response', 'Linear answered without data');
  }
  return body.data;
}

/** An error raised outside this module (a page, a state name), scrubbed of the key too. */
export function trackerFailure(
  transport: LinearTransport,
  code: LorenzErrorCode,
  message: string,
  detail?: Record<string, unknown>,
): LorenzError {
  return failure(transport, code, message, detail);
}
