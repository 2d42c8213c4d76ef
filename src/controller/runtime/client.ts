import http from 'node:http';
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { createHttp2Pool } from './http2-pool.js';
import { tlsMaterial } from './tls-material.js';
import { textChunks, type HttpResponse } from './text-chunks.js';

/**
 * A thin JSON client for the Kubernetes API on top of a KubeConfig (auth, TLS,
 * impersonation). The informers need raw JSON for both list and watch, with the same shape
 * for every kind (client-node's typed clients turn timestamps into Dates for built-in kinds
 * only), and a watch whose connection the caller controls; reconcilers may use it too.
 * Over HTTPS it speaks HTTP/2 where the server offers it (http2-pool.ts): a burst of
 * requests over HTTP/1.1 cost a socket and a TLS handshake per request in flight, and about
 * twice the CPU per request.
 */

/** A resource type: `group` '' is the core group. */
export interface ResourceRef {
  group: string;
  version: string;
  plural: string;
}

export const PODS: ResourceRef = { group: '', version: 'v1', plural: 'pods' };
export const CONFIGMAPS: ResourceRef = { group: '', version: 'v1', plural: 'configmaps' };
export const PVCS: ResourceRef = { group: '', version: 'v1', plural: 'persistentvolumeclaims' };
export const SECRETS: ResourceRef = { group: '', version: 'v1', plural: 'secrets' };
export const STORAGECLASSES: ResourceRef = {
  group: 'storage.k8s.io',
  version: 'v1',
  plural: 'storageclasses',
};
export const LEASES: ResourceRef = {
  group: 'coordination.k8s.io',
  version: 'v1',
  plural: 'leases',
};

/** The URL path of a collection, an object, or an object's subresource. */
export function resourcePath(
  resource: ResourceRef,
  namespace?: string,
  name?: string,
  subresource?: string,
): string {
  const base =
    resource.group === ''
      ? `/api/${resource.version}`
      : `/apis/${resource.group}/${resource.version}`;
  const scoped = namespace ? `${base}/namespaces/${encodeURIComponent(namespace)}` : base;
  const collection = `${scoped}/${resource.plural}`;
  if (!name) return collection;
  return `${collection}/${encodeURIComponent(name)}${subresource ? `/${subresource}` : ''}`;
}

/** A non-2xx answer from the apiserver, with its Status object when there is one. */
export class KubeApiError extends Error {
  readonly statusCode: number;
  readonly reason: string | undefined;
  readonly body: unknown;

  constructor(statusCode: number, body: unknown, method: string, path: string) {
    const status = isRecord(body) ? body : undefined;
    const message =
      typeof status?.message === 'string' ? status.message : String(body).slice(0, 500);
    super(`${method} ${path}: ${statusCode} ${message}`);
    this.name = 'KubeApiError';
    this.statusCode = statusCode;
    this.reason = typeof status?.reason === 'string' ? status.reason : undefined;
    this.body = body;
  }
}

export function isNotFound(error: unknown): boolean {
  return statusOf(error) === 404;
}
export function isConflict(error: unknown): boolean {
  return statusOf(error) === 409;
}
export function isAlreadyExists(error: unknown): boolean {
  return (
    error instanceof KubeApiError && error.statusCode === 409 && error.reason === 'AlreadyExists'
  );
}
export function isGone(error: unknown): boolean {
  return statusOf(error) === 410;
}

/** A GET of one object, or undefined when there is none (404); any other failure throws. */
export async function getIfExists<T>(client: KubeClient, path: string): Promise<T | undefined> {
  try {
    return await client.request<T>({ path });
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

/** The HTTP status of an error from this client or from client-node's generated clients. */
export function statusOf(error: unknown): number | undefined {
  if (error instanceof KubeApiError) return error.statusCode;
  if (isRecord(error)) {
    for (const key of ['statusCode', 'code']) {
      if (typeof error[key] === 'number') return error[key];
    }
  }
  return undefined;
}

export interface RequestOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  /** Content type of a PATCH: merge (default), json or apply. */
  patchType?: 'merge' | 'json' | 'apply';
  signal?: AbortSignal;
  /** More request headers (e.g. X-Lorenz-Token to a service behind the apiserver's proxy). */
  headers?: Record<string, string>;
}

export interface StreamOptions extends RequestOptions {
  onLine: (line: string) => void;
  /**
   * Longest line held, in characters: a longer one is cut there and handed on with
   * LINE_CUT_MARKER, the rest of it dropped as it arrives (a 200 MB line never sits whole in
   * memory). Unbounded when unset: a watch event is one line as long as its object.
   */
  maxLineLength?: number;
}

/** What ends a line cut at `maxLineLength`. */
export const LINE_CUT_MARKER = ' [lorenz: line cut, longer than the limit]';

/**
 * Splits a text stream into trimmed, non-empty lines, holding at most `maxLineLength`
 * characters of a line: a longer line is handed on cut, with LINE_CUT_MARKER, once.
 */
export function createLineSplitter(
  onLine: (line: string) => void,
  maxLineLength = Infinity,
): { push(chunk: string): void; end(): void } {
  let pending = '';
  /** The current line was cut: drop what comes up to its newline. */
  let skipping = false;
  const emit = (line: string) => {
    const trimmed = line.trim();
    if (trimmed.length > 0) onLine(trimmed);
  };
  return {
    push(chunk) {
      let rest = chunk;
      for (;;) {
        const newline = rest.indexOf('\n');
        if (skipping) {
          if (newline < 0) return;
          skipping = false;
          rest = rest.slice(newline + 1);
          continue;
        }
        if (newline < 0) {
          pending += rest;
          if (pending.length > maxLineLength) {
            emit(pending.slice(0, maxLineLength) + LINE_CUT_MARKER);
            pending = '';
            skipping = true;
          }
          return;
        }
        const line = pending + rest.slice(0, newline);
        pending = '';
        rest = rest.slice(newline + 1);
        emit(line.length > maxLineLength ? line.slice(0, maxLineLength) + LINE_CUT_MARKER : line);
      }
    },
    end() {
      if (!skipping) emit(pending);
      pending = '';
      skipping = false;
    },
  };
}

export interface KubeClient {
  /** One JSON request; throws KubeApiError on a non-2xx answer. */
  request<T = unknown>(options: RequestOptions): Promise<T>;
  /**
   * A streaming GET (a watch): `onLine` gets each line as it arrives; resolves when the
   * server ends the stream, rejects on a non-2xx answer or a broken connection. Abort with
   * `signal`.
   */
  stream(options: StreamOptions): Promise<void>;
  /** Releases pooled connections. */
  close(): void;
}

/**
 * Accept header asking for only the object's metadata back (kind PartialObjectMetadata), on
 * any verb, plain JSON where a server cannot: a create whose caller reads no more than the
 * metadata spares the apiserver serializing, and the controller parsing, the whole object.
 */
export const ACCEPT_METADATA_ONLY =
  'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';

const PATCH_TYPES = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  apply: 'application/apply-patch+yaml',
} as const;

/**
 * A path sent as it is, without a URL object per request (a burst's creates and status
 * writes): only characters a URL leaves unescaped in a path, and no dot segment (which URL
 * resolves). Anything else, and every query, goes through URL.
 */
const PLAIN_PATH = /^\/[A-Za-z0-9._~\-/:@]*$/;

/** What every request carries: TLS material for the agent, and the auth headers. */
interface Credentials {
  tls: https.RequestOptions;
  headers: Record<string, string>;
  basicAuth: string | undefined;
}

/**
 * How long auth headers from an exec plugin or auth provider (e.g. the in-cluster token
 * file) are reused. They rotate, so they are looked up again, but not per request: each
 * lookup re-reads the CA, certificate and key files and builds an https.Agent, which under
 * load costs CPU and malloc churn. A 401 answer forces a fresh lookup.
 */
const DYNAMIC_AUTH_REUSE_MS = 1000;

async function loadCredentials(kubeConfig: KubeConfig): Promise<Credentials> {
  const options: https.RequestOptions = {};
  await kubeConfig.applyToHTTPSOptions(options);
  const headers: Record<string, string> = {};
  for (const [key, value] of Object.entries(options.headers ?? {})) {
    if (typeof value === 'string') headers[key] = value;
  }
  return { tls: options, headers, basicAuth: options.auth ?? undefined };
}

// eslint-disable-next-line max-lines-per-function -- a factory: the closures it returns share the state it keeps
export function createKubeClient(kubeConfig: KubeConfig): KubeClient {
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster) throw new Error('the kubeconfig has no current cluster');
  const server = new URL(cluster.server);
  const secure = server.protocol === 'https:';
  const user = kubeConfig.getCurrentUser();
  // Static credentials (certificates, a fixed token) are read once; rotating ones are
  // refreshed at most every DYNAMIC_AUTH_REUSE_MS.
  const rotating = Boolean(user?.exec || user?.authProvider);
  let agent: http.Agent | undefined;
  // HTTPS servers that offer h2 (kube-apiserver does) get HTTP/2; the agent serves the rest.
  const http2 = secure
    ? createHttp2Pool(server, async () => (await currentCredentials()).tls)
    : undefined;
  let credentials: { value: Promise<Credentials>; at: number } | undefined;

  function currentCredentials(): Promise<Credentials> {
    const now = performance.now();
    if (!credentials || (rotating && now - credentials.at > DYNAMIC_AUTH_REUSE_MS)) {
      const value = loadCredentials(kubeConfig);
      credentials = { value, at: now };
      // A failed lookup is not kept: the next request tries again.
      value.catch(() => {
        if (credentials?.value === value) credentials = undefined;
      });
    }
    return credentials.value;
  }

  function agentFor(tls: https.RequestOptions): http.Agent {
    agent ??= secure
      ? new https.Agent({
          keepAlive: true,
          ...tlsMaterial(tls),
          servername: tls.servername,
        })
      : new http.Agent({ keepAlive: true });
    return agent;
  }

  const basePath = server.pathname.replace(/\/$/, '');

  /** The path and query to ask for: a plain path as it is, anything else through URL. */
  function target(options: RequestOptions): string {
    if (!options.query && PLAIN_PATH.test(options.path) && !options.path.includes('/.'))
      return basePath + options.path;
    const url = new URL(server.origin + basePath + options.path);
    for (const [key, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    return url.pathname + url.search;
  }

  /** The response's status and body, over HTTP/2 where the server speaks it. */
  async function open(options: RequestOptions): Promise<HttpResponse> {
    const method = options.method ?? 'GET';
    const path = target(options);
    const auth = await currentCredentials();
    const headers: Record<string, string> = {
      Accept: 'application/json',
      ...options.headers,
      ...auth.headers,
    };
    let payload: string | undefined;
    if (options.body !== undefined) {
      payload = JSON.stringify(options.body);
      headers['Content-Type'] =
        method === 'PATCH' ? PATCH_TYPES[options.patchType ?? 'merge'] : 'application/json';
      headers['Content-Length'] = String(Buffer.byteLength(payload));
    }
    // HTTP/1.1 sends basic auth from the request's `auth` option; HTTP/2 needs the header.
    const h2Headers = auth.basicAuth
      ? {
          ...headers,
          Authorization: `Basic ${Buffer.from(auth.basicAuth).toString('base64')}`,
        }
      : headers;
    const response =
      (await http2?.request({
        method,
        path,
        headers: h2Headers,
        body: payload,
        signal: options.signal,
      })) ??
      (await openHttp1(
        new URL(server.origin + path),
        method,
        headers,
        payload,
        auth,
        options.signal,
      ));
    if (response.status === 401 && rotating) credentials = undefined;
    return response;
  }

  async function openHttp1(
    url: URL,
    method: string,
    headers: Record<string, string>,
    payload: string | undefined,
    auth: Credentials,
    signal: AbortSignal | undefined,
  ): Promise<HttpResponse> {
    const transport = secure ? https : http;
    const response = await new Promise<http.IncomingMessage>((resolve, reject) => {
      const request = transport.request(url, {
        method,
        agent: agentFor(auth.tls),
        headers,
        ...(auth.basicAuth ? { auth: auth.basicAuth } : {}),
        ...(signal ? { signal } : {}),
      });
      request.on('response', resolve);
      request.on('error', reject);
      request.end(payload);
    });
    return { status: response.statusCode ?? 0, chunks: textChunks(response) };
  }

  /**
   * The body as one string, decoded chunk by chunk into V8 strings: concatenating the raw
   * Buffers first would malloc one block as large as a whole list page (megabytes), which
   * glibc keeps in its heap long after the page was parsed.
   */
  async function readAll(response: HttpResponse): Promise<string> {
    let text = '';
    for await (const chunk of response.chunks) text += chunk;
    return text;
  }

  function parse(text: string): unknown {
    try {
      return text.length > 0 ? JSON.parse(text) : undefined;
    } catch {
      return text;
    }
  }

  async function check(response: HttpResponse, options: RequestOptions): Promise<void> {
    const { status } = response;
    if (status >= 200 && status < 300) return;
    const body = parse(await readAll(response));
    throw new KubeApiError(status, body, options.method ?? 'GET', options.path);
  }

  return {
    async request<T>(options: RequestOptions): Promise<T> {
      const response = await open(options);
      await check(response, options);
      const text = await readAll(response);
      return (
        options.headers?.Accept === ACCEPT_METADATA_ONLY ? parseMetadataOnly(text) : parse(text)
      ) as T;
    },

    async stream(options) {
      const response = await open(options);
      await check(response, options);
      const splitter = createLineSplitter(options.onLine, options.maxLineLength);
      for await (const chunk of response.chunks) splitter.push(chunk);
      splitter.end();
    },

    close() {
      http2?.close();
      agent?.destroy();
      agent = undefined;
    },
  };
}

/** Where the managed fields begin in a PartialObjectMetadata answer. */
const MANAGED_FIELDS = ',"managedFields":[';

/**
 * A PartialObjectMetadata answer parsed without its `metadata.managedFields`: the field
 * manager's record of every field of the object, most of the answer's bytes (a run Pod's
 * create, a run's status write), and what a burst spent parsing its writes' answers on
 * (8 % of its CPU). kube-apiserver writes ObjectMeta's fields in its Go struct's order,
 * managedFields last, and metadata is PartialObjectMetadata's last field: the text before
 * the marker, closed, is the rest. That order is what this relies on; an answer without the
 * marker, or that does not end as the array and both objects do, is parsed whole. A string
 * value cannot hold the marker (its quotes would be escaped), nor can a label or annotation
 * (their values are strings, never arrays).
 */
export function parseMetadataOnly(text: string): unknown {
  // The apiserver ends its answers with a newline.
  let end = text.length;
  while (end > 0 && /\s/.test(text[end - 1] ?? '')) end -= 1;
  if (text.startsWith('{"kind":"PartialObjectMetadata"') && text.startsWith(']}}', end - 3)) {
    const cut = text.indexOf(MANAGED_FIELDS);
    if (cut > 0) {
      try {
        return JSON.parse(`${text.slice(0, cut)}}}`);
      } catch {
        // Not the layout expected: parsed whole below.
      }
    }
  }
  try {
    return text.length > 0 ? JSON.parse(text) : undefined;
  } catch {
    return text;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
