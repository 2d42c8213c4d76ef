// What the HTTP trackers' adapters (GitHub, Jira, Linear) are built from: the same options,
// read the same way; only the config and the token's variable differ.
import type { WorkflowConfig } from '../workflow/config.js';
import type { TransportOptions } from './http.js';

/** The tracker keys an HTTP tracker's adapter reads: where, its key, the states, and its own. */
export type HttpTrackerConfig<Own extends keyof WorkflowConfig['tracker']> = Pick<
  WorkflowConfig['tracker'],
  'endpoint' | 'apiKey' | 'activeStates' | 'terminalStates' | Own
>;

export interface HttpTrackerOptions<Config> extends TransportOptions {
  config: Config;
  /**
   * The token itself (from the Workflow's Secret); else tracker.api_key, else the tracker's
   * variable (GITHUB_TOKEN, JIRA_API_TOKEN, LINEAR_API_KEY).
   */
  apiKey?: string;
  /** Where `$VAR` and the tracker's variable are looked up; default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Per request, the answer's body included; default 30 s. */
  timeoutMs?: number;
  maxPages?: number;
}

/** Where the tracker's settings look for its token: the options' key, else the environment. */
export function tokenSources(options: HttpTrackerOptions<unknown>): {
  apiKey: string | undefined;
  env: NodeJS.ProcessEnv;
} {
  return { apiKey: options.apiKey, env: options.env ?? process.env };
}
