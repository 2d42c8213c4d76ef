import { z } from 'zod';
import {
  MAX_HOOK_TIMEOUT_MS,
  environment,
  hookCommand,
  integerBetween,
  nonEmptyString,
  nullableString,
  oneOf,
  positiveInteger,
  durationMs,
  integerAtMost,
  MAX_TIMER_MS,
  stringList,
} from './config-fields.js';
import { parseSshHost } from './ssh-host.js';
import {
  DEFAULT_CONTINUATION_PROMPT,
  DEFAULT_PR_BODY,
  DEFAULT_PR_TITLE,
} from './review-defaults.js';

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
  kind: nonEmptyString()
    .default('memory')
    .describe(
      'Tracker adapter: `memory` (issues listed inline, for tests and demos), `linear` (GraphQL; one of project_slugs, project_labels, project_slug), `github` (REST; repository, state labels), `jira` (Jira Cloud REST v3; endpoint, email, project_key) or `local` (a board of Markdown files in `path`).',
    ),
  active_states: stringList()
    .default(() => [...DEFAULT_ACTIVE_STATES])
    .describe(
      'States in which an issue is worked; continuation turns go on while the issue stays in one.',
    ),
  terminal_states: stringList()
    .default(() => [...DEFAULT_TERMINAL_STATES])
    .describe('States that end work on an issue and clean its workspace.'),
  endpoint: nullableString()
    .default(null)
    .describe(
      'Tracker API endpoint (Linear: https://api.linear.app/graphql; Jira: the site, https://<site>.atlassian.net).',
    ),
  api_key: nullableString()
    .default(null)
    .describe(
      'Tracker API key (Linear falls back to LINEAR_API_KEY, Jira to JIRA_API_TOKEN). Never reaches the agent.',
    ),
  project_slug: nullableString().default(null).describe('Tracker project to poll.'),
  // Linear's project selectors: exactly one of project_slug, project_slugs, project_labels.
  project_slugs: stringList()
    .default(() => [])
    .describe(
      'Linear: the projects to poll, by slug ID. One project selector only: this, `project_labels` or `project_slug`.',
    ),
  project_labels: stringList()
    .default(() => [])
    .describe(
      'Linear: poll every project that carries one of these project labels. One project selector only.',
    ),
  assignee: nullableString()
    .default(null)
    .describe("Only issues assigned to this user (`me`: the key's own user)."),
  repository: nullableString().default(null).describe('GitHub Issues: owner/name.'),
  // GitHub Issues has only open/closed; a label with this prefix names the Lorenz state.
  state_label_prefix: nonEmptyString()
    .default('lorenz:')
    .describe(
      'GitHub Issues (`kind: github`, REST; token from api_key, else GITHUB_TOKEN): a label `<prefix><state>` puts an issue in that state; open without one is the first active state, closed the first terminal state.',
    ),
  // The local board and Jira. id_prefix is checked by the adapter, so a bad prefix is a
  // tracker error (invalid_tracker_config) only when the local board is actually used.
  path: z
    .string({ error: 'must be a string' })
    .default('.lorenz/local')
    .describe(
      'Local board: the directory of `<id_prefix><n>.md` issue files, relative to the working directory; `~` and a whole-value `$VAR` are expanded.',
    ),
  id_prefix: z
    .string({ error: 'must be a string' })
    .default('BOARD-')
    .describe('Local board: the issue id prefix of its file names (`BOARD-3.md` is `BOARD-3`).'),
  email: nullableString()
    .default(null)
    .describe('Jira: the account email that goes with the API token (Basic auth).'),
  project_key: nullableString().default(null).describe('Jira: the project key to poll (`ENG`).'),
  jql: nullableString()
    .default(null)
    .describe('Jira: an extra JQL clause ANDed to the project scope (no ORDER BY).'),
  // Each entry is normalized with normalizeIssue afterwards, for its own error paths.
  issues: z
    .array(z.unknown(), { error: 'must be a list of issues' })
    .default(() => [])
    .describe("The `memory` tracker's issues, each with the snake_case issue keys."),
});

export const pollingSection = z.object({
  interval_ms: durationMs().default(30_000).describe('How often the tracker is polled.'),
});

export const workspaceSection = z.object({
  root: nullableString()
    .default(null)
    .describe(
      'Workspace root; LORENZ_WORKSPACE_ROOT wins; default `<tmpdir>/lorenz_workspaces`. `~`, `~/…` and a whole-value `$VAR` are expanded.',
    ),
  isolation: oneOf(['per-agent', 'none'])
    .default('per-agent')
    .describe(
      '`per-agent`: a directory per issue (and slot); `none`: every issue in the root itself, no hooks.',
    ),
  // Validated on its own (gitSection) so that its errors and unknown keys name workspace.git.*.
  git: z
    .unknown()
    .optional()
    .describe(
      'Opt-in: each new workspace is a clone of a repository, on the issue’s own branch (the `workspace.git.*` keys below).',
    ),
});

/** The default branch name: the issue's identifier, then its title as a slug. */
export const DEFAULT_GIT_BRANCH_TEMPLATE =
  'lorenz/{{ issue.identifier | downcase }}-{{ issue.title | slug }}';
/** What a repository's `.lorenz/workspace.yml` steps may run, unless the workflow says otherwise. */
export const DEFAULT_SETUP_BINARIES = ['git', 'node', 'npm', 'pnpm', 'mise'];

/**
 * `workspace.git`: opt-in. When present, every new workspace is a clone of `repo` on the
 * issue's own branch, with credentials scoped to the remote's host and pushes to protected
 * branches refused (see src/workspace/git).
 */
export const gitSection = z.object({
  repo: nullableString()
    .default(null)
    .describe(
      'The repository to clone: an https or ssh remote (`https://github.com/acme/web.git`, `git@gitlab.com:acme/web.git`), or `owner/name` expanded through `repo_template`. Missing: the run fails `workspace_repo_missing`.',
    ),
  repo_template: nullableString()
    .default(null)
    .describe(
      'Expands a short `owner/name` repo into a clone address; a Liquid template over `repo`, `owner` and `name` (`https://github.com/{{ repo }}.git`). Without it a short repo fails `workspace_repo_no_clone_address`: no host is guessed.',
    ),
  branch: nonEmptyString()
    .default(DEFAULT_GIT_BRANCH_TEMPLATE)
    .describe(
      "The issue's branch: a Liquid template over `issue` (filter `slug`: lower-case words joined by `-`). Worked out once per run (an IssueRun keeps it in its status).",
    ),
  protected: stringList()
    .default(() => [])
    .describe(
      'Branch globs (`release/*`) that cannot be pushed from the workspace, besides the default branch, `main` and `master`.',
    ),
  depth: positiveInteger()
    .default(50)
    .describe('Commits fetched per branch (a shallow clone of the last 50 by default).'),
  setup_binaries: stringList()
    .default(() => [...DEFAULT_SETUP_BINARIES])
    .describe(
      "Binaries a repository's `.lorenz/workspace.yml` setup and teardown steps may run (by name, never a path).",
    ),
  user_name: nonEmptyString()
    .default('Lorenz')
    .describe('Committer name set in the clone (merges Lorenz makes, and the agent’s commits).'),
  user_email: nonEmptyString()
    .default('lorenz@localhost')
    .describe('Committer email set in the clone.'),
});

export const hooksSection = z.object({
  after_create: hookCommand()
    .default(null)
    .describe('Runs once when the workspace directory is new (fail-fast). Alias afterCreate.'),
  before_run: hookCommand()
    .default(null)
    .describe("Runs before each attempt's agent session (fail-fast). Alias beforeRun."),
  after_run: hookCommand()
    .default(null)
    .describe('Runs after each attempt, whatever its outcome (best-effort). Alias afterRun.'),
  before_remove: hookCommand()
    .default(null)
    .describe('Runs before the workspace is removed (best-effort). Alias beforeRemove.'),
  timeout_ms: positiveInteger(MAX_HOOK_TIMEOUT_MS)
    .default(60_000)
    .describe(
      'Bound on every hook (≤ 604800000): SIGTERM to the group, SIGKILL 5000 ms later. Alias timeoutMs.',
    ),
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
  kind: nonEmptyString().default('codex').describe('Which `agents.<kind>` bridge runs the agent.'),
  max_concurrent_agents: positiveInteger()
    .default(10)
    .describe('Runs at once across the workflow; ensemble slots count.'),
  max_concurrent_agents_by_state: z
    .record(z.string(), positiveInteger(), {
      error: 'must be a map of state names to positive integers',
    })
    .default(() => ({}))
    .describe(
      'Runs at once per tracker state (names compared trimmed, case-insensitively); ensemble slots count.',
    ),
  max_turns: positiveInteger()
    .default(20)
    .describe('Turns per attempt: the first gets the prompt, later ones the continuation prompt.'),
  max_retry_backoff_ms: durationMs()
    .default(300_000)
    .describe('Cap on the retry backoff after a failure.'),
  ensemble_size: integerBetween(1, 100)
    .default(1)
    .describe('Slots per issue unless an `ensemble:<n>` label says otherwise.'),
  skills: stringList()
    .default(() => [])
    .describe('Directories copied into each workspace at `.lorenz/skills/<basename>`.'),
  // Validated on its own (approvals-section.ts), so its errors name agent.approvals.*.
  approvals: z
    .unknown()
    .optional()
    .describe(
      "Opt-in: the agent's permission requests by rule (allow, deny, or ask a person on the issue), its questions, `/steer` and `/stop` (the `agent.approvals.*` keys below; docs/approvals.md).",
    ),
  // Validated on its own (budget-section.ts), so its errors name agent.budget.*.
  budget: z
    .unknown()
    .optional()
    .describe(
      'Spend limits per attempt, run, issue and Workflow day, in tokens and/or cost, enforced while the agent runs (docs/budgets.md).',
    ),
});

/** The fixed keys of `agents`; every other key under it is an agent kind. */
export const agentsSection = z.object({
  turn_timeout_ms: durationMs().default(3_600_000).describe('Hard bound on one agent turn.'),
  stall_timeout_ms: integerAtMost(MAX_TIMER_MS)
    .default(300_000)
    .describe('Cancel a turn after this much silence from the agent; ≤ 0 disables.'),
  response_timeout_ms: durationMs()
    .default(60_000)
    .describe("Bound on the bridge's answer to any request other than a prompt."),
});

function makeBridgeSection(defaultCommand: string | undefined) {
  return z.object({
    bridge_command: (defaultCommand === undefined
      ? nonEmptyString()
      : nonEmptyString().default(defaultCommand)
    ).describe('Command that starts the ACP bridge, run with `bash -lc` in the workspace.'),
    env: environment()
      .default(() => ({}))
      .describe('Extra environment for the bridge.'),
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
  ssh_hosts: stringList()
    .superRefine((hosts, context) => {
      hosts.forEach((host, index) => {
        const parsed = parseSshHost(host);
        if ('error' in parsed)
          context.addIssue({ code: 'custom', path: [index], message: parsed.error });
      });
    })
    .default(() => [])
    .describe(
      'SSH workers, each `[user@]host[:port]` (`[::1]:2222` for IPv6): the workspace, hooks and agent run on a host, for `lorenz run` the first that answers, for an IssueRun the one the controller chose for the slot (least loaded; the Workflow needs `spec.worker.sshKeySecretRef`). Empty: everything runs where Lorenz runs.',
    ),
  max_concurrent_agents_per_host: positiveInteger()
    .nullable()
    .default(null)
    .describe(
      "At most this many agents at once on one SSH worker (the controller counts the live slots of the Workflow's IssueRuns; a slot with no room waits `SshHostsBusy`); unset: no limit per host.",
    ),
  ssh_timeout_ms: durationMs()
    .default(60_000)
    .describe(
      'Bound on SSH operations: connecting, each file operation and each skills transfer. A positive integer.',
    ),
});

export const TOP_LEVEL_SECTIONS = [
  'tracker',
  'polling',
  'workspace',
  'hooks',
  'agent',
  'agents',
  'worker',
  'review',
] as const;

/** A Liquid template: any text that is not blank, kept as written (it is parsed at load). */
function templateText() {
  const rule = 'must be a non-empty string (a Liquid template)';
  return z.string({ error: rule }).refine((text) => text.trim() !== '', { error: rule });
}

/** The shortest `review.poll_interval_ms`: an open pull request is read back at most this often. */
export const MIN_REVIEW_POLL_INTERVAL_MS = 5_000;

/**
 * `review:`: opt-in (it needs `workspace.git`). The controller opens a pull request for the
 * issue branch and brings the agent back on review feedback (src/workflow/review-section.ts).
 */
export const reviewSection = z.object({
  host: oneOf(['github', 'gitlab'])
    .nullable()
    .default(null)
    .describe(
      'The code host: `github` or `gitlab`; null: worked out from the clone address of `workspace.git.repo` (github.com, gitlab.com).',
    ),
  api_url: z
    .string({ error: 'must be an http(s) URL or null' })
    .refine((text) => /^https?:\/\/[^\s/]+/.test(text.trim()), {
      error: 'must be an http(s) URL or null',
    })
    .nullable()
    .default(null)
    .describe(
      "The host's API root (GitHub Enterprise, self-hosted GitLab); null: the public host's, or `<origin>/api/v3` (GitHub) / `<origin>/api/v4` (GitLab).",
    ),
  pr_title: templateText()
    .default(DEFAULT_PR_TITLE)
    .describe(
      "Liquid over `issue`, `branch`, `base` and `summary` (docs/review-prompts.md): the pull request's title, made one line, trimmed, at most 256 characters.",
    ),
  pr_body: templateText()
    .default(DEFAULT_PR_BODY)
    .describe(
      "Liquid over `issue`, `branch`, `base` and `summary`: the pull request's body (at most 60000 characters). The default links the issue and gives the run's summary.",
    ),
  draft: z
    .boolean({ error: 'must be true or false' })
    .default(false)
    .describe('Open the pull request as a draft while the issue is active; ready when it leaves.'),
  max_rounds: integerBetween(1, 20)
    .default(3)
    .describe('Review rounds (continuation attempts on feedback) at most; then the loop stops.'),
  on_approved: nonEmptyString()
    .nullable()
    .default(null)
    .describe(
      'State the issue moves to when the pull request is approved with its required checks green; null: none.',
    ),
  on_merged: nonEmptyString()
    .nullable()
    .default(null)
    .describe(
      'State the issue moves to when the pull request is merged (unless it is already terminal); null: none.',
    ),
  required_checks: z
    .array(nonEmptyString(), { error: 'must be a list of strings' })
    .default(() => [])
    .describe('Check names that must succeed; empty: every check on the head commit counts.'),
  continuation_prompt: templateText()
    .default(DEFAULT_CONTINUATION_PROMPT)
    .describe(
      'Liquid over `issue`, `attempt`, `ensemble`, `review` and `checks`: the prompt of a review round. The default lists the review state, each comment and each failed check, quoted between markers, and asks for a fix on the same branch (docs/review-prompts.md).',
    ),
  poll_interval_ms: integerBetween(MIN_REVIEW_POLL_INTERVAL_MS, MAX_TIMER_MS)
    .default(60_000)
    .describe('How often an open pull request is read back when no webhook wakes it.'),
});
