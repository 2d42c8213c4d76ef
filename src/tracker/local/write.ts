import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { parseDocument } from 'yaml';
import { LorenzError } from '../../workflow/errors.js';
import {
  COMMENTS_HEADING,
  COMMENTS_MARKER,
  AGENT_AUTHOR,
  COMMENT_LINE,
  type LocalIssueFile,
  parseLocalIssue,
  splitFrontMatter,
} from './parse.js';
import { issueFilePattern } from './settings.js';

/** A board on disk, as the agent's tools will write to it. */
export interface LocalBoardLocation {
  directory: string;
  idPrefix: string;
}

function ioCode(error: unknown): string {
  return error instanceof Error && 'code' in error && typeof error.code === 'string'
    ? error.code
    : String(error);
}

/** The file of an issue id; an id that is not `<prefix><n>` could name any path, so is refused. */
function issuePath(board: LocalBoardLocation, id: string): string {
  const name = `${id}.md`;
  if (issueFilePattern(board.idPrefix).exec(name)?.[1] !== id) {
    throw new LorenzError(
      'tracker_status',
      `local tracker: ${JSON.stringify(id)} is not a board issue id`,
    );
  }
  return join(board.directory, name);
}

async function readIssueText(path: string, id: string): Promise<string> {
  try {
    return await fs.readFile(path, 'utf8');
  } catch (error) {
    if (ioCode(error) === 'ENOENT') {
      throw new LorenzError('tracker_status', `local tracker: no issue ${id} on the board`);
    }
    throw new LorenzError('tracker_request', `local tracker: cannot read ${id}: ${ioCode(error)}`);
  }
}

/**
 * Replace `path` with `text` through a temp file in the same directory and a rename, so a
 * reader (a poll, `git`) sees the old file or the new one, never a torn one. The temp name
 * starts with a dot and ends in `.tmp`, so a board never reads it as an issue.
 */
export async function writeFileAtomic(path: string, text: string): Promise<void> {
  const temp = join(dirname(path), `.${basename(path)}.${randomUUID()}.tmp`);
  try {
    const mode = await fs.stat(path).then(
      (stat) => stat.mode & 0o777,
      () => 0o644,
    );
    const handle = await fs.open(temp, 'wx', mode);
    try {
      await handle.writeFile(text, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.rename(temp, path);
  } catch (error) {
    await fs.rm(temp, { force: true });
    throw new LorenzError(
      'tracker_request',
      `local tracker: cannot write ${basename(path)}: ${ioCode(error)}`,
    );
  }
}

/**
 * Read, change and write back one issue file. Only a file that reads as an issue is
 * changed: rewriting a malformed one would hide what is wrong with it.
 */
async function editIssue(
  board: LocalBoardLocation,
  id: string,
  change: (text: string) => string | null,
): Promise<void> {
  const path = issuePath(board, id);
  const text = await readIssueText(path, id);
  parsedIssue(id, text);
  // null: nothing to change, so the file is left alone (no new inode, no mtime change).
  const changed = change(text);
  if (changed !== null) await writeFileAtomic(path, changed);
}

/** An issue file's text parsed; a malformed one is `tracker_response`. */
export function parsedIssue(id: string, text: string): LocalIssueFile {
  const parsed = parseLocalIssue(id, text);
  if (!parsed.ok) {
    throw new LorenzError(
      'tracker_response',
      `local tracker: ${id} is malformed: ${parsed.reason}`,
    );
  }
  return parsed.file;
}

/** One issue file, parsed; a missing file is `tracker_status`, a malformed one `tracker_response`. */
export async function readLocalIssue(
  board: LocalBoardLocation,
  id: string,
): Promise<LocalIssueFile> {
  return parsedIssue(id, await readIssueText(issuePath(board, id), id));
}

/**
 * Set an issue's `status`. The front matter is edited as a YAML document, so its other keys,
 * their order and its comments stay as they were; the body is kept byte for byte.
 */
export async function setLocalIssueStatus(
  board: LocalBoardLocation,
  id: string,
  status: string,
): Promise<void> {
  const value = status.trim();
  if (value === '' || /[\r\n]/.test(value)) {
    throw new LorenzError('tracker_status', 'local tracker: a status is one non-empty line');
  }
  await editIssue(board, id, (text) => {
    const { frontMatter, body } = splitFrontMatter(text);
    const document = parseDocument(frontMatter ?? '', { uniqueKeys: true });
    document.set('status', value);
    return `---\n${document.toString()}---\n${body}`;
  });
}

/**
 * Append `- <time> agent: <text>` to the comments section, opening the section (marker and
 * heading) on the first comment. The comment becomes one line: line breaks in it would end
 * it early and turn its remainder into Markdown of the issue.
 */
export async function appendLocalIssueComment(
  board: LocalBoardLocation,
  id: string,
  comment: string,
  now: () => Date = () => new Date(),
): Promise<void> {
  const line = `- ${now().toISOString()} ${AGENT_AUTHOR}: ${commentText(comment)}`;
  await editIssue(board, id, (current) => {
    const trimmed = current.trimEnd();
    const hasSection = splitFrontMatter(current)
      .body.split('\n')
      .some((row) => row.trim() === COMMENTS_MARKER);
    if (hasSection) return `${trimmed}\n${line}\n`;
    return `${trimmed}\n\n${COMMENTS_MARKER}\n${COMMENTS_HEADING}\n\n${line}\n`;
  });
}

/** A comment as one line: line breaks would end it early and leak the rest into the issue. */
function commentText(comment: string): string {
  const text = comment.replace(/\s+/g, ' ').trim();
  if (text === '') throw new LorenzError('tracker_status', 'local tracker: a comment needs text');
  return text;
}

/**
 * Replace the text of the `index`-th comment (1-based, in file order: the comment ids the
 * writer hands out) and keep its time, the only time a comment line has. Every other line,
 * line endings included, stays as it was.
 */
export async function replaceLocalIssueComment(
  board: LocalBoardLocation,
  id: string,
  index: number,
  comment: string,
): Promise<void> {
  const text = commentText(comment);
  let found = false;
  await editIssue(board, id, (current) => {
    const lines = current.split('\n');
    // The body is the tail of the file's lines; comments are only looked for there.
    const bodyStart = lines.length - splitFrontMatter(current).body.split('\n').length;
    const marker = lines.findIndex(
      (line, at) => at >= bodyStart && line.trim() === COMMENTS_MARKER,
    );
    let seen = 0;
    for (let at = marker === -1 ? lines.length : marker + 1; at < lines.length; at += 1) {
      const line = lines[at] ?? '';
      const match = COMMENT_LINE.exec(line.trimEnd());
      if (match?.[1] === undefined) continue;
      seen += 1;
      if (seen !== index) continue;
      // As on a hosted tracker, only one's own comments can be edited: a person's reply
      // (an `/approve`, say) is never the agent's to rewrite.
      if (match[2] !== AGENT_AUTHOR) {
        throw new LorenzError(
          'tracker_status',
          `local tracker: comment ${index} of ${id} is not the agent's`,
          { status: 403 },
        );
      }
      found = true;
      lines[at] = `- ${match[1]} ${AGENT_AUTHOR}: ${text}${line.endsWith('\r') ? '\r' : ''}`;
      return lines.join('\n');
    }
    return null;
  });
  if (!found) {
    throw new LorenzError('tracker_status', `local tracker: ${id} has no comment ${index}`);
  }
}

/** How many numbers a create tries when others take them first, before giving up. */
const CREATE_ATTEMPTS = 20;

export interface NewLocalIssue {
  title: string;
  description?: string | null;
  status?: string | null;
}

function newIssueText(issue: NewLocalIssue, createdAt: Date): string {
  const title = issue.title.replace(/\s+/g, ' ').trim();
  if (title === '')
    throw new LorenzError('tracker_status', 'local tracker: an issue needs a title');
  const document = parseDocument('');
  const status = issue.status?.trim() ?? '';
  if (/[\r\n]/.test(status)) {
    throw new LorenzError('tracker_status', 'local tracker: a status is one line');
  }
  if (status !== '') document.set('status', status);
  document.set('created_at', createdAt.toISOString());
  const description = issue.description?.trim() ?? '';
  return `---\n${document.toString()}---\n# ${title}\n${description === '' ? '' : `\n${description}\n`}`;
}

/**
 * Add `<prefix><n>.md` with the next free number. The file is written to a temp file and
 * hard-linked to its name: a link never replaces an existing file, so two creates at once
 * (two controllers, a person) never overwrite each other; the loser takes the next number.
 */
export async function createLocalIssue(
  board: LocalBoardLocation,
  issue: NewLocalIssue,
  now: () => Date = () => new Date(),
): Promise<string> {
  const text = newIssueText(issue, now());
  const pattern = issueFilePattern(board.idPrefix);
  await fs.mkdir(board.directory, { recursive: true }).catch((error: unknown) => {
    throw new LorenzError(
      'tracker_request',
      `local tracker: cannot create the board: ${ioCode(error)}`,
    );
  });
  const temp = join(board.directory, `.new-issue.${randomUUID()}.tmp`);
  try {
    await fs.writeFile(temp, text, { flag: 'wx', mode: 0o644 });
    for (let attempt = 0; attempt < CREATE_ATTEMPTS; attempt += 1) {
      const names = await fs.readdir(board.directory);
      const numbers = names.map((name) =>
        Number(pattern.exec(name)?.[1]?.slice(board.idPrefix.length) ?? 0),
      );
      const id = `${board.idPrefix}${Math.max(0, ...numbers) + 1}`;
      try {
        await fs.link(temp, join(board.directory, `${id}.md`));
        return id;
      } catch (error) {
        if (ioCode(error) !== 'EEXIST') throw error;
      }
    }
    throw new LorenzError(
      'tracker_request',
      'local tracker: every new issue number was taken; try again',
    );
  } catch (error) {
    if (error instanceof LorenzError) throw error;
    throw new LorenzError(
      'tracker_request',
      `local tracker: cannot create an issue: ${ioCode(error)}`,
    );
  } finally {
    await fs.rm(temp, { force: true });
  }
}
