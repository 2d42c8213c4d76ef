import { homedir } from 'node:os';
import { join } from 'node:path';
import { ArchiveError, type ArchiveStore } from './types.js';

/**
 * Opens the run archive a DSN names: `sqlite:PATH` or `postgres://…`. (This minimal
 * version knows the forms but has no store built in yet: the SQLite and PostgreSQL stores
 * replace it.)
 */
export async function openArchive(dsn: string): Promise<ArchiveStore> {
  if (dsn.startsWith('sqlite:') || /^postgres(ql)?:\/\//.test(dsn)) {
    throw new ArchiveError('archive_unavailable', `no store is built in for ${dsn.split(':')[0]}`);
  }
  throw new ArchiveError(
    'archive_dsn_invalid',
    `--archive-dsn ${JSON.stringify(dsn)}: expected sqlite:PATH or postgres://…`,
  );
}

/** Where `lorenz controller` archives on a laptop: the user's cache directory. */
export function defaultArchivePath(): string {
  const cache = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(cache, 'lorenz', 'archive.db');
}
