import type { IncomingMessage, ServerResponse } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  isJSONRPCErrorResponse,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
} from '@modelcontextprotocol/sdk/types.js';
import type { TrackerWriter } from '../tracker/types.js';
import { errorMessage } from '../workflow/errors.js';
import { createTokenVerifier } from './auth.js';
import { createInboxRoutes, isInboxPath } from './inbox-routes.js';
import { createRateLimiter, type RateVerdict } from './limiter.js';
import { registerTrackerTools } from './tools.js';
import { registerBudgetTool, type BudgetStatusSource } from './budget-tool.js';
import type {
  InboxLimits,
  InboxStore,
  RunResolver,
  ToolsLimits,
  ToolsLogger,
  ToolsRecorder,
  TrackerForRun,
  VerifiedRun,
} from './types.js';

export const MCP_PATH = '/mcp';

export interface ToolsGatewayOptions {
  resolveRun: RunResolver;
  trackerFor: TrackerForRun;
  recorder: ToolsRecorder;
  limits?: ToolsLimits;
  logger?: ToolsLogger;
  /** The runner's inbox endpoints (INBOX_PATHS); without it they answer 404. */
  inbox?: { store: InboxStore; limits?: InboxLimits };
  /** Milliseconds; injectable so tests can move the rate limit and the token cache on. */
  now?: () => number;
  /** What budget_status answers (docs/budgets.md); without it the tool is not offered. */
  budget?: BudgetStatusSource;
}

export interface ToolsGateway {
  /**
   * A Node http request handler: `/mcp` (POST; GET and DELETE answer 405), the inbox paths
   * when options.inbox is given, else 404.
   */
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
  /** Forgets a run's cached tokens at once (it finished); resolveRun is asked next time. */
  revoke(namespace: string, run: string): void;
  /** Ends the inbox's long polls at once (they answer no decision yet); the rest goes on. */
  endWaits(): void;
  /** Ends the requests in flight (long polls too); later requests are answered 503. */
  close(): Promise<void>;
}

const SILENT: ToolsLogger = { warn: () => undefined, debug: () => undefined };

/** A tools/call seen arriving, until its answer goes out. */
interface PendingCall {
  tool: string;
  target: string;
  verdict: RateVerdict;
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers = {}): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/** A JSON-RPC error object with no id: the shape MCP clients expect on an HTTP refusal. */
const rpcError = (code: number, message: string) => ({
  jsonrpc: '2.0',
  error: { code, message },
  id: null,
});

const clip = (text: string): string => text.slice(0, 128);

/**
 * The MCP gateway: agents in run Pods call the tracker tools here with their attempt's
 * token, and never see the tracker key.
 *
 * Stateless Streamable HTTP: every POST gets its own McpServer and transport, built for the
 * run its token names. Sessions would add nothing: each request is authorized on its own
 * token anyway, the tools differ per run, and no session state has to survive a controller
 * restart or be shared between replicas.
 */
// eslint-disable-next-line max-lines-per-function -- a factory: the closures it returns share the state it keeps
export function createToolsGateway(options: ToolsGatewayOptions): ToolsGateway {
  const logger = options.logger ?? SILENT;
  const limits = options.limits ?? {};
  const verifier = createTokenVerifier({
    resolveRun: options.resolveRun,
    ...(limits.tokenCacheSize !== undefined ? { cacheSize: limits.tokenCacheSize } : {}),
    ...(limits.tokenCacheTtlMs !== undefined ? { cacheTtlMs: limits.tokenCacheTtlMs } : {}),
    ...(options.now ? { now: options.now } : {}),
  });
  const limiter = createRateLimiter({
    ...(limits.callsPerMinute !== undefined ? { perMinute: limits.callsPerMinute } : {}),
    ...(limits.burst !== undefined ? { burst: limits.burst } : {}),
    ...(options.now ? { now: options.now } : {}),
  });
  const inbox = options.inbox
    ? createInboxRoutes({
        store: options.inbox.store,
        logger,
        ...(options.inbox.limits ? { limits: options.inbox.limits } : {}),
        ...(options.now ? { now: options.now } : {}),
      })
    : null;
  const open = new Set<McpServer>();
  let closed = false;

  const record = (run: VerifiedRun, call: PendingCall, ok: boolean): void => {
    try {
      options.recorder.toolCalled({
        namespace: run.namespace,
        run: run.run,
        uid: run.resolved.uid,
        attempt: run.attempt,
        tool: call.tool,
        target: call.target,
        ok,
      });
    } catch (error) {
      logger.warn({ err: errorMessage(error), tool: call.tool }, 'recording a tool call failed');
    }
  };

  const serve = async (run: VerifiedRun, req: IncomingMessage, res: ServerResponse) => {
    const own = run.resolved.issueIdentifier ?? run.resolved.issueId;
    const calls = new Map<string | number, PendingCall>();
    let writer: Promise<TrackerWriter | null> | undefined;

    const server = new McpServer({ name: `lorenz_${run.resolved.trackerKind}`, version: '1' });
    // A call the gateway did not see arrive (impossible through the transport) is refused.
    const admission = (id: string | number): RateVerdict =>
      calls.get(id)?.verdict ?? { ok: false, retryAfterSeconds: 1 };
    if (options.budget) registerBudgetTool(server, run, options.budget, admission);
    registerTrackerTools(server, {
      run,
      writer: () => (writer ??= Promise.resolve(options.trackerFor(run)).then((w) => w ?? null)),
      admission,
      aimedAt: (id, target) => {
        const call = calls.get(id);
        if (call) call.target = clip(target);
      },
    });
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await server.connect(transport);

    // Every tools/call is seen on its way in and its answer on the way out, so calls the SDK
    // answers itself (bad arguments, an unknown tool) are rate-limited and recorded too.
    const deliver = transport.onmessage;
    transport.onmessage = (message, extra) => {
      if (isJSONRPCRequest(message) && message.method === 'tools/call') {
        const params = (message.params ?? {}) as { name?: unknown; arguments?: unknown };
        const args = (params.arguments ?? {}) as { issue_id?: unknown };
        calls.set(message.id, {
          tool: clip(typeof params.name === 'string' ? params.name : ''),
          target: clip(typeof args.issue_id === 'string' ? args.issue_id.trim() : own),
          verdict: limiter.take(`${run.namespace}/${run.run}`),
        });
      }
      deliver?.(message, extra);
    };
    const send = transport.send.bind(transport);
    transport.send = async (message, sendOptions) => {
      const result = isJSONRPCResultResponse(message) ? message : null;
      const id = result?.id ?? (isJSONRPCErrorResponse(message) ? message.id : undefined);
      const call = id === undefined ? undefined : calls.get(id);
      if (id !== undefined && call) {
        calls.delete(id);
        record(run, call, result !== null && result.result.isError !== true);
      }
      return send(message, sendOptions);
    };

    open.add(server);
    res.on('close', () => {
      open.delete(server);
      void server.close().catch(() => undefined);
    });
    await transport.handleRequest(req, res);
  };

  return {
    revoke: (namespace, run) => verifier.forget(namespace, run),

    async handle(req, res) {
      try {
        const path = new URL(req.url ?? '/', 'http://gateway').pathname;
        const toInbox = inbox !== null && isInboxPath(path);
        if (path !== MCP_PATH && !toInbox) {
          return sendJson(res, 404, rpcError(-32601, 'Not found'));
        }
        if (closed) return sendJson(res, 503, rpcError(-32603, 'The gateway is shutting down'));
        // Authenticate before anything else, so a stranger learns nothing, not even methods.
        const verdict = await verifier.verify(req.headers.authorization);
        if (!verdict.ok) {
          logger.debug({ refusal: verdict.refusal }, 'tools request refused');
          return sendJson(res, 401, rpcError(-32001, 'Unauthorized'), {
            'www-authenticate': 'Bearer realm="lorenz-tools"',
          });
        }
        if (toInbox) return await inbox.serve(verdict.run, path, req, res);
        // Stateless: no stream for server-initiated messages and no session to end.
        if (req.method !== 'POST') {
          return sendJson(res, 405, rpcError(-32000, 'Method not allowed'), { allow: 'POST' });
        }
        await serve(verdict.run, req, res);
      } catch (error) {
        // resolveRun failing (the apiserver away) lands here: nothing was written.
        logger.warn({ err: errorMessage(error) }, 'tools request failed');
        sendJson(res, 503, rpcError(-32603, 'The gateway cannot serve this request now'));
      }
    },

    endWaits: () => inbox?.endWaits(),

    async close() {
      closed = true;
      inbox?.endWaits();
      const servers = [...open];
      open.clear();
      await Promise.allSettled(servers.map((server) => server.close()));
    },
  };
}
