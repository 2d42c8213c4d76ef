import { z } from 'zod';
import {
  INBOX_LIMITS,
  INBOX_PATHS,
  inboxDecisionSchema,
  inboxRequestIdSchema,
  steerDeliverySchema,
  type InboxDecision,
  type InboxRequest,
  type PolicyReport,
  type SteerDelivery,
} from '../api/inbox.js';
import { errorMessage } from '../workflow/errors.js';

/**
 * The runner's side of the gateway's inbox endpoints (src/api/inbox.ts, INBOX_PATHS), with
 * the attempt's tools token. A request is POSTed until the gateway takes it (a controller
 * restart or a gateway rollout must lose nothing: it is idempotent by id), then long-polled.
 * Every answer's body is checked against the contract's schemas; one that does not fit counts
 * as no answer yet.
 */

export interface InboxClientOptions {
  /** The tools URL (`…/mcp`): the inbox paths are taken from its origin. */
  url: string;
  token: string;
  /** A line for the runner's stderr. */
  log: (line: string) => void;
  /** Backoff between tries after a network error or a 5xx: 1 s doubling to 10 s. */
  backoff?: { initialMs: number; maxMs: number };
  /** How long one long poll asks the gateway to hold it (25 000). */
  pollWaitMs?: number;
}

export type PostOutcome = 'taken' | 'refused' | 'deadline';

export interface InboxClient {
  /** POST until taken; `refused` for a 4xx that no retry mends; `deadline` when time ran out. */
  postRequest(request: InboxRequest, deadline: number, signal: AbortSignal): Promise<PostOutcome>;
  /** Long-poll until a decision or the deadline (null); re-POSTs a request the gateway lost. */
  waitDecision(
    request: InboxRequest,
    deadline: number,
    signal: AbortSignal,
  ): Promise<InboxDecision | null>;
  /** Fire and forget; the first failure is logged, none thrown. */
  postReport(report: PolicyReport): void;
  /** The slot's new steers; any failure: none (logged). */
  takeSteers(slot: number): Promise<SteerDelivery[]>;
}

const takenSchema = z.object({ id: inboxRequestIdSchema });
const decisionBodySchema = z.object({ decision: inboxDecisionSchema.nullable() });
const steersBodySchema = z.object({ steers: z.array(steerDeliverySchema) });

const DEFAULT_BACKOFF = { initialMs: 1000, maxMs: 10_000 };
const DEFAULT_POLL_WAIT_MS = 25_000;
/** Beyond the wait the gateway is asked to hold a poll: the network's share. */
const POLL_SLACK_MS = 5000;
/** A report or a steer call that takes longer is given up. */
const SHORT_CALL_MS = 10_000;

type Reply = { status: number; body: unknown } | { status: 'network'; error: string };

/** Resolves after `ms`, or at once when the signal aborts (then rejects). */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((done, fail) => {
    const aborted = (): Error =>
      signal.reason instanceof Error ? signal.reason : new Error('the wait was cancelled');
    if (signal.aborted) return fail(aborted());
    const onAbort = (): void => {
      clearTimeout(timer);
      fail(aborted());
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      done();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

const retryable = (status: number | 'network'): boolean =>
  status === 'network' || status >= 500 || status === 408 || status === 429;

// eslint-disable-next-line max-lines-per-function -- one client: its calls share the url, the token and the backoff
export function createInboxClient(options: InboxClientOptions): InboxClient {
  const backoff = options.backoff ?? DEFAULT_BACKOFF;
  const pollWaitMs = Math.min(options.pollWaitMs ?? DEFAULT_POLL_WAIT_MS, INBOX_LIMITS.maxWaitMs);
  const endpoint = (path: string): string => new URL(path, options.url).toString();
  let reportFailed = false;

  async function call(
    method: 'GET' | 'POST',
    path: string,
    body: unknown,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<Reply> {
    const timeout = AbortSignal.timeout(timeoutMs);
    try {
      const response = await fetch(endpoint(path), {
        method,
        headers: {
          Authorization: `Bearer ${options.token}`,
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
      const text = await response.text();
      let parsed: unknown = undefined;
      try {
        parsed = text === '' ? undefined : JSON.parse(text);
      } catch {
        // not JSON: the schema check below refuses it
      }
      return { status: response.status, body: parsed };
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      return { status: 'network', error: errorMessage(error) };
    }
  }

  /** Wait before the next try: the backoff, cut at the deadline. */
  const pause = (tries: number, deadline: number, signal: AbortSignal): Promise<void> =>
    sleep(
      Math.max(0, Math.min(backoff.initialMs * 2 ** tries, backoff.maxMs, deadline - Date.now())),
      signal,
    );

  async function postRequest(
    request: InboxRequest,
    deadline: number,
    signal: AbortSignal,
  ): Promise<PostOutcome> {
    for (let tries = 0; ; tries += 1) {
      if (Date.now() >= deadline) return 'deadline';
      const reply = await call('POST', INBOX_PATHS.requests, request, SHORT_CALL_MS, signal);
      if (typeof reply.status === 'number' && reply.status < 300) {
        if (takenSchema.safeParse(reply.body).success) return 'taken';
      } else if (!retryable(reply.status)) {
        options.log(
          `lorenz: the agent-tools gateway refused request ${request.id} (HTTP ${reply.status})`,
        );
        return 'refused';
      }
      if (tries === 0) {
        const why = reply.status === 'network' ? reply.error : `HTTP ${reply.status}`;
        options.log(
          `lorenz: could not post request ${request.id} to the inbox (${why}); trying again`,
        );
      }
      await pause(tries, deadline, signal);
    }
  }

  async function waitDecision(
    request: InboxRequest,
    deadline: number,
    signal: AbortSignal,
  ): Promise<InboxDecision | null> {
    let failures = 0;
    for (;;) {
      const left = deadline - Date.now();
      if (left <= 0) return null;
      const waitMs = Math.min(pollWaitMs, left);
      const path = `${INBOX_PATHS.request(request.id)}?wait_ms=${Math.round(waitMs)}`;
      const started = Date.now();
      const reply = await call('GET', path, undefined, waitMs + POLL_SLACK_MS, signal);
      if (reply.status === 200) {
        const parsed = decisionBodySchema.safeParse(reply.body);
        const decision = parsed.success ? parsed.data.decision : null;
        if (decision && decision.requestId === request.id) return decision;
        // A 200 without a decision: the wait ended (a gateway that did not hold it still
        // gets no tight loop). A bad body or another request's decision: back off, ask again.
        if (parsed.success && decision === null) {
          failures = 0;
          if (Date.now() - started < backoff.initialMs) await pause(0, deadline, signal);
          continue;
        }
      } else if (reply.status === 404) {
        // The gateway does not know it (lost with a restart before the annotation): post again.
        if ((await postRequest(request, deadline, signal)) !== 'taken') return null;
        continue;
      }
      await pause(failures, deadline, signal);
      failures += 1;
    }
  }

  return {
    postRequest,
    waitDecision,
    postReport(report) {
      void call('POST', INBOX_PATHS.reports, report, SHORT_CALL_MS).then((reply) => {
        if (typeof reply.status === 'number' && reply.status < 300) return;
        if (reportFailed) return;
        reportFailed = true;
        const why = reply.status === 'network' ? reply.error : `HTTP ${reply.status}`;
        options.log(
          `lorenz: could not report a policy decision to the inbox (${why}); further failures are not logged`,
        );
      });
    },
    async takeSteers(slot) {
      const reply = await call('POST', INBOX_PATHS.steers, { slot }, SHORT_CALL_MS);
      const parsed = reply.status === 200 ? steersBodySchema.safeParse(reply.body) : undefined;
      if (parsed?.success) return parsed.data.steers;
      const why =
        reply.status === 'network'
          ? reply.error
          : parsed
            ? "a body that is not the contract's"
            : `HTTP ${reply.status}`;
      options.log(`lorenz: could not take steers from the inbox (${why})`);
      return [];
    },
  };
}
