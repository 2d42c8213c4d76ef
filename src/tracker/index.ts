import type { WorkflowConfig } from '../workflow/config.js';
import { LorenzError } from '../workflow/errors.js';
import { createGithubTracker } from './github/index.js';
import { createLinearTracker } from './linear/index.js';
import { createMemoryTracker } from './memory.js';
import type { TrackerAdapter } from './types.js';

export type { FetchLike, FetchOptions, TrackerAdapter } from './types.js';

/** The tracker kinds this build can poll. */
export const TRACKER_KINDS = ['memory', 'linear', 'github'] as const;

export interface TrackerOptions {
  /** The tracker key from the Workflow's Secret (the controller); else the config's. */
  apiKey?: string;
  /** Where `$VAR` keys are looked up; default process.env. */
  env?: NodeJS.ProcessEnv;
}

/**
 * The adapter a Workflow's configuration names. An unknown kind is
 * `unsupported_tracker_kind`, listing the kinds there are.
 */
export function createTracker(
  config: WorkflowConfig,
  options: TrackerOptions = {},
): TrackerAdapter {
  switch (config.tracker.kind) {
    case 'memory':
      return createMemoryTracker(config.tracker.issues, config.tracker);
    case 'linear':
      return createLinearTracker({
        config: config.tracker,
        ...(options.apiKey === undefined ? {} : { apiKey: options.apiKey }),
        ...(options.env === undefined ? {} : { env: options.env }),
      });
    case 'github':
      return createGithubTracker({
        config: config.tracker,
        ...(options.apiKey === undefined ? {} : { apiKey: options.apiKey }),
        ...(options.env === undefined ? {} : { env: options.env }),
      });
    default:
      throw new LorenzError(
        'unsupported_tracker_kind',
        `tracker.kind ${JSON.stringify(config.tracker.kind)} is not a tracker this build can poll (known: ${TRACKER_KINDS.join(', ')})`,
      );
  }
}
