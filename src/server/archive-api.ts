import http from 'node:http';
import { once } from 'node:events';
import type { Logger } from 'pino';
import {
  ArchiveError,
  type ArchiveStore,
  type RunRecord,
  type UsageRow,
} from '../archive/types.js';
import type { KubeClient } from '../controller/runtime/client.js';
import { listenHttp, parseBindAddress } from '../controller/runtime/servers.js';
import { kubeAuthorizer, tokenOf, type Authorizer, type Caller } from './auth.js';
import { ApiError } from './errors.js';
import {
  LOG_PARAMS,
  RUNS_PARAMS,
  USAGE_PARAMS,
  logFilterOf,
  paramsOf,
  runNameOf,
  runQueryOf,
  uidOf,
  usageQueryOf,
} from './query.js';

/**
 * The archive's read API, served by the controller beside its metrics and health servers:
 *
 *   GET /api/v1/runs?namespace=&workflow=&issue=&phase=&reason=&since=&until=&limit=&continue=&deleted=
 *   GET /api/v1/namespaces/{ns}/runs/{name}[?uid=]
 *   GET /api/v1/namespaces/{ns}/runs/{name}/log[?slot=&attempt=&uid=]   (NDJSON of LogEntry)
 *   GET /api/v1/usage?namespace=&workflow=&from=&to=
 *   GET /healthz
 *
 * Everything is JSON (never HTML: the archive holds agents' and hooks' text, which is data),
 * and every read is authorized by the cluster's RBAC (auth.ts).
 */
export interface ArchiveApiOptions {
  store: ArchiveStore;
  /** The controller's client: it makes the TokenReviews and SubjectAccessReviews. */
  client: KubeClient;
  /** `host:port`, `:port`, or `0` (not served). */
  bindAddress: string;
  logger?: Logger;
  /** Seam for tests and caching: who the callers are and what they may read. */
  authorizer?: Authorizer;
}

export interface ArchiveApi {
  address: { host: string; port: number };
  close(): Promise<void>;
}

const SECURITY_HEADERS = {
  'X-Content-Type-Options': 'nosniff',
  'Cache-Control': 'no-store',
  'Content-Security-Policy': "default-src 'none'",
} as const;

/** At most this many store pages are scanned for one page of an all-namespaces query. */
const MAX_SCANNED_PAGES = 20;

function sendJson(response: http.ServerResponse, status: number, body: unknown): void {
  const text = `${JSON.stringify(body)}\n`;
  response.writeHead(status, {
    ...SECURITY_HEADERS,
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
  });
  response.end(text);
}

function sendError(response: http.ServerResponse, error: ApiError): void {
  if (response.headersSent) {
    response.destroy();
    return;
  }
  sendJson(response, error.status, {
    code: error.code,
    message: error.message,
    ...(error.parameter ? { parameter: error.parameter } : {}),
  });
}

/** What a failure is answered with; anything not ours is a 500 without its text. */
function apiErrorOf(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof ArchiveError) {
    if (error.code === 'archive_query_invalid') {
      const parameter = /^(\w+):/.exec(error.message)?.[1] ?? 'query';
      return new ApiError('invalid_parameter', error.message, parameter);
    }
    return new ApiError('archive_unavailable', `the archive cannot answer: ${error.code}`);
  }
  return new ApiError('internal', 'internal error (see the controller log)');
}

/** The handler alone, for a caller that owns the server (tests, another listener). */
// eslint-disable-next-line max-lines-per-function -- one route table: each route is a few lines, and the table reads as the API
export function archiveApiHandler(options: Omit<ArchiveApiOptions, 'bindAddress'>) {
  const { store } = options;
  const authorizer = options.authorizer ?? kubeAuthorizer(options.client);
  const logger = options.logger;

  async function caller(request: http.IncomingMessage): Promise<Caller> {
    return authorizer.authenticate(tokenOf(request.headers));
  }

  async function requireNamespace(who: Caller, namespace: string): Promise<void> {
    if (!(await authorizer.mayList(who, namespace)))
      throw new ApiError(
        'forbidden',
        `${who.username} may not list issueruns.lorenz.dev in namespace ${namespace}`,
      );
  }

  /** Of `namespaces`, the ones the caller may read (one cached review each). */
  async function readable(who: Caller, namespaces: Iterable<string>): Promise<Set<string>> {
    const allowed = new Set<string>();
    for (const namespace of new Set(namespaces)) {
      if (await authorizer.mayList(who, namespace)) allowed.add(namespace);
    }
    return allowed;
  }

  async function listRuns(who: Caller, url: URL, response: http.ServerResponse): Promise<void> {
    const { namespace, query } = runQueryOf(paramsOf(url, RUNS_PARAMS));
    if (namespace) {
      await requireNamespace(who, namespace);
      sendJson(response, 200, await store.listRuns({ ...query, namespaces: [namespace] }));
      return;
    }
    if (await authorizer.mayList(who, '')) {
      sendJson(response, 200, await store.listRuns(query));
      return;
    }
    // Not cluster-wide: the rows of the namespaces this caller may list. A page may come back
    // shorter than the limit (as a Kubernetes list may); `continue` goes on where it stopped.
    let next = query.continue;
    const runs: RunRecord[] = [];
    for (let scanned = 0; scanned < MAX_SCANNED_PAGES; scanned += 1) {
      const page = await store.listRuns({ ...query, ...(next ? { continue: next } : {}) });
      const allowed = await readable(
        who,
        page.runs.map((run) => run.namespace),
      );
      runs.push(...page.runs.filter((run) => allowed.has(run.namespace)));
      next = page.continue;
      if (!next || runs.length > 0) break;
    }
    sendJson(response, 200, next ? { runs, continue: next } : { runs });
  }

  async function usage(who: Caller, url: URL, response: http.ServerResponse): Promise<void> {
    const { namespace, query } = usageQueryOf(paramsOf(url, USAGE_PARAMS));
    if (namespace) {
      await requireNamespace(who, namespace);
      sendJson(response, 200, {
        rows: await store.usageByDay({ ...query, namespaces: [namespace] }),
      });
      return;
    }
    const rows: UsageRow[] = await store.usageByDay(query);
    if (await authorizer.mayList(who, '')) {
      sendJson(response, 200, { rows });
      return;
    }
    const allowed = await readable(
      who,
      rows.map((row) => row.namespace),
    );
    sendJson(response, 200, { rows: rows.filter((row) => allowed.has(row.namespace)) });
  }

  async function findRun(namespace: string, name: string, uid: string | undefined) {
    const found = await store.getRun(uid ? { uid, namespace } : { namespace, name });
    if (!found || found.run.namespace !== namespace || found.run.name !== name)
      throw new ApiError(
        'not_found',
        `no archived run ${namespace}/${name}${uid ? ` with uid ${uid}` : ''}`,
      );
    return found;
  }

  async function getRun(
    who: Caller,
    namespace: string,
    name: string,
    url: URL,
    response: http.ServerResponse,
  ): Promise<void> {
    const uid = uidOf(paramsOf(url, ['uid']));
    await requireNamespace(who, namespace);
    sendJson(response, 200, await findRun(namespace, name, uid));
  }

  async function streamLog(
    who: Caller,
    namespace: string,
    name: string,
    url: URL,
    request: http.IncomingMessage,
    response: http.ServerResponse,
  ): Promise<void> {
    const params = paramsOf(url, LOG_PARAMS);
    const filter = logFilterOf(params);
    const uid = uidOf(params);
    await requireNamespace(who, namespace);
    const { run } = await findRun(namespace, name, uid);
    const entries = store.readLog(run.uid, filter)[Symbol.asyncIterator]();
    // The first entry before the headers: a store that fails at once is still a JSON error.
    let first = await entries.next();
    response.writeHead(200, {
      ...SECURITY_HEADERS,
      'Content-Type': 'application/x-ndjson; charset=utf-8',
    });
    let gone = false;
    const onClose = () => (gone = true);
    request.socket.once('close', onClose);
    try {
      while (!first.done && !gone) {
        // Backpressure: a slow reader holds the store's iterator, not the controller's heap.
        if (!response.write(`${JSON.stringify(first.value)}\n`)) {
          await Promise.race([once(response, 'drain'), once(request.socket, 'close')]);
        }
        first = await entries.next();
      }
    } finally {
      request.socket.off('close', onClose);
      if (!first.done) await entries.return?.();
    }
    response.end();
  }

  return async (request: http.IncomingMessage, response: http.ServerResponse): Promise<void> => {
    const url = new URL(request.url ?? '/', 'http://archive.invalid');
    const path = url.pathname.replace(/\/+$/, '') || '/';
    try {
      if (request.method !== 'GET' && request.method !== 'HEAD')
        throw new ApiError('method_not_allowed', `${request.method} is not served: GET only`);
      if (path === '/healthz') {
        sendJson(response, 200, { status: 'ok', store: store.kind });
        return;
      }
      const parts = path.split('/').slice(1);
      if (parts[0] !== 'api' || parts[1] !== 'v1')
        throw new ApiError('not_found', `no such endpoint: ${path.slice(0, 200)}`);
      const who = await caller(request);
      if (parts.length === 3 && parts[2] === 'runs') return await listRuns(who, url, response);
      if (parts.length === 3 && parts[2] === 'usage') return await usage(who, url, response);
      if (parts[2] === 'namespaces' && parts[4] === 'runs' && parts[5] !== undefined) {
        const namespace = parts[3] ?? '';
        if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(namespace))
          throw new ApiError('invalid_parameter', 'path: not a namespace name', 'namespace');
        const name = runNameOf(parts[5]);
        if (parts.length === 6) return await getRun(who, namespace, name, url, response);
        if (parts.length === 7 && parts[6] === 'log')
          return await streamLog(who, namespace, name, url, request, response);
      }
      throw new ApiError('not_found', `no such endpoint: ${path.slice(0, 200)}`);
    } catch (error) {
      const failure = apiErrorOf(error);
      if (failure.code === 'internal' || failure.code === 'archive_unavailable')
        logger?.error({ err: error, path: path.slice(0, 200) }, 'archive API request failed');
      sendError(response, failure);
    }
  };
}

/**
 * Starts the read API on `bindAddress`; undefined when it is `0`. The controller's command
 * composes it with the store it opened (`--archive-dsn`) and its Kubernetes client.
 */
export async function startArchiveApi(options: ArchiveApiOptions): Promise<ArchiveApi | undefined> {
  const bind = parseBindAddress(options.bindAddress);
  if (!bind) return undefined;
  const handler = archiveApiHandler(options);
  const bound = await listenHttp(bind, (request, response) => void handler(request, response), {
    headersTimeoutMs: 10_000,
  });
  const where = `${bound.address.host}:${bound.address.port}`;
  options.logger?.info(
    { address: where, store: options.store.location },
    `archive read API listening on ${where}`,
  );
  return bound;
}
