import { homedir } from 'node:os';
import { join } from 'node:path';
import { ArchiveError, type ArchiveStore } from './types.js';

/**
 * Placeholder of the DSN module on the readers' branch: the store helpers' version (SQLite
 * and PostgreSQL behind `openArchive`) replaces it at merge, with these same three exports.
 */
export type ArchiveDsn = { kind: 'sqlite'; path: string } | { kind: 'postgres'; url: string };

/** `sqlite:PATH` or `postgres://…` / `postgresql://…`. */
export function parseArchiveDsn(dsn: string): ArchiveDsn {
  if (dsn.startsWith('sqlite:') && dsn.length > 'sqlite:'.length)
    return { kind: 'sqlite', path: dsn.slice('sqlite:'.length) };
  if (/^postgres(ql)?:\/\//.test(dsn)) return { kind: 'postgres', url: dsn };
  throw new ArchiveError(
    'archive_dsn_invalid',
    `archive DSN '${dsn.replace(/:[^:@/]*@/, ':***@')}': want sqlite:PATH or postgres://…`,
  );
}

/** Where a controller without --archive-dsn (a laptop) keeps its archive. */
export function defaultArchivePath(): string {
  return join(homedir(), '.cache', 'lorenz', 'archive.db');
}

export async function openArchive(dsn: string): Promise<ArchiveStore> {
  const parsed = parseArchiveDsn(dsn);
  throw new ArchiveError('archive_unavailable', `no ${parsed.kind} store in this build`);
}
