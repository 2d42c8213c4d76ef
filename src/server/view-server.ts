import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { ApiError } from './errors.js';
import { paramsOf, runNameOf } from './query.js';
import { failureOf, sendError } from './reply.js';
import { act, isAction } from './routes/actions.js';
import {
  createViewContext,
  type Call,
  type ViewContext,
  type ViewServerOptions,
} from './routes/context.js';
import { probe, staticFile } from './routes/health.js';
import { usage, whoami, workflows } from './routes/overview.js';
import { getRun, listRuns } from './routes/runs.js';
import { hooks, transcript } from './routes/transcript.js';
import { watch } from './routes/watch.js';
import { listening } from '../tools/listen.js';

/**
 * `lorenz server`: the web view's files and its API (view-api.ts) over one watch cache of the
 * cluster and the run archive. Every answer carries a strict Content-Security-Policy; the API
 * answers JSON, text/plain or text/event-stream, never HTML; POSTs need X-Lorenz-Request: 1.
 * This module routes; each route group is a module of routes/ taking the shared context.
 */

export { CSP } from './reply.js';
export { HEARTBEAT_MS, type ViewServerOptions } from './routes/context.js';

export interface ViewServer {
  address: { host: string; port: number };
  handler: http.RequestListener;
  registry: Registry;
  close(): Promise<void>;
}

const LOOPBACK_HOST = /^(localhost|127(\.\d{1,3}){3}|\[::1\])(:\d{1,5})?$/i;
const NAMESPACE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** The route of a path, for metrics: a few fixed names, never the path itself. */
const ROUTES = new Set([
  'whoami',
  'workflows',
  'runs',
  'usage',
  'watch',
  'runs/get',
  'runs/transcript',
  'runs/hooks/output',
  'runs/cancel',
  'runs/retry',
  'runs/decide',
  'workflows/suspend',
  'workflows/resume',
]);

function routeOf(parts: string[]): string {
  const [first = ''] = parts;
  if (parts.length === 1 && ['healthz', 'readyz', 'metrics'].includes(first)) return first;
  if (first !== 'api') return first === 'assets' ? 'assets' : 'page';
  const route =
    parts[2] === 'namespaces'
      ? [parts[4] ?? '', ...parts.slice(6).filter((part) => !/^\d+$/.test(part))].join('/') +
        (parts.length === 6 ? '/get' : '')
      : parts.slice(2).join('/');
  // Unknown paths are one series, whatever they are.
  return ROUTES.has(route) ? route : 'other';
}

/** The GETs of /api/v1/{name}. */
const COLLECTIONS = new Map<string, (ctx: ViewContext, call: Call) => Promise<void>>([
  ['whoami', whoami],
  ['workflows', workflows],
  ['runs', listRuns],
  ['usage', usage],
  ['watch', watch],
]);

/** /api/v1/namespaces/{namespace}/{kind}/{name}/{rest...}; false if no route matches. */
async function objectRoute(
  ctx: ViewContext,
  call: Call,
  post: boolean,
  path: string[],
): Promise<boolean> {
  const namespace = path[1] ?? '';
  if (!NAMESPACE.test(namespace))
    throw new ApiError('invalid_parameter', 'path: not a namespace name', 'namespace');
  const objectCall = { ...call, namespace, name: runNameOf(path[3] ?? '') };
  const kind = path[2];
  const rest = path.slice(4);
  if (post && rest.length === 1) {
    paramsOf(call.url, []);
    const action = rest[0];
    if (isAction(kind, action)) return act(objectCall, action).then(() => true);
  }
  if (post || kind !== 'runs') return false;
  if (rest.length === 0) await getRun(ctx, objectCall);
  else if (rest.length === 1 && rest[0] === 'transcript') await transcript(ctx, objectCall);
  else if (rest.length === 3 && rest[0] === 'hooks' && rest[2] === 'output')
    await hooks(ctx, objectCall, rest[1] ?? '');
  else return false;
  return true;
}

/** One request as the router sees it: its URL parsed, its path split into parts. */
interface Routed {
  request: http.IncomingMessage;
  response: http.ServerResponse;
  url: URL;
  parts: string[];
}

async function api(ctx: ViewContext, routed: Routed): Promise<void> {
  const { request, response, url, parts } = routed;
  const post = request.method === 'POST';
  if (!post && request.method !== 'GET' && request.method !== 'HEAD')
    throw new ApiError('method_not_allowed', `${request.method} is not served`);
  if (post && request.headers['x-lorenz-request'] !== '1')
    throw new ApiError('forbidden', 'a POST needs the header X-Lorenz-Request: 1');
  const who = await ctx.access.forRequest(request);
  const call: Call = { who, url, request, response };
  const path = parts.slice(2);
  const collection = path.length === 1 && !post ? COLLECTIONS.get(path[0] ?? '') : undefined;
  if (collection) return collection(ctx, call);
  if (path[0] === 'namespaces' && path.length >= 4 && (await objectRoute(ctx, call, post, path)))
    return;
  throw new ApiError(
    'not_found',
    `no such endpoint: ${request.method} ${url.pathname.slice(0, 200)}`,
  );
}

async function serve(ctx: ViewContext, routed: Routed): Promise<void> {
  const { request, response, url, parts } = routed;
  if (ctx.loopbackHostsOnly && !LOOPBACK_HOST.test(request.headers.host ?? ''))
    throw new ApiError(
      'forbidden',
      'lorenz server (local mode) answers only requests to localhost or 127.0.0.1',
    );
  if (await probe(ctx, url.pathname, response)) return;
  if (parts[0] !== 'api') return staticFile(ctx, url, request, response);
  if (parts[1] !== 'v1')
    throw new ApiError('not_found', `no such API version: ${String(parts[1]).slice(0, 50)}`);
  return api(ctx, routed);
}

export function viewHandler(options: ViewServerOptions) {
  const ctx = createViewContext(options);
  const handler: http.RequestListener = (request, response) => {
    const url = new URL(request.url ?? '/', 'http://view.invalid');
    const parts = url.pathname.split('/').filter(Boolean);
    const route = routeOf(parts);
    response.once('finish', () =>
      ctx.metrics.requests.inc({ route, code: String(response.statusCode) }),
    );
    serve(ctx, { request, response, url, parts }).catch((error: unknown) => {
      const failure = failureOf(error);
      if (['internal', 'archive_unavailable', 'kube_unavailable'].includes(failure.code))
        ctx.logger?.error({ err: error, path: url.pathname.slice(0, 200) }, 'view request failed');
      sendError(response, failure);
    });
  };
  return { handler, registry: ctx.registry };
}

export async function startViewServer(
  options: ViewServerOptions & { bind: { host: string; port: number } },
): Promise<ViewServer> {
  const { handler, registry } = viewHandler(options);
  const server = http.createServer(handler);
  server.keepAliveTimeout = 5_000;
  server.headersTimeout = 10_000;
  await listening(server, options.bind.port, options.bind.host);
  const info = server.address() as AddressInfo;
  return {
    address: { host: info.address, port: info.port },
    handler,
    registry,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
