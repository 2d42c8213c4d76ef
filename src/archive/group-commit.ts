// Group commit for the SQLite archive. node:sqlite is synchronous: each write's COMMIT
// waits for its fsync on the controller's only thread (≈ 10 ms a run on a loaded disk, every
// controller stalled meanwhile, and 1000 deletions took 30–50 s). Writes that arrive in the
// same turn of the event loop go into one transaction with one sync; each caller's promise
// settles only after that COMMIT, so what is acknowledged is as durable as before.

export interface TransactionalDb {
  exec(sql: string): void;
  readonly isTransaction: boolean;
}

export interface GroupCommit {
  /** Runs `work` inside the next group's transaction; resolves once it is committed. */
  run(work: () => void): Promise<void>;
  /** Commits what is queued now (before closing the database). */
  flush(): void;
}

interface Pending {
  work: () => void;
  resolve: () => void;
  reject: (error: unknown) => void;
}

export function createGroupCommit(
  db: TransactionalDb,
  /** How a failed write's error reaches its caller (e.g. as a typed archive error). */
  wrap: (error: unknown) => unknown,
): GroupCommit {
  let queue: Pending[] = [];
  let scheduled = false;

  const rollback = () => {
    try {
      // SQLite may have rolled back already (SQLITE_FULL does, for some statements).
      if (db.isTransaction) db.exec('ROLLBACK');
    } catch {
      // The database is gone (closed, or its file removed): nothing is left to undo.
    }
  };

  /** One transaction for all of them; false (nothing kept) when any of them failed. */
  const commitTogether = (batch: readonly Pending[]): boolean => {
    try {
      db.exec('BEGIN IMMEDIATE');
      for (const item of batch) item.work();
      db.exec('COMMIT');
    } catch {
      rollback();
      return false;
    }
    for (const item of batch) item.resolve();
    return true;
  };

  const commitAlone = (item: Pending) => {
    try {
      db.exec('BEGIN IMMEDIATE');
      item.work();
      db.exec('COMMIT');
      item.resolve();
    } catch (error) {
      rollback();
      item.reject(wrap(error));
    }
  };

  const flush = () => {
    scheduled = false;
    const batch = queue;
    queue = [];
    if (batch.length === 0) return;
    // A group with a failing write is undone and its writes go one by one: the others are
    // kept, and only the failing ones' callers hear of it.
    if (batch.length === 1 || !commitTogether(batch)) for (const item of batch) commitAlone(item);
  };

  return {
    run(work) {
      return new Promise<void>((resolve, reject) => {
        queue.push({ work, resolve, reject });
        if (!scheduled) {
          scheduled = true;
          setImmediate(flush);
        }
      });
    },
    flush,
  };
}
