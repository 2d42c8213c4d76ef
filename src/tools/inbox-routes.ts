import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import {
  INBOX_LIMITS,
  INBOX_PATHS,
  inboxRequestIdSchema,
  inboxRequestSchema,
  policyReportSchema,
  type InboxDecision,
} from '../api/inbox.js';
import { createRateLimiter } from './limiter.js';
import type { InboxLimits, InboxStore, ToolsLogger, VerifiedRun } from './types.js';

/**
 * The runner's inbox endpoints on the agent-tools gateway (src/api/inbox.ts, the flow at its
 * top). The gateway has verified the token before a request gets here; this module bounds
 * and validates the body, rate-limits per run, and answers from the InboxStore. Every
 * refusal is JSON with a stable `error` code (and the `field` at fault for a bad body).
 */

export const INBOX_PATH_PREFIX = '/inbox/v1/';
export const DEFAULT_INBOX_CALLS_PER_MINUTE = 120;
export const DEFAULT_INBOX_BURST = 60;
export const DEFAULT_INBOX_MAX_BODY_BYTES = 64 * 1024;

export type InboxErrorCode =
  | 'not_found'
  | 'method_not_allowed'
  | 'too_large'
  | 'bad_json'
  | 'invalid'
  | 'wrong_attempt'
  | 'rate_limited';

/** A refusal with its HTTP status; the message names what and where, never a secret. */
export class InboxHttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: InboxErrorCode,
    message: string,
    readonly field?: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'InboxHttpError';
  }
}

export interface InboxRoutesOptions {
  store: InboxStore;
  limits?: InboxLimits;
  logger: ToolsLogger;
  /** Milliseconds, for the rate limit; the long poll waits on real timers. */
  now?: () => number;
}

export interface InboxRoutes {
  /** Serves one request of a verified run on an inbox path. */
  serve(run: VerifiedRun, path: string, req: IncomingMessage, res: ServerResponse): Promise<void>;
  /** Ends every long poll at once: each answers {decision: null}, and the runner asks again. */
  endWaits(): void;
}

/** Whether the gateway routes a path to the inbox. */
export const isInboxPath = (path: string): boolean => path.startsWith(INBOX_PATH_PREFIX);

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.destroyed || res.writableEnded) return;
  if (res.headersSent) {
    res.end();
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/** The body as JSON, refused past `max` bytes (by its content-length, or as it streams in). */
export async function readJsonBody(req: IncomingMessage, max: number): Promise<unknown> {
  const tooLarge = () =>
    new InboxHttpError(413, 'too_large', `the body is larger than ${max} bytes`, 'body', {
      connection: 'close',
    });
  const declared = Number(req.headers['content-length'] ?? '0');
  if (Number.isFinite(declared) && declared > max) {
    req.resume();
    throw tooLarge();
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > max) {
      req.resume();
      throw tooLarge();
    }
    chunks.push(buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new InboxHttpError(400, 'bad_json', 'the body is not JSON', 'body');
  }
}

/** The value the schema makes of `input`, or a 400 that names the first field at fault. */
export function validated<T>(schema: z.ZodType<T>, input: unknown): T {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const field = issue && issue.path.length > 0 ? issue.path.map(String).join('.') : 'body';
  throw new InboxHttpError(400, 'invalid', `${field}: ${issue?.message ?? 'invalid'}`, field);
}

const steersBodySchema = z.object({ slot: z.int().min(0).max(1024) });
/** The id in a request's path, named `id` in a refusal like a body's field. */
const requestIdPathSchema = z.object({ id: inboxRequestIdSchema });

function waitMsOf(url: URL): number {
  const raw = url.searchParams.get('wait_ms');
  if (raw === null || raw === '') return 0;
  const waitMs = Number(raw);
  if (!/^\d+$/.test(raw) || waitMs > INBOX_LIMITS.maxWaitMs) {
    throw new InboxHttpError(
      400,
      'invalid',
      `wait_ms: an integer of milliseconds from 0 to ${INBOX_LIMITS.maxWaitMs}`,
      'wait_ms',
    );
  }
  return waitMs;
}

function requestIdOf(path: string): string {
  let raw: string;
  try {
    raw = decodeURIComponent(path.slice(INBOX_PATHS.requests.length + 1));
  } catch {
    throw new InboxHttpError(400, 'invalid', 'id: not a valid path segment', 'id');
  }
  return validated(requestIdPathSchema, { id: raw }).id;
}

function sameAttempt(run: VerifiedRun, attempt: number): void {
  if (attempt !== run.attempt) {
    throw new InboxHttpError(
      403,
      'wrong_attempt',
      `attempt: ${attempt} is not the token's attempt ${run.attempt}`,
      'attempt',
    );
  }
}

function allowMethod(req: IncomingMessage, method: 'GET' | 'POST'): void {
  if (req.method !== method) {
    throw new InboxHttpError(405, 'method_not_allowed', `use ${method}`, undefined, {
      allow: method,
    });
  }
}

// eslint-disable-next-line max-lines-per-function -- a factory: the closures it returns share the state it keeps
export function createInboxRoutes(options: InboxRoutesOptions): InboxRoutes {
  const { store, logger } = options;
  const limits = options.limits ?? {};
  const maxBody = limits.maxBodyBytes ?? DEFAULT_INBOX_MAX_BODY_BYTES;
  // A bucket of its own: a runner's long polls and steer polls never eat the agent's tool calls.
  const limiter = createRateLimiter({
    perMinute: limits.callsPerMinute ?? DEFAULT_INBOX_CALLS_PER_MINUTE,
    burst: limits.burst ?? DEFAULT_INBOX_BURST,
    ...(options.now ? { now: options.now } : {}),
  });
  const waits = new Set<AbortController>();

  /** The decision as soon as there is one, else null after waitMs (or the client going). */
  async function decisionWithin(
    run: VerifiedRun,
    requestId: string,
    waitMs: number,
    res: ServerResponse,
  ): Promise<InboxDecision | null> {
    const first = store.decisionOf(run, requestId);
    if (first !== null || waitMs === 0) return first;
    const stop = new AbortController();
    const end = () => stop.abort();
    const timer = setTimeout(end, waitMs);
    res.once('close', end);
    if (res.destroyed) end();
    waits.add(stop);
    try {
      while (!stop.signal.aborted) {
        await store.nextChange(run, stop.signal);
        const decision = store.decisionOf(run, requestId);
        if (decision !== null) return decision;
      }
      return null;
    } finally {
      clearTimeout(timer);
      res.off('close', end);
      waits.delete(stop);
    }
  }

  async function route(run: VerifiedRun, path: string, req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? '/', 'http://gateway');
    if (path === INBOX_PATHS.requests) {
      allowMethod(req, 'POST');
      const request = validated(inboxRequestSchema, await readJsonBody(req, maxBody));
      sameAttempt(run, request.attempt);
      await store.storeRequest(run, request);
      return sendJson(res, 202, { id: request.id });
    }
    if (path.startsWith(`${INBOX_PATHS.requests}/`)) {
      allowMethod(req, 'GET');
      const requestId = requestIdOf(path);
      const decision = await decisionWithin(run, requestId, waitMsOf(url), res);
      return sendJson(res, 200, { decision });
    }
    if (path === INBOX_PATHS.reports) {
      allowMethod(req, 'POST');
      const report = validated(policyReportSchema, await readJsonBody(req, maxBody));
      sameAttempt(run, report.request.attempt);
      store.policyDecided(run, report);
      return sendJson(res, 202, {});
    }
    if (path === INBOX_PATHS.steers) {
      allowMethod(req, 'POST');
      const { slot } = validated(steersBodySchema, await readJsonBody(req, maxBody));
      return sendJson(res, 200, { steers: await store.takeSteers(run, slot) });
    }
    throw new InboxHttpError(404, 'not_found', `no inbox endpoint at ${path.slice(0, 128)}`);
  }

  return {
    async serve(run, path, req, res) {
      try {
        const verdict = limiter.take(`${run.namespace}/${run.run}`);
        if (!verdict.ok) {
          throw new InboxHttpError(429, 'rate_limited', 'too many inbox calls', undefined, {
            'retry-after': String(verdict.retryAfterSeconds),
          });
        }
        await route(run, path, req, res);
      } catch (error) {
        if (!(error instanceof InboxHttpError)) throw error;
        logger.debug({ run: run.run, code: error.code, status: error.status }, 'inbox refusal');
        const body = { error: error.code, message: error.message };
        sendJson(
          res,
          error.status,
          error.field === undefined ? body : { ...body, field: error.field },
          error.headers,
        );
      }
    },
    endWaits() {
      for (const wait of waits) wait.abort();
    },
  };
}
