import { z } from 'zod';
import {
  MAX_HOOK_TIMEOUT_MS,
  environment,
  hookCommand,
  integer,
  integerBetween,
  nonEmptyString,
  nullableString,
  oneOf,
  positiveInteger,
  stringList,
} from './config-fields.js';

/**
 * The front matter, section by section, with the snake_case keys a WORKFLOW.md uses and the
 * reference defaults. Each object's shape doubles as the list of known keys: anything else
 * in a section is reported as an unknown key.
 */

export const DEFAULT_ACTIVE_STATES = ['Todo', 'In Progress'];
export const DEFAULT_TERMINAL_STATES = ['Closed', 'Cancelled', 'Canceled', 'Duplicate', 'Done'];

/** Bridges that exist even when the front matter names no `agents.<kind>` block. */
export const DEFAULT_BRIDGE_COMMANDS: Readonly<Record<string, string>> = {
  codex: 'codex-acp',
  claude: 'claude-agent-acp',
};

export const trackerSection = z.object({
  kind: nonEmptyString().default('memory'),
  active_states: stringList().default(() => [...DEFAULT_ACTIVE_STATES]),
  terminal_states: stringList().default(() => [...DEFAULT_TERMINAL_STATES]),
  endpoint: nullableString().default(null),
  api_key: nullableString().default(null),
  project_slug: nullableString().default(null),
  assignee: nullableString().default(null),
  repository: nullableString().default(null),
  // Each entry is normalized with normalizeIssue afterwards, for its own error paths.
  issues: z.array(z.unknown(), { error: 'must be a list of issues' }).default(() => []),
});

export const pollingSection = z.object({
  interval_ms: positiveInteger().default(30_000),
});

export const workspaceSection = z.object({
  root: nullableString().default(null),
  isolation: oneOf(['per-agent', 'none']).default('per-agent'),
});

export const hooksSection = z.object({
  after_create: hookCommand().default(null),
  before_run: hookCommand().default(null),
  after_run: hookCommand().default(null),
  before_remove: hookCommand().default(null),
  timeout_ms: positiveInteger(MAX_HOOK_TIMEOUT_MS).default(60_000),
});

/** The only aliases in the whole front matter: camelCase spellings of the hooks keys. */
export const HOOK_KEY_ALIASES: Readonly<Record<string, keyof z.input<typeof hooksSection>>> = {
  afterCreate: 'after_create',
  beforeRun: 'before_run',
  afterRun: 'after_run',
  beforeRemove: 'before_remove',
  timeoutMs: 'timeout_ms',
};

export const agentSection = z.object({
  kind: nonEmptyString().default('codex'),
  max_concurrent_agents: positiveInteger().default(10),
  max_turns: positiveInteger().default(20),
  max_retry_backoff_ms: positiveInteger().default(300_000),
  ensemble_size: integerBetween(1, 100).default(1),
  skills: stringList().default(() => []),
});

/** The fixed keys of `agents`; every other key under it is an agent kind. */
export const agentsSection = z.object({
  turn_timeout_ms: positiveInteger().default(3_600_000),
  stall_timeout_ms: integer().default(300_000),
  response_timeout_ms: positiveInteger().default(60_000),
});

function makeBridgeSection(defaultCommand: string | undefined) {
  return z.object({
    bridge_command:
      defaultCommand === undefined ? nonEmptyString() : nonEmptyString().default(defaultCommand),
    env: environment().default(() => ({})),
  });
}

// Built once per default: zod compiles a schema on first use, so rebuilding it per parse is slow.
const bridgeSections = new Map<string | undefined, ReturnType<typeof makeBridgeSection>>();

/** `agents.<kind>`: a built-in kind has a default bridge command, a custom kind must name one. */
export function bridgeSection(defaultCommand: string | undefined) {
  let schema = bridgeSections.get(defaultCommand);
  if (schema === undefined) {
    schema = makeBridgeSection(defaultCommand);
    bridgeSections.set(defaultCommand, schema);
  }
  return schema;
}

export const workerSection = z.object({
  ssh_hosts: stringList().default(() => []),
  ssh_timeout_ms: positiveInteger().default(60_000),
});

export const TOP_LEVEL_SECTIONS = [
  'tracker',
  'polling',
  'workspace',
  'hooks',
  'agent',
  'agents',
  'worker',
] as const;
