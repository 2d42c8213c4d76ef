import type { RunQuery, RunRecord } from '../archive/types.js';
import type { ArchiveReads } from './archive-source.js';
import { newestFirst, type ViewCache } from './cache.js';
import { badParameter } from './errors.js';
import { runOfRecord } from './mappers.js';
import type { RunList, RunSummary } from './view-api.js';

/**
 * /api/v1/runs: the live runs of the watch cache and the archive's rows in one list, newest
 * first (createdAt, then uid), a run that is both live and archived shown once, as live.
 * Paging: `continue` is the (createdAt, uid) of the last row sent, so each page is "older
 * than that" in both sources and the two never drift apart.
 */

export interface RunsRequest {
  namespace?: string;
  query: RunQuery;
  source?: 'live' | 'archive';
}

interface Cursor {
  createdAt: string;
  uid: string;
}

export const encodeCursor = (run: RunSummary): string =>
  Buffer.from(JSON.stringify([run.createdAt, run.uid])).toString('base64url');

export function decodeCursor(token: string): Cursor {
  try {
    const value: unknown = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
    if (
      Array.isArray(value) &&
      value.length === 2 &&
      typeof value[0] === 'string' &&
      typeof value[1] === 'string'
    )
      return { createdAt: value[0], uid: value[1] };
  } catch {
    // Falls through to the error below.
  }
  throw badParameter('continue', 'not a token this server gave');
}

const before = (cursor: Cursor | undefined) => (run: RunSummary) =>
  !cursor ||
  run.createdAt < cursor.createdAt ||
  (run.createdAt === cursor.createdAt && run.uid < cursor.uid);

export function matchesQuery(run: RunSummary, namespace: string | undefined, query: RunQuery) {
  if (namespace && run.namespace !== namespace) return false;
  if (query.workflow && run.workflow !== query.workflow) return false;
  if (query.issue && run.issue.identifier !== query.issue && run.issue.id !== query.issue)
    return false;
  if (query.phase && run.phase !== query.phase) return false;
  if (query.reason && run.reason !== query.reason) return false;
  if (query.since && run.createdAt < query.since) return false;
  if (query.until && run.createdAt >= query.until) return false;
  return true;
}

/** At most this many archive pages are read for one page of runs. */
const MAX_ARCHIVE_PAGES = 10;

export async function runsPage(
  request: RunsRequest,
  deps: {
    cache: ViewCache;
    archive: ArchiveReads | undefined;
    /** Of these namespaces, the ones the caller may read runs of. */
    readable: (namespaces: Iterable<string>) => Promise<Set<string>>;
  },
): Promise<RunList> {
  const { namespace, query, source } = request;
  const limit = query.limit ?? 100;
  const cursor = query.continue ? decodeCursor(query.continue) : undefined;
  const older = before(cursor);
  const picked: RunSummary[] = [];

  if (source !== 'archive') {
    const all = deps.cache.runs();
    const allowed = await deps.readable(new Set(all.map((run) => run.namespace)));
    for (const run of all) {
      if (!older(run) || !allowed.has(run.namespace) || !matchesQuery(run, namespace, query))
        continue;
      picked.push(run);
      if (picked.length > limit) break;
    }
  }

  let archiveMore = false;
  if (source !== 'live' && deps.archive) {
    const reads = deps.archive;
    // `until` is exclusive in the store; the cursor's own second is read again and cut here.
    const cursorUntil = cursor
      ? new Date(Date.parse(cursor.createdAt) + 1).toISOString()
      : undefined;
    const until =
      query.until && cursorUntil
        ? query.until < cursorUntil
          ? query.until
          : cursorUntil
        : (query.until ?? cursorUntil);
    const base: RunQuery = {
      ...(query.workflow ? { workflow: query.workflow } : {}),
      ...(query.issue ? { issue: query.issue } : {}),
      ...(query.phase ? { phase: query.phase } : {}),
      ...(query.reason ? { reason: query.reason } : {}),
      ...(query.since ? { since: query.since } : {}),
      ...(until ? { until } : {}),
      ...(namespace ? { namespaces: [namespace] } : {}),
      limit: Math.min(1000, limit + 1),
    };
    let next: string | undefined;
    let archived = 0;
    for (let page = 0; page < MAX_ARCHIVE_PAGES; page += 1) {
      const got = await reads.listRuns({ ...base, ...(next ? { continue: next } : {}) });
      // A run still in the cluster is shown once, as live.
      const rows = got.runs.filter((row: RunRecord) => !deps.cache.isLive(row.uid));
      const allowed = reads.filtered
        ? undefined
        : await deps.readable(new Set(rows.map((row) => row.namespace)));
      for (const row of rows) {
        if (allowed && !allowed.has(row.namespace)) continue;
        const summary = runOfRecord(row);
        if (!older(summary)) continue;
        picked.push(summary);
        archived += 1;
      }
      next = got.continue;
      if (!next || archived > limit) break;
    }
    archiveMore = next !== undefined;
  }

  picked.sort(newestFirst);
  const runs = picked.slice(0, limit);
  const last = runs.at(-1);
  const more = picked.length > limit || archiveMore;
  return more && last ? { runs, continue: encodeCursor(last) } : { runs };
}
