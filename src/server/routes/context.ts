import type http from 'node:http';
import type { Logger } from 'pino';
import { Counter, Gauge, Registry } from 'prom-client';
import type { KubeClient } from '../../controller/runtime/client.js';
import type { AccessControl, CallerAccess } from '../access.js';
import type { ArchiveReads, ArchiveSource } from '../archive-source.js';
import type { ViewCache } from '../cache.js';
import { ApiError } from '../errors.js';
import type { DetailDeps } from '../run-detail.js';
import { staticFiles } from '../static.js';

/**
 * What every route of the view server shares (the cache, the clients, the metrics), and the
 * checks several of them make. Each route is a plain function of this context and one call.
 */

export const HEARTBEAT_MS = 15_000;

export interface ViewServerOptions {
  access: AccessControl;
  cache: ViewCache;
  /** The server's own client: the cache's reads, Pods, Events and Pod logs. */
  client: KubeClient;
  archive?: ArchiveSource | undefined;
  webRoot: string;
  logger?: Logger;
  registry?: Registry;
  /** Local mode: only requests whose Host is loopback are served (DNS rebinding). */
  loopbackHostsOnly?: boolean;
  heartbeatMs?: number;
}

export interface ViewMetrics {
  requests: Counter<'route' | 'code'>;
  sseClients: Gauge<'stream'>;
  dropped: Counter;
}

export interface ViewContext {
  access: AccessControl;
  cache: ViewCache;
  client: KubeClient;
  archive: ArchiveSource | undefined;
  logger: Logger | undefined;
  registry: Registry;
  metrics: ViewMetrics;
  heartbeatMs: number;
  loopbackHostsOnly: boolean;
  serveStatic: ReturnType<typeof staticFiles>;
}

/** One API request, once its caller is known. */
export interface Call {
  who: CallerAccess;
  url: URL;
  request: http.IncomingMessage;
  response: http.ServerResponse;
}

/** A request about one object: /api/v1/namespaces/{namespace}/{kind}/{name}/... */
export interface ObjectCall extends Call {
  namespace: string;
  name: string;
}

function metricsOf(registry: Registry): ViewMetrics {
  const requests = new Counter({
    name: 'lorenz_server_requests_total',
    help: 'Requests answered by lorenz server, by route and HTTP status code.',
    labelNames: ['route', 'code'] as const,
    registers: [registry],
  });
  const sseClients = new Gauge({
    name: 'lorenz_server_sse_clients',
    help: 'Open Server-Sent Events streams, by stream (watch, transcript).',
    labelNames: ['stream'] as const,
    registers: [registry],
  });
  const dropped = new Counter({
    name: 'lorenz_server_sse_dropped_total',
    help: 'SSE clients dropped because they did not read fast enough.',
    registers: [registry],
  });
  sseClients.set({ stream: 'watch' }, 0);
  sseClients.set({ stream: 'transcript' }, 0);
  return { requests, sseClients, dropped };
}

export function createViewContext(options: ViewServerOptions): ViewContext {
  const registry = options.registry ?? new Registry();
  return {
    access: options.access,
    cache: options.cache,
    client: options.client,
    archive: options.archive,
    logger: options.logger,
    registry,
    metrics: metricsOf(registry),
    heartbeatMs: options.heartbeatMs ?? HEARTBEAT_MS,
    loopbackHostsOnly: options.loopbackHostsOnly ?? false,
    serveStatic: staticFiles(options.webRoot),
  };
}

export const readsOf = (ctx: ViewContext, who: CallerAccess): ArchiveReads | undefined =>
  ctx.archive?.forCaller(who.token);

export const depsOf = (ctx: ViewContext, who: CallerAccess): DetailDeps => ({
  cache: ctx.cache,
  client: ctx.client,
  archive: readsOf(ctx, who),
});

/** Of `namespaces`, those whose runs the caller may read (all, if cluster-wide). */
export async function readable(
  who: CallerAccess,
  namespaces: Iterable<string>,
): Promise<Set<string>> {
  const all = new Set(namespaces);
  if (await who.mayReadRuns('')) return all;
  const allowed = new Set<string>();
  await Promise.all(
    [...all].map(async (namespace) => {
      if (await who.mayReadRuns(namespace)) allowed.add(namespace);
    }),
  );
  return allowed;
}

export async function requireRun(who: CallerAccess, namespace: string): Promise<void> {
  if (!(await who.may({ verb: 'get', resource: 'issueruns', namespace })))
    throw new ApiError(
      'forbidden',
      `${who.caller.username} may not get issueruns.lorenz.dev in namespace ${namespace}`,
    );
}

export async function requireListRuns(
  who: CallerAccess,
  namespace: string | undefined,
): Promise<void> {
  if (namespace && !(await who.mayReadRuns(namespace)))
    throw new ApiError(
      'forbidden',
      `${who.caller.username} may not list issueruns.lorenz.dev in namespace ${namespace}`,
    );
}

export function requireSynced(ctx: ViewContext): void {
  if (!ctx.cache.hasSynced())
    throw new ApiError('kube_unavailable', 'the watch cache is not synced yet: try again');
}

/** Waits `ms`, or less if `signal` aborts first. */
export function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}
