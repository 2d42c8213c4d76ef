import { isAbsolute, resolve } from 'node:path';
import type { WorkflowConfig } from '../../workflow/config.js';
import { DEFAULT_ACTIVE_STATES, DEFAULT_TERMINAL_STATES } from '../../workflow/config-schema.js';
import { LorenzError } from '../../workflow/errors.js';
import { expandPath } from '../../workspace/paths.js';

/** Where a board lives when tracker.path is not set (docs/design.md#trackers). */
export const LOCAL_DEFAULT_PATH = '.lorenz/local';
/** The id prefix of issue files when tracker.id_prefix is not set. */
export const LOCAL_DEFAULT_ID_PREFIX = 'BOARD-';
/** What an id prefix may be (docs/design.md#trackers): part of file names, so nothing path-like. */
export const LOCAL_ID_PREFIX_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;

/** The tracker keys the local board reads. */
export type LocalTrackerConfig = Pick<
  WorkflowConfig['tracker'],
  'path' | 'idPrefix' | 'activeStates' | 'terminalStates'
>;

export const LOCAL_DEFAULT_CONFIG: LocalTrackerConfig = {
  path: LOCAL_DEFAULT_PATH,
  idPrefix: LOCAL_DEFAULT_ID_PREFIX,
  activeStates: DEFAULT_ACTIVE_STATES,
  terminalStates: DEFAULT_TERMINAL_STATES,
};

function invalid(message: string, key: string): LorenzError {
  return new LorenzError('invalid_tracker_config', `local tracker: ${message}`, { key });
}

export function checkIdPrefix(prefix: string): string {
  if (!LOCAL_ID_PREFIX_PATTERN.test(prefix)) {
    throw invalid(
      `tracker.id_prefix ${JSON.stringify(prefix)} must match ${LOCAL_ID_PREFIX_PATTERN.source}`,
      'tracker.id_prefix',
    );
  }
  return prefix;
}

/**
 * Matches `<prefix><n>.md` and captures the id. The prefix is checked against
 * LOCAL_ID_PREFIX_PATTERN first, so only `-` could mean anything to a regex, and outside a
 * character class it does not.
 */
export function issueFilePattern(prefix: string): RegExp {
  return new RegExp(`^(${checkIdPrefix(prefix)}[0-9]+)\\.md$`);
}

/**
 * The board's directory: tracker.path (`~`, `~/…` and a whole-value `$VAR` expanded as
 * workspace.root is), resolved against `cwd`. A `$VAR` that is unset would silently mean
 * "the working directory", so it is a config error instead.
 */
export function boardDirectory(path: string, env: NodeJS.ProcessEnv, cwd: string): string {
  const written = path.trim() === '' ? LOCAL_DEFAULT_PATH : path.trim();
  const expanded = expandPath(written, env);
  if (expanded === null || expanded === '') {
    throw invalid(
      `tracker.path ${written} expands to nothing (unset variable or HOME)`,
      'tracker.path',
    );
  }
  return isAbsolute(expanded) ? expanded : resolve(cwd, expanded);
}
