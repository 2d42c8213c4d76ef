import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { Counter, Gauge, Registry } from 'prom-client';
import { ArchiveError } from '../archive/types.js';
import type { KubeClient } from '../controller/runtime/client.js';
import type { AccessControl, CallerAccess } from './access.js';
import { runAction, type Action } from './actions.js';
import type { ArchiveReads, ArchiveSource } from './archive-source.js';
import type { ViewCache } from './cache.js';
import { ApiError } from './errors.js';
import {
  RUNS_PARAMS,
  USAGE_PARAMS,
  namespaceParam,
  paramsOf,
  runNameOf,
  runQueryOf,
  uidOf,
  usageQueryOf,
} from './query.js';
import { attemptOfPodLabels, podsOfRun } from './run-logs.js';
import { findRun, hookOutput, readAttempt, runDetail, type DetailDeps } from './run-detail.js';
import { runsPage } from './runs-page.js';
import { openSse, type SseStream } from './sse.js';
import { staticFiles } from './static.js';
import { createTranscriptBuilder } from './transcript.js';
import type {
  ApiErrorBody,
  ApiErrorCode,
  ChangeEvent,
  RunSummary,
  UsageReport,
  WhoAmI,
  WorkflowList,
} from './view-api.js';

/**
 * `lorenz server`: the web view's files and its API (view-api.ts) over one watch cache of the
 * cluster and the run archive. Every answer carries a strict Content-Security-Policy; the API
 * answers JSON, text/plain or text/event-stream, never HTML; POSTs need X-Lorenz-Request: 1.
 */

export const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const HEADERS: Record<string, string> = {
  'Content-Security-Policy': CSP,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

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

export interface ViewServer {
  address: { host: string; port: number };
  handler: http.RequestListener;
  registry: Registry;
  close(): Promise<void>;
}

const VIEW_CODES: Record<ApiError['code'], ApiErrorCode> = {
  unauthenticated: 'unauthenticated',
  forbidden: 'forbidden',
  invalid_parameter: 'bad_request',
  not_found: 'not_found',
  method_not_allowed: 'bad_request',
  auth_unavailable: 'kube_unavailable',
  archive_unavailable: 'archive_unavailable',
  conflict: 'conflict',
  kube_unavailable: 'kube_unavailable',
  internal: 'internal',
};

function failureOf(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof ArchiveError)
    return error.code === 'archive_query_invalid'
      ? new ApiError('invalid_parameter', error.message)
      : new ApiError('archive_unavailable', `the archive cannot answer: ${error.code}`);
  return new ApiError('internal', 'internal error (see the server log)');
}

const LOOPBACK_HOST = /^(localhost|127(\.\d{1,3}){3}|\[::1\])(:\d{1,5})?$/i;

/** The route of a path, for metrics: a few fixed names, never the path itself. */
function routeOf(parts: string[]): string {
  if (parts[0] !== 'api') return parts[0] === 'assets' ? 'assets' : 'page';
  if (parts[2] === 'namespaces')
    return `${parts[4] ?? ''}/${
      parts
        .slice(6)
        .filter((p) => !/^\d+$/.test(p))
        .join('/') || 'get'
    }`.replace(/\/$/, '');
  return parts[2] ?? 'api';
}

export function viewHandler(options: ViewServerOptions) {
  const { access, cache, client, logger } = options;
  const registry = options.registry ?? new Registry();
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
  const serveStatic = staticFiles(options.webRoot);
  const heartbeatMs = options.heartbeatMs ?? HEARTBEAT_MS;

  function send(
    response: http.ServerResponse,
    status: number,
    body: string,
    type: string,
    extra: Record<string, string> = {},
  ): void {
    response.writeHead(status, {
      ...HEADERS,
      'Cache-Control': 'no-store',
      ...extra,
      'Content-Type': type,
      'Content-Length': String(Buffer.byteLength(body)),
    });
    response.end(body);
  }
  const sendJson = (response: http.ServerResponse, status: number, body: unknown) =>
    send(response, status, `${JSON.stringify(body)}\n`, 'application/json; charset=utf-8');

  function sendError(response: http.ServerResponse, error: ApiError): void {
    if (response.headersSent) {
      response.destroy();
      return;
    }
    const body: ApiErrorBody & { parameter?: string } = {
      code: VIEW_CODES[error.code],
      message: error.message,
      ...(error.parameter ? { parameter: error.parameter } : {}),
    };
    sendJson(response, error.status, body);
  }

  const reads = (who: CallerAccess): ArchiveReads | undefined =>
    options.archive?.forCaller(who.token);
  const deps = (who: CallerAccess): DetailDeps => ({ cache, client, archive: reads(who) });

  /** Of `namespaces`, those whose runs the caller may read (all, if cluster-wide). */
  async function readable(who: CallerAccess, namespaces: Iterable<string>): Promise<Set<string>> {
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

  async function requireRun(who: CallerAccess, namespace: string): Promise<void> {
    if (!(await who.may({ verb: 'get', resource: 'issueruns', namespace })))
      throw new ApiError(
        'forbidden',
        `${who.caller.username} may not get issueruns.lorenz.dev in namespace ${namespace}`,
      );
  }

  function requireSynced(): void {
    if (!cache.hasSynced())
      throw new ApiError('kube_unavailable', 'the watch cache is not synced yet: try again');
  }

  async function whoami(who: CallerAccess, response: http.ServerResponse) {
    const body: WhoAmI = {
      mode: access.mode,
      username: who.caller.username,
      groups: who.caller.groups,
      archive: options.archive !== undefined,
    };
    sendJson(response, 200, body);
  }

  async function workflows(who: CallerAccess, url: URL, response: http.ServerResponse) {
    requireSynced();
    const namespace = namespaceParam(paramsOf(url, ['namespace']));
    const all = cache.workflows().filter((each) => !namespace || each.namespace === namespace);
    const cluster = await who.mayReadWorkflows('');
    const allowed = new Set<string>();
    if (!cluster)
      await Promise.all(
        [...new Set(all.map((each) => each.namespace))].map(async (each) => {
          if (await who.mayReadWorkflows(each)) allowed.add(each);
        }),
      );
    const shown = all
      .filter((each) => cluster || allowed.has(each.namespace))
      .sort((a, b) => a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name));
    const since = new Date(Date.now() - 24 * 3600_000).toISOString();
    const failures = await runsPage(
      {
        ...(namespace ? { namespace } : {}),
        query: { phase: 'Failed', since, limit: 20 },
      },
      { cache, archive: reads(who), readable: (ns) => readable(who, ns) },
    ).catch(() => ({ runs: [] as RunSummary[] }));
    const body: WorkflowList = { workflows: shown, recentFailures: failures.runs };
    sendJson(response, 200, body);
  }

  async function listRuns(who: CallerAccess, url: URL, response: http.ServerResponse) {
    requireSynced();
    const params = paramsOf(url, [...RUNS_PARAMS.filter((key) => key !== 'deleted'), 'source']);
    const source = params.get('source');
    params.delete('source');
    if (source !== undefined && source !== 'live' && source !== 'archive')
      throw new ApiError(
        'invalid_parameter',
        `query parameter source: want live or archive, got ${JSON.stringify(source)}`,
        'source',
      );
    const { namespace, query } = runQueryOf(params);
    if (namespace && !(await who.mayReadRuns(namespace)))
      throw new ApiError(
        'forbidden',
        `${who.caller.username} may not list issueruns.lorenz.dev in namespace ${namespace}`,
      );
    const page = await runsPage(
      { ...(namespace ? { namespace } : {}), query, ...(source ? { source } : {}) },
      { cache, archive: reads(who), readable: (ns) => readable(who, ns) },
    );
    sendJson(response, 200, page);
  }

  async function usage(who: CallerAccess, url: URL, response: http.ServerResponse) {
    const { namespace, query } = usageQueryOf(paramsOf(url, USAGE_PARAMS));
    const archive = reads(who);
    if (!archive) return sendJson(response, 200, { rows: [] } satisfies UsageReport);
    if (namespace && !(await who.mayReadRuns(namespace)))
      throw new ApiError(
        'forbidden',
        `${who.caller.username} may not list issueruns.lorenz.dev in namespace ${namespace}`,
      );
    const rows = await archive.usageByDay({
      ...query,
      ...(namespace ? { namespaces: [namespace] } : {}),
    });
    const allowed = archive.filtered
      ? undefined
      : await readable(
          who,
          rows.map((row) => row.namespace),
        );
    const body: UsageReport = {
      rows: rows.filter((row) => !allowed || allowed.has(row.namespace)),
    };
    sendJson(response, 200, body);
  }

  async function watch(
    who: CallerAccess,
    url: URL,
    request: http.IncomingMessage,
    response: http.ServerResponse,
  ) {
    requireSynced();
    const namespace = namespaceParam(paramsOf(url, ['namespace']));
    const sse = openSse(request, response, HEADERS);
    sseClients.inc({ stream: 'watch' });
    // Reviews are answered from the authorizer's cache: changes go out in order, one chain
    // per client, and a client whose chain grows too long is dropped as slow.
    let chain: Promise<void> = Promise.resolve();
    let waiting = 0;
    const mayRead = async (change: Exclude<ChangeEvent, { event: 'heartbeat' }>) => {
      const ns = change.data.namespace;
      if (namespace && ns !== namespace) return false;
      return change.event === 'workflow' || change.event === 'workflow_deleted'
        ? who.mayReadWorkflows(ns)
        : who.mayReadRuns(ns);
    };
    const stop = cache.subscribe((change) => {
      if (waiting > 10_000) {
        dropped.inc();
        response.destroy();
        return;
      }
      waiting += 1;
      chain = chain
        .then(async () => {
          if (sse.open && (await mayRead(change))) {
            if (!sse.send(change.event, change.data)) dropped.inc();
          }
        })
        .catch(() => undefined)
        .finally(() => {
          waiting -= 1;
        });
    });
    const beat = setInterval(
      () => sse.send('heartbeat', { at: new Date().toISOString() }),
      heartbeatMs,
    );
    sse.send('heartbeat', { at: new Date().toISOString() });
    sse.onClose(() => {
      stop();
      clearInterval(beat);
      sseClients.dec({ stream: 'watch' });
    });
  }

  async function transcript(
    who: CallerAccess,
    namespace: string,
    name: string,
    url: URL,
    request: http.IncomingMessage,
    response: http.ServerResponse,
  ) {
    const params = paramsOf(url, ['uid', 'slot', 'attempt', 'follow']);
    const uid = uidOf(params);
    const slot = params.has('slot') ? Number(params.get('slot')) : undefined;
    const attempt = params.has('attempt') ? Number(params.get('attempt')) : undefined;
    for (const [key, value] of [
      ['slot', slot],
      ['attempt', attempt],
    ] as const)
      if (value !== undefined && !(Number.isInteger(value) && value >= 0))
        throw new ApiError('invalid_parameter', `query parameter ${key}: want an integer`, key);
    const follow = params.get('follow') === 'true';
    await requireRun(who, namespace);
    const d = deps(who);
    let { target } = await findRun(d, namespace, name, uid);
    const sse: SseStream = openSse(request, response, HEADERS);
    sseClients.inc({ stream: 'transcript' });
    const abort = new AbortController();
    sse.onClose(() => {
      abort.abort();
      sseClients.dec({ stream: 'transcript' });
    });
    const counter = { next: 0 };
    const wanted = (ref: { slot: number; attempt: number }) =>
      (slot === undefined || ref.slot === slot) &&
      (attempt === undefined || ref.attempt === attempt);
    const sent = new Set<string>();
    const emit = async (
      entries: ReturnType<ReturnType<typeof createTranscriptBuilder>['push']>,
    ) => {
      for (const entry of entries) sse.send('entry', entry);
      // Backpressure: a transcript waits for its reader (a finite log), unlike /watch.
      if (response.writableLength > 256 * 1024) await sse.drained();
    };
    try {
      for (;;) {
        for (const ref of target.attempts.filter(wanted)) {
          const key = `${ref.slot}/${ref.attempt}`;
          if (sent.has(key) || !sse.open) continue;
          const builder = createTranscriptBuilder({
            slot: ref.slot,
            attempt: ref.attempt,
            counter,
          });
          const live = ref.pod && (ref.pod.phase === 'Running' || ref.pod.phase === 'Pending');
          if (follow && live && ref.pod?.phase === 'Pending') {
            // The agent container is not up yet: its log cannot be followed; look again.
            await delay(1000, abort.signal);
            break;
          }
          await readAttempt(
            d,
            target,
            ref,
            {
              line: (text) => emit(builder.push(text)),
              elided: (bytes) => emit([builder.elided(bytes)]),
            },
            { follow: follow && Boolean(live), signal: abort.signal },
          );
          sent.add(key);
        }
        if (!follow || !sse.open) break;
        const current = cache.run(namespace, name);
        if (!current || current.summary.uid !== target.summary.uid) break;
        const finished =
          current.summary.phase === 'Succeeded' || current.summary.phase === 'Failed';
        const pods = await podsOfRun(client, namespace, current.summary);
        const refs = pods.map(attemptOfPodLabels);
        const fresh = refs.filter((ref) => !sent.has(`${ref.slot}/${ref.attempt}`));
        if (finished && fresh.every((ref) => !wanted(ref))) break;
        target = {
          ...target,
          summary: current.summary,
          attempts: [
            ...target.attempts.filter((ref) => sent.has(`${ref.slot}/${ref.attempt}`)),
            ...fresh,
          ],
        };
        if (fresh.length === 0) await delay(1000, abort.signal);
      }
      if (sse.open) {
        sse.send('end', {});
        sse.end();
      }
    } catch (error) {
      const failure = failureOf(error);
      if (failure.code === 'internal') logger?.error({ err: error }, 'transcript failed');
      sse.send('error', { code: VIEW_CODES[failure.code], message: failure.message });
      sse.end();
    }
  }

  async function hooks(
    who: CallerAccess,
    namespace: string,
    name: string,
    seqText: string,
    url: URL,
    response: http.ServerResponse,
  ) {
    const params = paramsOf(url, ['uid', 'slot', 'attempt']);
    const uid = uidOf(params);
    const seq = /^\d{1,6}$/.test(seqText) ? Number(seqText) : NaN;
    if (Number.isNaN(seq))
      throw new ApiError('invalid_parameter', 'path: the hook seq is not a number', 'seq');
    const number = (key: string) => {
      const value = params.get(key);
      if (value === undefined) return undefined;
      if (!/^\d{1,7}$/.test(value))
        throw new ApiError('invalid_parameter', `query parameter ${key}: want an integer`, key);
      return Number(value);
    };
    const slot = number('slot');
    const attempt = number('attempt');
    await requireRun(who, namespace);
    const d = deps(who);
    const { target } = await findRun(d, namespace, name, uid);
    const text = await hookOutput(d, target, seq, slot, attempt);
    send(response, 200, text, 'text/plain; charset=utf-8');
  }

  async function api(
    request: http.IncomingMessage,
    response: http.ServerResponse,
    url: URL,
    parts: string[],
  ) {
    const post = request.method === 'POST';
    if (!post && request.method !== 'GET' && request.method !== 'HEAD')
      throw new ApiError('method_not_allowed', `${request.method} is not served`);
    if (post && request.headers['x-lorenz-request'] !== '1')
      throw new ApiError('forbidden', 'a POST needs the header X-Lorenz-Request: 1');
    const who = await access.forRequest(request);
    const path = parts.slice(2);
    if (!post && path.length === 1) {
      if (path[0] === 'whoami') return whoami(who, response);
      if (path[0] === 'workflows') return workflows(who, url, response);
      if (path[0] === 'runs') return listRuns(who, url, response);
      if (path[0] === 'usage') return usage(who, url, response);
      if (path[0] === 'watch') return watch(who, url, request, response);
    }
    if (path[0] === 'namespaces' && path.length >= 4) {
      const namespace = path[1] ?? '';
      if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(namespace))
        throw new ApiError('invalid_parameter', 'path: not a namespace name', 'namespace');
      const name = runNameOf(path[3] ?? '');
      const kind = path[2];
      const rest = path.slice(4);
      if (post && rest.length === 1) {
        paramsOf(url, []);
        const action = rest[0] as Action;
        const fits =
          (kind === 'runs' && (action === 'cancel' || action === 'retry')) ||
          (kind === 'workflows' && (action === 'suspend' || action === 'resume'));
        if (fits) return sendJson(response, 200, await runAction(who, action, namespace, name));
      }
      if (!post && kind === 'runs') {
        if (rest.length === 0) {
          const uid = uidOf(paramsOf(url, ['uid']));
          await requireRun(who, namespace);
          return sendJson(response, 200, await runDetail(deps(who), namespace, name, uid));
        }
        if (rest.length === 1 && rest[0] === 'transcript')
          return transcript(who, namespace, name, url, request, response);
        if (rest.length === 3 && rest[0] === 'hooks' && rest[2] === 'output')
          return hooks(who, namespace, name, rest[1] ?? '', url, response);
      }
    }
    throw new ApiError(
      'not_found',
      `no such endpoint: ${request.method} ${url.pathname.slice(0, 200)}`,
    );
  }

  const handler: http.RequestListener = (request, response) => {
    const url = new URL(request.url ?? '/', 'http://view.invalid');
    const parts = url.pathname.split('/').filter(Boolean);
    const route = routeOf(parts);
    response.once('finish', () => requests.inc({ route, code: String(response.statusCode) }));
    void (async () => {
      try {
        if (options.loopbackHostsOnly && !LOOPBACK_HOST.test(request.headers.host ?? ''))
          throw new ApiError(
            'forbidden',
            'lorenz server (local mode) answers only requests to localhost or 127.0.0.1',
          );
        if (url.pathname === '/healthz')
          return send(response, 200, 'ok\n', 'text/plain; charset=utf-8');
        if (url.pathname === '/readyz')
          return cache.hasSynced()
            ? send(response, 200, 'ok\n', 'text/plain; charset=utf-8')
            : send(response, 503, 'caches not synced\n', 'text/plain; charset=utf-8');
        if (url.pathname === '/metrics')
          return send(response, 200, await registry.metrics(), registry.contentType);
        if (parts[0] === 'api') {
          if (parts[1] !== 'v1')
            throw new ApiError(
              'not_found',
              `no such API version: ${String(parts[1]).slice(0, 50)}`,
            );
          return await api(request, response, url, parts);
        }
        if (request.method !== 'GET' && request.method !== 'HEAD')
          throw new ApiError('method_not_allowed', `${request.method} is not served here`);
        const file = await serveStatic(url.pathname);
        response.writeHead(file.status, {
          ...HEADERS,
          ...file.headers,
          'Content-Length': String(file.body.length),
        });
        response.end(request.method === 'HEAD' ? undefined : file.body);
      } catch (error) {
        const failure = failureOf(error);
        if (
          failure.code === 'internal' ||
          failure.code === 'archive_unavailable' ||
          failure.code === 'kube_unavailable'
        )
          logger?.error({ err: error, path: url.pathname.slice(0, 200) }, 'view request failed');
        sendError(response, failure);
      }
    })();
  };
  return { handler, registry };
}

function delay(ms: number, signal: AbortSignal): Promise<void> {
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

export async function startViewServer(
  options: ViewServerOptions & { bind: { host: string; port: number } },
): Promise<ViewServer> {
  const { handler, registry } = viewHandler(options);
  const server = http.createServer(handler);
  server.keepAliveTimeout = 5_000;
  server.headersTimeout = 10_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.bind.port, options.bind.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
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
