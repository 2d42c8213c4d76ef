import type { Issue } from '../../workflow/issue.js';
import type { TrackerAdapter } from '../types.js';
import { type BoardSource, type BoardWarning, boardIssues, readBoard } from './board.js';
import {
  LOCAL_DEFAULT_CONFIG,
  type LocalTrackerConfig,
  boardDirectory,
  checkIdPrefix,
} from './settings.js';
import { createLocalWriter } from './writer.js';

export interface LocalTrackerOptions {
  /** tracker.path, tracker.id_prefix and the states; the defaults where not given. */
  config?: Partial<LocalTrackerConfig>;
  /** Read this directory instead of tracker.path (already resolved: nothing is expanded). */
  directory?: string;
  /** Read the board from file name → text (a ConfigMap's data) instead of a directory. */
  files?: Readonly<Record<string, string>>;
  /** Where `$VAR` in tracker.path is looked up; default process.env. */
  env?: NodeJS.ProcessEnv;
  /** What a relative tracker.path is relative to; default process.cwd(). */
  cwd?: string;
  /** Told about every file left off the board, and why; the poll goes on. */
  onWarning?: BoardWarning;
  /** The clock for comment times the agent's tools write; injectable for tests. */
  now?: () => Date;
}

const stateKey = (state: string | null): string => (state ?? '').trim().toLowerCase();

/** Where the board is read from: files win over a directory, which wins over tracker.path. */
function sourceOf(options: LocalTrackerOptions, config: LocalTrackerConfig): BoardSource {
  if (options.files !== undefined) return { kind: 'files', files: options.files };
  if (options.directory !== undefined) return { kind: 'directory', directory: options.directory };
  const directory = boardDirectory(
    config.path,
    options.env ?? process.env,
    options.cwd ?? process.cwd(),
  );
  return { kind: 'directory', directory };
}

/**
 * The `local` tracker: a board of Markdown issue files (docs/design.md#trackers). Settings are
 * checked when it is built; the board is read afresh on every fetch, so an edited file
 * counts from the next poll on.
 */
export function createLocalTracker(options: LocalTrackerOptions = {}): TrackerAdapter {
  const config: LocalTrackerConfig = { ...LOCAL_DEFAULT_CONFIG, ...options.config };
  const idPrefix = checkIdPrefix(config.idPrefix);
  const source = sourceOf(options, config);
  const warn = options.onWarning ?? (() => undefined);

  async function board(): Promise<Issue[]> {
    return boardIssues(await readBoard(source, idPrefix, warn), config);
  }

  async function inStates(states: readonly string[]): Promise<Issue[]> {
    const wanted = new Set(states.map(stateKey).filter((state) => state !== ''));
    if (wanted.size === 0) return [];
    return (await board()).filter((issue) => wanted.has(stateKey(issue.state)));
  }

  return {
    kind: 'local',
    fetchCandidates() {
      // Candidates are never terminal, even when a state is listed as both.
      const terminal = new Set(config.terminalStates.map(stateKey));
      return inStates(config.activeStates.filter((state) => !terminal.has(stateKey(state))));
    },
    fetchByStates: (states) => inStates(states),
    async fetchByIds(ids) {
      const wanted = new Set(ids);
      if (wanted.size === 0) return [];
      return (await board()).filter((issue) => wanted.has(issue.identifier));
    },
    writer: createLocalWriter({
      source,
      idPrefix,
      states: config,
      issues: board,
      now: options.now ?? (() => new Date()),
    }),
  };
}

/** The board's directory as the adapter would read it, for the writes of the agent's tools. */
export function localBoardDirectory(
  config: Partial<LocalTrackerConfig> = {},
  options: { env?: NodeJS.ProcessEnv; cwd?: string } = {},
): string {
  return boardDirectory(
    config.path ?? LOCAL_DEFAULT_CONFIG.path,
    options.env ?? process.env,
    options.cwd ?? process.cwd(),
  );
}
