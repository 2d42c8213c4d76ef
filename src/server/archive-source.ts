import type * as archive from '../archive/types.js';
import { archivedRunNamed } from '../archive/named-run.js';
import { ApiError } from './errors.js';
import { archiveRunPath, runsParamsOf } from './query.js';

/**
 * Where the view server reads history: the archive's store itself (`--archive-dsn`: the
 * server filters rows by the caller's reviews), or the controller's read API
 * (`--archive-url`: the caller's token is forwarded, so that API's own reviews filter).
 */
export interface ArchiveReads {
  /** Whether rows come back already filtered for the caller (the read API does it). */
  readonly filtered: boolean;
  listRuns(query: archive.RunQuery): Promise<archive.RunPage>;
  getRun(ref: {
    namespace: string;
    name: string;
    uid?: string;
  }): Promise<archive.ArchivedRun | undefined>;
  readLog(
    run: { uid: string; namespace: string; name: string },
    filter?: archive.LogFilter,
  ): AsyncIterable<archive.LogEntry>;
  usageByDay(query: archive.UsageQuery): Promise<archive.UsageRow[]>;
}

export interface ArchiveSource {
  readonly location: string;
  /** The reads for one caller (its bearer token; undefined in local mode without one). */
  forCaller(token: string | undefined): ArchiveReads;
  close(): Promise<void>;
}

export function storeSource(store: archive.ArchiveStore): ArchiveSource {
  const reads: ArchiveReads = {
    filtered: false,
    listRuns: (query) => store.listRuns(query),
    getRun: (ref) => archivedRunNamed(store, ref),
    readLog: (run, filter) => store.readLog(run.uid, filter),
    usageByDay: (query) => store.usageByDay(query),
  };
  return { location: store.location, forCaller: () => reads, close: () => store.close() };
}

/** The read API's answer as an ApiError of ours: its 403 stays a 403, anything else is a 503. */
async function failureOf(response: Response, root: string): Promise<ApiError> {
  const body = (await response.json().catch(() => undefined)) as
    { code?: unknown; message?: unknown } | undefined;
  const message =
    typeof body?.message === 'string' ? body.message : `${root} answered ${response.status}`;
  if (response.status === 403) return new ApiError('forbidden', message);
  if (response.status === 401) return new ApiError('unauthenticated', message);
  if (response.status === 400) return new ApiError('invalid_parameter', message);
  if (response.status === 404) return new ApiError('not_found', message);
  return new ApiError('archive_unavailable', `the archive API cannot answer: ${message}`);
}

type Query = Record<string, string | number | undefined>;

/** A GET of the read API as the caller (its bearer token), failing as an ApiError. */
function getter(root: string, token: string | undefined) {
  const headers: Record<string, string> = token ? { Authorization: `Bearer ${token}` } : {};
  return async function get(path: string, query: Query): Promise<Response> {
    const url = new URL(root + path);
    for (const [key, value] of Object.entries(query))
      if (value !== undefined) url.searchParams.set(key, String(value));
    let response: Response;
    try {
      response = await fetch(url, { headers });
    } catch (error) {
      throw new ApiError(
        'archive_unavailable',
        `cannot reach the archive API at ${root}: ${(error as Error).message}`,
      );
    }
    if (!response.ok) throw await failureOf(response, root);
    return response;
  };
}

/** The JSON values of a body of one JSON value a line (the read API's log). */
async function* jsonLines<T>(body: ReadableStream<Uint8Array> | null): AsyncIterable<T> {
  const decoder = new TextDecoder();
  let pending = '';
  for await (const chunk of body ?? []) {
    pending += decoder.decode(chunk, { stream: true });
    let newline = pending.indexOf('\n');
    while (newline >= 0) {
      const line = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      if (line.length > 0) yield JSON.parse(line) as T;
      newline = pending.indexOf('\n');
    }
  }
  if (pending.trim().length > 0) yield JSON.parse(pending) as T;
}

export function urlSource(base: string): ArchiveSource {
  const root = base.replace(/\/+$/, '');
  function reads(token: string | undefined): ArchiveReads {
    const get = getter(root, token);
    return {
      filtered: true,
      async listRuns(query) {
        if ((query.namespaces?.length ?? 0) > 1)
          throw new ApiError('internal', 'the archive API takes one namespace at a time');
        const response = await get('/api/v1/runs', runsParamsOf(query.namespaces?.[0], query));
        return (await response.json()) as archive.RunPage;
      },
      async getRun(ref) {
        try {
          const response = await get(archiveRunPath(ref.namespace, ref.name), { uid: ref.uid });
          return (await response.json()) as archive.ArchivedRun;
        } catch (error) {
          // A 404 of the read API is "not archived", not a failure.
          if (error instanceof ApiError && error.code === 'not_found') return undefined;
          throw error;
        }
      },
      async *readLog(run, filter = {}) {
        const response = await get(`${archiveRunPath(run.namespace, run.name)}/log`, {
          uid: run.uid,
          slot: filter.slot,
          attempt: filter.attempt,
        });
        yield* jsonLines<archive.LogEntry>(response.body);
      },
      async usageByDay(query) {
        if ((query.namespaces?.length ?? 0) > 1)
          throw new ApiError('internal', 'the archive API takes one namespace at a time');
        const response = await get('/api/v1/usage', {
          namespace: query.namespaces?.[0],
          workflow: query.workflow,
          from: query.from,
          to: query.to,
        });
        return ((await response.json()) as { rows: archive.UsageRow[] }).rows;
      },
    };
  }
  return { location: root, forCaller: reads, close: async () => {} };
}
