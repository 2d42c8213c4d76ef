import { readFile } from 'node:fs/promises';
import { LorenzError } from './errors.js';

/** What an errno means for a file someone named on the command line or in a resource. */
const REASONS: Record<string, string> = {
  ENOENT: 'no such file',
  ENOTDIR: 'a component of the path is not a directory',
  EISDIR: 'it is a directory, not a file',
  ELOOP: 'too many levels of symbolic links (a symlink loop)',
  ENAMETOOLONG: 'the name is too long for the file system',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EMFILE: 'too many open files',
  ENFILE: 'too many open files in the system',
  EIO: 'an I/O error',
};

/** Longer paths are shortened in messages: a 5000-character name must not fill a screen. */
const SHOWN_PATH_CHARS = 120;

/** A path for a one-line message: control characters escaped, very long ones shortened. */
export function displayPath(path: string): string {
  const escaped = JSON.stringify(path).slice(1, -1);
  if (escaped.length <= SHOWN_PATH_CHARS) return escaped;
  return `${escaped.slice(0, SHOWN_PATH_CHARS)}… (${path.length} characters)`;
}

/** Why a read failed, in words, with the errno in brackets (stable, greppable). */
export function readFailureReason(error: unknown): { errno: string | undefined; reason: string } {
  const errno = (error as NodeJS.ErrnoException | undefined)?.code;
  const known = errno === undefined ? undefined : REASONS[errno];
  if (known !== undefined) return { errno, reason: `${known} (${errno})` };
  const message = (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
  if (errno === undefined) return { errno, reason: message };
  // Node's text is `CODE: description, syscall 'path'`: keep the description only.
  const description = /^[A-Z0-9_]+: ([^,]+)/.exec(message)?.[1] ?? 'the read failed';
  return { errno, reason: `${description} (${errno})` };
}

/**
 * Read a UTF-8 file, turning every failure into `file_unreadable` with a one-line message
 * that names the file (as `<label> <path>`) and what was wrong, never a stack trace. The
 * errno stays in the detail, so callers can give a missing file a code of its own.
 */
export async function readTextFile(path: string, label: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    const { errno, reason } = readFailureReason(error);
    throw new LorenzError(
      'file_unreadable',
      `cannot read ${label} ${displayPath(path)}: ${reason}`,
      { path, errno },
    );
  }
}

/** Whether a `file_unreadable` error says the file is not there at all. */
export function isMissingFile(error: LorenzError): boolean {
  const errno = error.detail?.errno;
  return errno === 'ENOENT' || errno === 'ENOTDIR';
}
