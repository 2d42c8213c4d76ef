import { encodeContinue, type NormalizedRunQuery, type PageKey } from './query.js';
import type { RunPage, RunRecord } from './types.js';

/** What differs between the stores' SQL for a page of runs: how values are bound. */
export interface RunListDialect {
  /** The placeholder of one value; the value joins the query's parameters, in order. */
  param: (value: unknown) => string;
  /** The test that the namespace is one of `namespaces` (never empty here). */
  namespaceIn: (namespaces: readonly string[], param: (value: unknown) => string) => string;
  /** A text value compared with a column (PostgreSQL's text refuses a NUL). */
  text: (value: string) => string;
}

/**
 * The SELECT of one page of runs, newest first, for both stores: the filters of the query,
 * the keyset after the last page's key (created_at, uid), and one row more than the page, so
 * that a next page is known to exist without a count.
 */
export function runListSql(q: NormalizedRunQuery, dialect: RunListDialect): string {
  const { param, text } = dialect;
  const where: string[] = [];
  if (q.namespaces !== undefined) where.push(dialect.namespaceIn(q.namespaces, param));
  if (q.workflow !== undefined) where.push(`workflow = ${param(text(q.workflow))}`);
  if (q.issue !== undefined) {
    // Positional placeholders (SQLite's ?) cannot be used twice: bind the value twice.
    where.push(
      `(issue_identifier = ${param(text(q.issue))} OR issue_id = ${param(text(q.issue))})`,
    );
  }
  if (q.phase !== undefined) where.push(`phase = ${param(text(q.phase))}`);
  if (q.reason !== undefined) where.push(`reason = ${param(text(q.reason))}`);
  if (q.since !== undefined) where.push(`created_at >= ${param(q.since)}`);
  if (q.until !== undefined) where.push(`created_at < ${param(q.until)}`);
  if (!q.includeLive) where.push('deleted_at IS NOT NULL');
  if (q.after !== undefined) {
    where.push(`(created_at, uid) < (${param(q.after.createdAt)}, ${param(q.after.uid)})`);
  }
  return (
    'SELECT uid, created_at, deleted_at, record FROM runs' +
    (where.length > 0 ? ` WHERE ${where.join(' AND ')}` : '') +
    ` ORDER BY created_at DESC, uid DESC LIMIT ${param(q.limit + 1)}`
  );
}

/** The page from the rows runListSql selected (up to limit + 1): its runs and continue token. */
export function runPageOf<Row>(
  rows: readonly Row[],
  limit: number,
  runOf: (row: Row) => RunRecord,
  keyOf: (row: Row) => PageKey,
): RunPage {
  const page = rows.slice(0, limit);
  const runs = page.map(runOf);
  const last = page.at(-1);
  return rows.length > limit && last !== undefined
    ? { runs, continue: encodeContinue(keyOf(last)) }
    : { runs };
}
