import { type Dirent, promises as fs } from 'node:fs';
import { join } from 'node:path';
import { type Issue, type IssueInput, normalizeIssue } from '../../workflow/issue.js';
import { LorenzError } from '../../workflow/errors.js';
import { type LocalIssueFile, parseLocalIssue } from './parse.js';
import { issueFilePattern } from './settings.js';

/**
 * A larger issue file is a mistake (a log pasted in, a binary renamed), not an issue; and a
 * ConfigMap holds 1 MiB in all, so a board in one never comes near this.
 */
export const LOCAL_MAX_FILE_BYTES = 1024 * 1024;

/** The state an issue counts as when its status is none of the configured states. */
export const BACKLOG_STATE = 'Backlog';
const BACKLOG_TYPE = 'backlog';

/** Where a board is read from: a directory, or file name → text (a ConfigMap's data). */
export type BoardSource =
  | { kind: 'directory'; directory: string }
  | { kind: 'files'; files: Readonly<Record<string, string>> };

export interface BoardEntry {
  file: LocalIssueFile;
  /** The file's mtime (directories only), for issues without created_at / updated_at. */
  mtime: string | null;
}

export type BoardWarning = (message: string) => void;

interface RawFile {
  id: string;
  name: string;
  text: string;
  mtime: string | null;
}

function ioCode(error: unknown): string | undefined {
  return error instanceof Error && 'code' in error && typeof error.code === 'string'
    ? error.code
    : undefined;
}

async function listDirectory(directory: string): Promise<Dirent[]> {
  try {
    return await fs.readdir(directory, { withFileTypes: true });
  } catch (error) {
    // No directory yet is a board with no issues: `lorenz` works before the first file.
    if (ioCode(error) === 'ENOENT') return [];
    if (ioCode(error) === 'ENOTDIR') {
      throw new LorenzError(
        'invalid_tracker_config',
        `local tracker: tracker.path ${directory} is not a directory`,
        { key: 'tracker.path' },
      );
    }
    throw new LorenzError(
      'tracker_request',
      `local tracker: cannot read ${directory}: ${ioCode(error) ?? String(error)}`,
    );
  }
}

async function readDirectory(
  directory: string,
  pattern: RegExp,
  warn: BoardWarning,
): Promise<RawFile[]> {
  const files: RawFile[] = [];
  for (const entry of await listDirectory(directory)) {
    const id = pattern.exec(entry.name)?.[1];
    // Symlinks and directories are "other files": a board is plain files only.
    if (id === undefined || !entry.isFile()) continue;
    const path = join(directory, entry.name);
    try {
      const stat = await fs.stat(path);
      if (stat.size > LOCAL_MAX_FILE_BYTES) {
        warn(`${entry.name}: skipped, larger than ${LOCAL_MAX_FILE_BYTES} bytes`);
        continue;
      }
      const text = await fs.readFile(path, 'utf8');
      files.push({ id, name: entry.name, text, mtime: stat.mtime.toISOString() });
    } catch (error) {
      // Removed or renamed between the listing and the read: gone from the board.
      if (ioCode(error) === 'ENOENT') continue;
      warn(`${entry.name}: skipped, cannot be read: ${ioCode(error) ?? String(error)}`);
    }
  }
  return files;
}

function fromMap(files: Readonly<Record<string, string>>, pattern: RegExp, warn: BoardWarning) {
  const raw: RawFile[] = [];
  for (const [name, text] of Object.entries(files)) {
    const id = pattern.exec(name)?.[1];
    if (id === undefined) continue;
    if (Buffer.byteLength(text) > LOCAL_MAX_FILE_BYTES) {
      warn(`${name}: skipped, larger than ${LOCAL_MAX_FILE_BYTES} bytes`);
      continue;
    }
    raw.push({ id, name, text, mtime: null });
  }
  return raw;
}

/**
 * Every issue file of the board, parsed, in id order. A file that does not parse is left out
 * and reported through `warn`; the rest of the board is read as usual.
 */
export async function readBoard(
  source: BoardSource,
  idPrefix: string,
  warn: BoardWarning,
): Promise<BoardEntry[]> {
  const pattern = issueFilePattern(idPrefix);
  const raw =
    source.kind === 'directory'
      ? await readDirectory(source.directory, pattern, warn)
      : fromMap(source.files, pattern, warn);
  const entries: BoardEntry[] = [];
  for (const file of raw) {
    const parsed = parseLocalIssue(file.id, file.text);
    if (!parsed.ok) {
      warn(`${file.name}: skipped, ${parsed.reason}`);
      continue;
    }
    entries.push({ file: parsed.file, mtime: file.mtime });
  }
  return entries.sort((a, b) => a.file.id.localeCompare(b.file.id, 'en', { numeric: true }));
}

export interface BoardStates {
  activeStates: readonly string[];
  terminalStates: readonly string[];
}

const stateKey = (state: string): string => state.trim().toLowerCase();

/**
 * A status names one of the configured states (any case, any spacing; the configured
 * spelling is kept) or counts as backlog. Known states carry no type: a board has none, and
 * the dispatch policy then takes the first active state as the unstarted one.
 */
function stateOf(status: string | null, states: BoardStates) {
  const known = [...states.activeStates, ...states.terminalStates];
  const match = status === null ? undefined : known.find((s) => stateKey(s) === stateKey(status));
  return match === undefined
    ? { state: BACKLOG_STATE, state_type: BACKLOG_TYPE }
    : { state: match.trim(), state_type: null };
}

/** The board's issues, normalized; blockers carry the state of the board issue they name. */
export function boardIssues(entries: readonly BoardEntry[], states: BoardStates): Issue[] {
  const byId = new Map(entries.map((entry) => [entry.file.id, stateOf(entry.file.status, states)]));
  const issues: Issue[] = [];
  for (const { file, mtime } of entries) {
    const input: IssueInput = {
      id: file.id,
      identifier: file.id,
      title: file.title,
      description: file.description,
      priority: file.priority,
      ...stateOf(file.status, states),
      labels: file.labels,
      // A blocker missing from the board has no state, and so counts as open.
      blocked_by: file.blockedBy.map((id) => ({
        id,
        identifier: id,
        state: byId.get(id)?.state ?? null,
        state_type: byId.get(id)?.state_type ?? null,
      })),
      created_at: file.createdAt ?? mtime,
      updated_at: file.updatedAt ?? mtime,
    };
    issues.push(normalizeIssue(input, `local issue ${file.id}`));
  }
  return issues;
}
