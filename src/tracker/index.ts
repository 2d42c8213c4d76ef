import type { WorkflowConfig } from '../workflow/config.js';
import { LorenzError } from '../workflow/errors.js';
import { createGithubTracker } from './github/index.js';
import { createJiraTracker } from './jira/index.js';
import { createLinearTracker } from './linear/index.js';
import { createLocalTracker } from './local/index.js';
import { createMemoryTracker } from './memory.js';
import type { TrackerAdapter } from './types.js';

export type {
  FetchLike,
  FetchOptions,
  NewIssue,
  TrackerAdapter,
  TrackerComment,
  TrackerWriter,
} from './types.js';

/** The tracker kinds this build can poll. */
export const TRACKER_KINDS = ['memory', 'linear', 'github', 'jira', 'local'] as const;

export interface TrackerOptions {
  /** The tracker key from the Workflow's Secret (the controller); else the config's. */
  apiKey?: string;
  /** Where `$VAR` keys are looked up; default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Local board: what a relative tracker.path is relative to; default process.cwd(). */
  cwd?: string;
  /** Told about each item an adapter leaves out (a malformed board file) and why. */
  onWarning?: (message: string) => void;
  /** Local board: its files (a ConfigMap's data) instead of a directory. */
  files?: Readonly<Record<string, string>>;
}

/** The options that are set, so optional properties are never set to undefined. */
function given<T extends object>(options: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(options).filter(([, value]) => value !== undefined),
  ) as Partial<T>;
}

/**
 * The adapter a Workflow's configuration names. An unknown kind is
 * `unsupported_tracker_kind`, listing the kinds there are.
 */
export function createTracker(
  config: WorkflowConfig,
  options: TrackerOptions = {},
): TrackerAdapter {
  const tokenOptions = given({ apiKey: options.apiKey, env: options.env });
  switch (config.tracker.kind) {
    case 'memory':
      return createMemoryTracker(config.tracker.issues, config.tracker, {
        comments: config.tracker.issueComments,
      });
    case 'linear':
      return createLinearTracker({ config: config.tracker, ...tokenOptions });
    case 'github':
      return createGithubTracker({ config: config.tracker, ...tokenOptions });
    case 'jira':
      return createJiraTracker({ config: config.tracker, ...tokenOptions });
    case 'local':
      return createLocalTracker({
        config: config.tracker,
        ...given({
          env: options.env,
          cwd: options.cwd,
          onWarning: options.onWarning,
          files: options.files,
        }),
      });
    default:
      throw new LorenzError(
        'unsupported_tracker_kind',
        `tracker.kind ${JSON.stringify(config.tracker.kind)} is not a tracker this build can poll (known: ${TRACKER_KINDS.join(', ')})`,
      );
  }
}
