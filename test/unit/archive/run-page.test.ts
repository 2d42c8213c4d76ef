// One page of runs, the same SQL for SQLite and PostgreSQL (src/archive/run-page.ts): only
// how a value is bound differs. The stores' own tests run it on real databases.
import { describe, expect, it } from 'vitest';
import { decodeContinue, normalizeRunQuery } from '../../../src/archive/query.js';
import { runListSql, runPageOf, type RunListDialect } from '../../../src/archive/run-page.js';
import type { RunQuery } from '../../../src/archive/types.js';

function sqlite(): RunListDialect & { params: unknown[] } {
  const params: unknown[] = [];
  return {
    params,
    param: (value) => (params.push(value), '?'),
    namespaceIn: (namespaces, param) => `namespace IN (${namespaces.map(param).join(', ')})`,
    text: (value) => value,
  };
}

function postgres(): RunListDialect & { params: unknown[] } {
  const params: unknown[] = [];
  return {
    params,
    param: (value) => (params.push(value), `$${params.length}`),
    namespaceIn: (namespaces, param) => `namespace = ANY(${param(namespaces)}::text[])`,
    text: (value) => value.replaceAll('\u0000', ''),
  };
}

const SELECT = 'SELECT uid, created_at, deleted_at, record FROM runs';
const ORDER = 'ORDER BY created_at DESC, uid DESC LIMIT';

describe('runListSql', () => {
  it.each<[string, RunQuery, string, unknown[], string]>([
    [
      'no filter: the default page and one more',
      {},
      `${SELECT} ${ORDER} ?`,
      [101],
      `${SELECT} ${ORDER} $1`,
    ],
    [
      'archived only, by workflow',
      { includeLive: false, workflow: 'wf', limit: 10 },
      `${SELECT} WHERE workflow = ? AND deleted_at IS NOT NULL ${ORDER} ?`,
      ['wf', 11],
      `${SELECT} WHERE workflow = $1 AND deleted_at IS NOT NULL ${ORDER} $2`,
    ],
    [
      'an issue by identifier or id: the value bound twice',
      { issue: 'ENG-1', limit: 1 },
      `${SELECT} WHERE (issue_identifier = ? OR issue_id = ?) ${ORDER} ?`,
      ['ENG-1', 'ENG-1', 2],
      `${SELECT} WHERE (issue_identifier = $1 OR issue_id = $2) ${ORDER} $3`,
    ],
    [
      'namespaces',
      { namespaces: ['a', 'b'], limit: 5 },
      `${SELECT} WHERE namespace IN (?, ?) ${ORDER} ?`,
      ['a', 'b', 6],
      `${SELECT} WHERE namespace = ANY($1::text[]) ${ORDER} $2`,
    ],
  ])('%s', (_name, query, sqliteSql, sqliteParams, postgresSql) => {
    const q = normalizeRunQuery(query);
    const lite = sqlite();
    expect(runListSql(q, lite)).toBe(sqliteSql);
    expect(lite.params).toEqual(sqliteParams);
    expect(runListSql(q, postgres())).toBe(postgresSql);
  });

  it('PostgreSQL drops a NUL from a compared value', () => {
    const pg = postgres();
    runListSql(normalizeRunQuery({ workflow: 'w\u0000f' }), pg);
    expect(pg.params[0]).toBe('wf');
  });
});

describe('runPageOf', () => {
  const rows = [1, 2, 3].map((n) => ({ uid: `u${n}`, created: `2026-01-0${n}T00:00:00Z` }));
  const page = (limit: number) =>
    runPageOf(
      rows,
      limit,
      (row) => ({ uid: row.uid }) as never,
      (row) => ({ createdAt: row.created, uid: row.uid }),
    );

  it.each([
    [3, ['u1', 'u2', 'u3'], undefined],
    [2, ['u1', 'u2'], { createdAt: '2026-01-02T00:00:00Z', uid: 'u2' }],
  ])('limit %i: runs %j, next after %j', (limit, uids, next) => {
    const result = page(limit);
    expect(result.runs.map((run) => (run as unknown as { uid: string }).uid)).toEqual(uids);
    const key = result.continue === undefined ? undefined : decodeContinue(result.continue);
    expect(key?.uid).toBe(next?.uid);
    expect(key && Date.parse(key.createdAt)).toBe(next && Date.parse(next.createdAt));
  });
});
