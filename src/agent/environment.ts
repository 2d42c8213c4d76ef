/**
 * The bridge's environment: the caller's, minus anything that belongs to the controller
 * (tracker credentials, variables the Workflow marks controller-only), plus the bridge's own
 * `env`. An agent runs arbitrary commands, so whatever it can read it can leak.
 */

/** Tracker credentials that never reach an agent, whatever the Workflow says. */
export const TRACKER_CREDENTIAL_VARIABLES: readonly string[] = ['LINEAR_API_KEY', 'GITHUB_TOKEN'];

export interface BridgeEnvironmentOptions {
  base: NodeJS.ProcessEnv;
  /** The tracker's resolved API key: every variable holding this value is dropped too. */
  trackerApiKey: string | null;
  /** Variable names the controller keeps for itself. */
  controllerOnly: readonly string[];
  /** The bridge's own variables from the Workflow (`agents.<kind>.env`). */
  bridgeEnv: Record<string, string>;
}

export function bridgeEnvironment(options: BridgeEnvironmentOptions): NodeJS.ProcessEnv {
  const withheld = new Set([...TRACKER_CREDENTIAL_VARIABLES, ...options.controllerOnly]);
  const secret = options.trackerApiKey;
  const env: NodeJS.ProcessEnv = {};
  // The bridge's own variables go through the same filter: not even the Workflow can hand
  // a tracker credential to the agent.
  for (const [name, value] of Object.entries({ ...options.base, ...options.bridgeEnv })) {
    if (value === undefined || withheld.has(name)) continue;
    if (secret && value === secret) continue;
    env[name] = value;
  }
  return env;
}
