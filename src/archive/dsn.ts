/**
 * The archive's DSN (`--archive-dsn`): which store, and where. `sqlite:PATH` is the embedded
 * default (one file, one writer replica); `postgres://…` is for clusters that run more replicas.
 */
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { ArchiveError, type ArchiveStore } from './types.js';

export type ArchiveDsn = { kind: 'sqlite'; path: string } | { kind: 'postgres'; url: string };

const ACCEPTED =
  'expected sqlite:PATH (a relative or absolute file path; sqlite::memory: for a throwaway ' +
  'database) or postgres://USER:PASSWORD@HOST:PORT/DATABASE (postgresql:// also)';

/** The DSN with any password (in the URL's userinfo or a `password=` parameter) masked. */
export function maskDsn(dsn: string): string {
  return dsn
    .replace(/^([a-z][a-z0-9+.-]*:\/\/[^/?#@:]*:)[^/?#@]*@/i, '$1***@')
    .replace(/([?&]password=)[^&#]*/gi, '$1***');
}

/** Parses `--archive-dsn`; a DSN of no accepted form is an `archive_dsn_invalid` error. */
export function parseArchiveDsn(dsn: string): ArchiveDsn {
  const text = dsn.trim();
  const invalid = (why: string): ArchiveError =>
    new ArchiveError('archive_dsn_invalid', `archive DSN "${maskDsn(text)}" ${why}: ${ACCEPTED}`);
  if (text === '')
    throw new ArchiveError('archive_dsn_invalid', `archive DSN is empty: ${ACCEPTED}`);
  if (/^sqlite:/i.test(text)) {
    const path = text.slice('sqlite:'.length);
    // `sqlite://x` reads as a URL whose host is x: refuse it rather than guess a path.
    if (path.startsWith('//')) throw invalid('is not a file path (write sqlite:/abs/path)');
    if (path === '') throw invalid('names no file');
    return { kind: 'sqlite', path };
  }
  if (/^postgres(ql)?:\/\//i.test(text)) {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw invalid('is not a valid URL');
    }
    if (url.hostname === '' && !url.searchParams.has('host')) throw invalid('names no host');
    return { kind: 'postgres', url: text };
  }
  throw invalid('is of no known kind');
}

/**
 * Where `lorenz controller` archives without `--archive-dsn`: the user's cache directory
 * ($XDG_CACHE_HOME, which the XDG spec says to ignore when relative, else ~/.cache).
 */
export function defaultArchivePath(
  env: NodeJS.ProcessEnv = process.env,
  home: string = homedir(),
): string {
  const xdg = env.XDG_CACHE_HOME;
  const cache = xdg !== undefined && isAbsolute(xdg) ? xdg : join(home, '.cache');
  return join(cache, 'lorenz', 'archive.db');
}

/** Opens (and migrates) the store a DSN names. */
export async function openArchive(dsn: string): Promise<ArchiveStore> {
  const parsed = parseArchiveDsn(dsn);
  if (parsed.kind === 'sqlite') {
    const { openSqliteArchive } = await import('./sqlite.js');
    return openSqliteArchive(parsed.path);
  }
  // Loaded only when asked for: a SQLite controller never loads the PostgreSQL client.
  const { openPostgresArchive } = await import('./postgres.js');
  return openPostgresArchive(parsed.url);
}
