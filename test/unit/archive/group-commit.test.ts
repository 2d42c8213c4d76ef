// The SQLite archive's group commit, on real SQLite files: writes of one turn share one
// transaction, each caller hears only of its own write's fate, and what is acknowledged is
// committed (another connection sees it).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { createGroupCommit } from '../../../src/archive/group-commit.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function open() {
  const dir = mkdtempSync(join(tmpdir(), 'lorenz-group-commit-'));
  dirs.push(dir);
  const path = join(dir, 'archive.db');
  const db = new DatabaseSync(path);
  db.exec('PRAGMA journal_mode = WAL');
  db.exec('CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER NOT NULL)');
  const commits: string[] = [];
  // The real database, with its COMMITs counted.
  const counted = {
    exec(sql: string) {
      if (sql === 'COMMIT') commits.push(sql);
      db.exec(sql);
    },
    get isTransaction() {
      return db.isTransaction;
    },
  };
  const group = createGroupCommit(counted, (error) => new Error(`wrapped: ${String(error)}`));
  const insert = (k: string, v: number | null) => () =>
    void db.prepare('INSERT INTO t (k, v) VALUES (?, ?)').run(k, v);
  const rows = () => {
    const reader = new DatabaseSync(path, { readOnly: true });
    try {
      return (reader.prepare('SELECT k FROM t ORDER BY k').all() as { k: string }[]).map(
        (row) => row.k,
      );
    } finally {
      reader.close();
    }
  };
  return { db, group, insert, rows, commits };
}

describe('createGroupCommit', () => {
  it('commits the writes of one turn together, and each is visible once acknowledged', async () => {
    const { group, insert, rows, commits } = open();
    await Promise.all([
      group.run(insert('a', 1)),
      group.run(insert('b', 2)),
      group.run(insert('c', 3)),
    ]);
    expect(commits).toHaveLength(1);
    expect(rows()).toEqual(['a', 'b', 'c']);
    await group.run(insert('d', 4));
    expect(commits).toHaveLength(2);
    expect(rows()).toEqual(['a', 'b', 'c', 'd']);
  });

  it('keeps the good writes of a group with a bad one, and rejects only the bad one', async () => {
    const { group, insert, rows } = open();
    const results = await Promise.allSettled([
      group.run(insert('a', 1)),
      group.run(insert('bad', null)), // NOT NULL: refused
      group.run(insert('b', 2)),
    ]);
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const refused = results[1];
    expect(refused?.status === 'rejected' && String(refused.reason)).toMatch(
      /^Error: wrapped: .*NOT NULL/,
    );
    expect(rows()).toEqual(['a', 'b']);
  });

  it('commits what is queued at flush, before the turn ends', () => {
    const { db, group, insert, rows } = open();
    void group.run(insert('a', 1));
    expect(rows()).toEqual([]);
    group.flush();
    expect(db.isTransaction).toBe(false);
    expect(rows()).toEqual(['a']);
  });
});
