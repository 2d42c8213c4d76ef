/**
 * What both stores do alike before and after SQL: checking and normalizing a query, the
 * opaque `continue` token of keyset paging, and canonical times. A store that differs only in
 * its SQL cannot then disagree with the other about what a query means.
 */
import { ArchiveError, type RunQuery, type UsageQuery } from './types.js';

export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 1000;

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * An RFC 3339 time as the archive stores it: `Date#toISOString`, so that strings sort as the
 * instants they name (`…T10:00:00+02:00` and `…T08:00:00Z` are the same row position).
 */
export function canonicalTime(
  value: string,
  what: string,
  code: 'archive_query_invalid' | 'archive_record_invalid',
): string {
  // Date.parse accepts more than RFC 3339 ("2026", "May 1", and times without a zone, read
  // in the process's local zone): insist on a date, a time and a zone.
  const ms = RFC3339.test(value) ? Date.parse(value) : NaN;
  if (Number.isNaN(ms)) {
    throw new ArchiveError(
      code,
      `${what} "${value}" is not an RFC 3339 time (2026-01-02T03:04:05Z)`,
    );
  }
  return new Date(ms).toISOString();
}

/** The position after which the next page starts. */
export interface PageKey {
  createdAt: string;
  uid: string;
}

export function encodeContinue(key: PageKey): string {
  return Buffer.from(JSON.stringify([key.createdAt, key.uid]), 'utf8').toString('base64url');
}

export function decodeContinue(token: string): PageKey {
  const bad = (): ArchiveError =>
    new ArchiveError(
      'archive_query_invalid',
      `continue token "${token.slice(0, 80)}" is not one this archive gave out`,
    );
  if (!/^[A-Za-z0-9_-]+$/.test(token)) throw bad();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    throw bad();
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length !== 2 ||
    typeof parsed[0] !== 'string' ||
    typeof parsed[1] !== 'string'
  ) {
    throw bad();
  }
  try {
    return {
      createdAt: canonicalTime(parsed[0], 'continue', 'archive_query_invalid'),
      uid: parsed[1],
    };
  } catch {
    throw bad();
  }
}

/** A RunQuery checked and with its defaults applied; its `continue` token decoded. */
export interface NormalizedRunQuery extends Omit<RunQuery, 'includeLive' | 'limit' | 'continue'> {
  includeLive: boolean;
  limit: number;
  after?: PageKey;
}

export function normalizeRunQuery(query: RunQuery): NormalizedRunQuery {
  const limit = query.limit ?? DEFAULT_PAGE_SIZE;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_SIZE) {
    throw new ArchiveError(
      'archive_query_invalid',
      `limit ${String(limit)} is not a whole number from 1 to ${MAX_PAGE_SIZE}`,
    );
  }
  const out: NormalizedRunQuery = { includeLive: query.includeLive ?? true, limit };
  if (query.namespaces !== undefined) out.namespaces = [...new Set(query.namespaces)];
  if (query.workflow !== undefined) out.workflow = query.workflow;
  if (query.issue !== undefined) out.issue = query.issue;
  if (query.phase !== undefined) out.phase = query.phase;
  if (query.reason !== undefined) out.reason = query.reason;
  if (query.since !== undefined)
    out.since = canonicalTime(query.since, 'since', 'archive_query_invalid');
  if (query.until !== undefined)
    out.until = canonicalTime(query.until, 'until', 'archive_query_invalid');
  if (query.continue !== undefined) out.after = decodeContinue(query.continue);
  return out;
}

/** A UsageQuery's day range as a half-open range of canonical times, [from, to). */
export interface UsageWindow {
  namespaces?: readonly string[];
  workflow?: string;
  fromTime?: string;
  toTime?: string;
}

function day(value: string, what: string): Date {
  const ms = /^\d{4}-\d{2}-\d{2}$/.test(value) ? Date.parse(`${value}T00:00:00Z`) : NaN;
  if (Number.isNaN(ms)) {
    throw new ArchiveError('archive_query_invalid', `${what} "${value}" is not a day (YYYY-MM-DD)`);
  }
  return new Date(ms);
}

export function normalizeUsageQuery(query: UsageQuery): UsageWindow {
  const out: UsageWindow = {};
  if (query.namespaces !== undefined) out.namespaces = [...new Set(query.namespaces)];
  if (query.workflow !== undefined) out.workflow = query.workflow;
  if (query.from !== undefined) out.fromTime = day(query.from, 'from').toISOString();
  if (query.to !== undefined) {
    const end = day(query.to, 'to');
    end.setUTCDate(end.getUTCDate() + 1);
    out.toTime = end.toISOString();
  }
  return out;
}
