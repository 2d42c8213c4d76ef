import type * as archive from '../../archive/types.js';
import { archivedRunNamed } from '../../archive/named-run.js';
import { CodedError } from '../../workflow/errors.js';
import { KubeApiError, type KubeClient } from '../../controller/runtime/client.js';
import { archiveRunPath, runsParamsOf } from '../../server/query.js';

/**
 * What the run commands read the archive through: the store itself (`--archive-dsn`, or the
 * laptop controller's file), or the controller's read API (`--archive-url`, or the apiserver's
 * service proxy). One shape, so the commands do not care which.
 */
export interface ArchiveReader {
  /** Where it reads from, for messages (never a password or token). */
  readonly where: string;
  listRuns(namespace: string | undefined, query: archive.RunQuery): Promise<archive.RunPage>;
  /** The newest run of that name, or the one of `uid` (a live run's, whose Pods are gone). */
  getRun(namespace: string, name: string, uid?: string): Promise<archive.ArchivedRun | undefined>;
  readLog(run: archive.RunRecord, filter: archive.LogFilter): AsyncIterable<archive.LogEntry>;
  close(): Promise<void>;
}

/** The read API answered with an error (its `{ code, message }`), or could not be reached. */
export class ArchiveReadError extends CodedError<string> {
  constructor(code: string, message: string) {
    super('ArchiveReadError', code, message);
  }
}

export function storeReader(store: archive.ArchiveStore, where = store.location): ArchiveReader {
  return {
    where,
    listRuns: (namespace, query) =>
      store.listRuns({ ...query, ...(namespace ? { namespaces: [namespace] } : {}) }),
    getRun: (namespace, name, uid) => archivedRunNamed(store, { namespace, name, uid }),
    readLog: (run, filter) => store.readLog(run.uid, filter),
    close: () => store.close(),
  };
}

/** How the read API is reached: a GET for JSON, and a GET whose NDJSON body is streamed. */
export interface ApiTransport {
  readonly where: string;
  json(path: string, query: Record<string, string | undefined>): Promise<unknown>;
  lines(
    path: string,
    query: Record<string, string | undefined>,
    onLine: (line: string) => void,
  ): Promise<void>;
  close(): void;
}

export function apiReader(transport: ApiTransport): ArchiveReader {
  return {
    where: transport.where,
    async listRuns(namespace, query) {
      return (await transport.json(
        '/api/v1/runs',
        runsParamsOf(namespace, query),
      )) as archive.RunPage;
    },
    async getRun(namespace, name, uid) {
      try {
        return (await transport.json(archiveRunPath(namespace, name), {
          uid,
        })) as archive.ArchivedRun;
      } catch (error) {
        if (error instanceof ArchiveReadError && error.code === 'not_found') return undefined;
        throw error;
      }
    },
    async *readLog(run, filter) {
      // The API streams; entries are handed on as they come. What the reader has not taken yet
      // waits here (at most one log, bounded by the archive's cap).
      const queue: archive.LogEntry[] = [];
      let wake: (() => void) | undefined;
      let ended = false;
      let failure: Error | undefined;
      const done = transport
        .lines(
          `${archiveRunPath(run.namespace, run.name)}/log`,
          {
            uid: run.uid,
            slot: filter.slot === undefined ? undefined : String(filter.slot),
            attempt: filter.attempt === undefined ? undefined : String(filter.attempt),
          },
          (line) => {
            queue.push(JSON.parse(line) as archive.LogEntry);
            wake?.();
          },
        )
        .catch((error: unknown) => {
          failure = error instanceof Error ? error : new Error(JSON.stringify(error));
        })
        .finally(() => {
          ended = true;
          wake?.();
        });
      for (;;) {
        while (queue.length > 0) yield queue.shift() as archive.LogEntry;
        if (ended) break;
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
      }
      await done;
      if (failure) throw failure;
    },
    async close() {
      transport.close();
    },
  };
}

function errorOfBody(status: number, body: unknown, where: string): ArchiveReadError {
  if (typeof body === 'object' && body !== null) {
    const { code, message } = body as { code?: unknown; message?: unknown };
    if (typeof code === 'string' && typeof message === 'string')
      return new ArchiveReadError(code, message);
  }
  return new ArchiveReadError('archive_api_error', `${where} answered ${status}`);
}

/** The read API at a URL (`--archive-url`), with the kubeconfig user's bearer token. */
export function urlTransport(base: string, token: string | undefined): ApiTransport {
  const root = base.replace(/\/+$/, '');
  const headers: Record<string, string> = token ? { Authorization: `Bearer ${token}` } : {};
  const urlOf = (path: string, query: Record<string, string | undefined>): string => {
    const url = new URL(root + path);
    for (const [key, value] of Object.entries(query))
      if (value !== undefined) url.searchParams.set(key, value);
    return url.toString();
  };
  async function get(path: string, query: Record<string, string | undefined>) {
    let response: Response;
    try {
      response = await fetch(urlOf(path, query), { headers });
    } catch (error) {
      throw new ArchiveReadError(
        'archive_unreachable',
        `cannot reach the archive API at ${root}: ${(error as Error).message}`,
      );
    }
    if (!response.ok) {
      const body: unknown = await response.json().catch(() => undefined);
      throw errorOfBody(response.status, body, root);
    }
    return response;
  }
  return {
    where: root,
    async json(path, query) {
      return (await get(path, query)).json();
    },
    async lines(path, query, onLine) {
      const response = await get(path, query);
      const decoder = new TextDecoder();
      let pending = '';
      for await (const chunk of response.body ?? []) {
        pending += decoder.decode(chunk as Uint8Array, { stream: true });
        let newline = pending.indexOf('\n');
        while (newline >= 0) {
          const line = pending.slice(0, newline);
          pending = pending.slice(newline + 1);
          if (line.length > 0) onLine(line);
          newline = pending.indexOf('\n');
        }
      }
      if (pending.trim().length > 0) onLine(pending);
    },
    close() {},
  };
}

/**
 * The read API through the apiserver's service proxy: the kubeconfig alone reaches it. The
 * apiserver authenticates the proxy request and drops its Authorization header, so the
 * user's token travels again as X-Lorenz-Token, which the archive API checks itself.
 */
export function proxyTransport(
  client: KubeClient,
  service: { namespace: string; name: string },
  token: string,
): ApiTransport {
  const prefix = `/api/v1/namespaces/${encodeURIComponent(service.namespace)}/services/${encodeURIComponent(`http:${service.name}:archive`)}/proxy`;
  const where = `service ${service.namespace}/${service.name} (port archive, through the apiserver)`;
  const headers = { 'X-Lorenz-Token': token };
  const clean = (query: Record<string, string | undefined>) =>
    Object.fromEntries(Object.entries(query).filter(([, value]) => value !== undefined));
  const translate = (error: unknown): unknown =>
    error instanceof KubeApiError ? errorOfBody(error.statusCode, error.body, where) : error;
  return {
    where,
    async json(path, query) {
      try {
        return await client.request({ path: prefix + path, query: clean(query), headers });
      } catch (error) {
        throw translate(error);
      }
    },
    async lines(path, query, onLine) {
      try {
        await client.stream({ path: prefix + path, query: clean(query), headers, onLine });
      } catch (error) {
        throw translate(error);
      }
    },
    close() {},
  };
}
