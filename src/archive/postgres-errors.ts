/**
 * What a failure of the PostgreSQL client means to the archiver: the database is away (retry
 * later, deletion waits), its disk is full (a condition of its own), the caller asked
 * something malformed, or the store itself has a bug (thrown as it is, never retried away).
 */
import { ArchiveError } from './types.js';

/** Node's socket errors that mean the server cannot be reached right now. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** pg's own messages for a connection that ended or timed out (no SQLSTATE, no errno). */
const CONNECTION_MESSAGES = [
  /connection terminated/i,
  /timeout exceeded when trying to connect/i,
  /query read timeout/i,
  /connection (?:timeout|timed out)/i,
  /client has encountered a connection error/i,
  /cannot use a pool after calling end/i,
  /the server does not support ssl/i,
  /server closed the connection unexpectedly/i,
];

/** SQLSTATEs of a malformed request from the caller rather than a database that is away. */
function isBadInput(sqlstate: string): boolean {
  // Class 22: data exception (an invalid timestamp, a value out of range).
  return sqlstate.startsWith('22');
}

/** SQLSTATEs that mean the store's own SQL is wrong: a bug to surface, not an outage. */
function isQueryBug(sqlstate: string): boolean {
  // Class 42 (syntax error, undefined table or column) but 42501, a missing privilege:
  // that is the operator's role, fixed by a GRANT, not by a new release.
  return sqlstate.startsWith('42') && sqlstate !== '42501';
}

function fields(error: unknown): { code?: string; message: string } {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return { code: typeof code === 'string' ? code : undefined, message: error.message };
  }
  return { message: String(error) };
}

/**
 * The error a store method rejects with. `location` (password already masked) says which
 * archive; the pg error stays the cause. A query bug is returned as it is.
 */
export function archiveErrorOf(error: unknown, location: string, doing: string): Error {
  if (error instanceof ArchiveError) return error;
  const { code, message } = fields(error);
  const where = `archive ${location}: ${doing}`;
  if (code === '53100') {
    return new ArchiveError(
      'archive_disk_full',
      `${where}: the database's disk is full (${message})`,
      {
        cause: error,
      },
    );
  }
  if (code !== undefined && NETWORK_CODES.has(code)) {
    return new ArchiveError(
      'archive_unavailable',
      `${where}: cannot reach PostgreSQL (${message})`,
      {
        cause: error,
      },
    );
  }
  if (code === undefined && CONNECTION_MESSAGES.some((pattern) => pattern.test(message))) {
    return new ArchiveError(
      'archive_unavailable',
      `${where}: PostgreSQL connection lost (${message})`,
      {
        cause: error,
      },
    );
  }
  if (code !== undefined && /^[0-9A-Z]{5}$/.test(code)) {
    if (code.startsWith('28')) {
      // pg's message names the user, never the password.
      return new ArchiveError(
        'archive_unavailable',
        `${where}: PostgreSQL refused the login (${message})`,
        {
          cause: error,
        },
      );
    }
    if (isBadInput(code)) {
      return new ArchiveError('archive_query_invalid', `${where}: ${message} (SQLSTATE ${code})`, {
        cause: error,
      });
    }
    if (isQueryBug(code)) return error instanceof Error ? error : new Error(message);
    return new ArchiveError('archive_unavailable', `${where}: ${message} (SQLSTATE ${code})`, {
      cause: error,
    });
  }
  return new ArchiveError('archive_unavailable', `${where}: ${message}`, { cause: error });
}
