// The real run-archive stores the integration files run against, each opened fresh: a
// SQLite file in a temp dir, and PostgreSQL on a loopback server of its own.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openPostgresArchive } from '../../src/archive/postgres.js';
import { openSqliteArchive } from '../../src/archive/sqlite.js';
import type { ArchiveStore } from '../../src/archive/types.js';
import { startPostgres } from './postgres.js';

export interface RealArchiveStore {
  name: 'SQLite' | 'PostgreSQL';
  open: () => Promise<ArchiveStore>;
}

/** A PostgreSQL archive on a server started for it: closing the store also stops the server. */
export async function openPostgresArchiveOnOwnServer(): Promise<ArchiveStore> {
  const server = await startPostgres();
  const archive = await openPostgresArchive(server.url);
  const closeStore = archive.close.bind(archive);
  archive.close = async () => {
    await closeStore();
    await server.stop();
  };
  return archive;
}

/** Both stores; `tempPrefix` names the SQLite file's temp dir after the file that uses it. */
export const realArchiveStores = (tempPrefix: string): RealArchiveStore[] => [
  {
    name: 'SQLite',
    open: async () =>
      openSqliteArchive(join(await mkdtemp(join(tmpdir(), tempPrefix)), 'archive.db')),
  },
  { name: 'PostgreSQL', open: openPostgresArchiveOnOwnServer },
];
