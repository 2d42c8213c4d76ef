import { LorenzError, isLorenzError } from './errors.js';
import { HOOK_NAMES, type HookName } from './events.js';
import { type Issue, normalizeIssue } from './issue.js';
import {
  DEFAULT_BRIDGE_COMMANDS,
  HOOK_KEY_ALIASES,
  TOP_LEVEL_SECTIONS,
  agentSection,
  agentsSection,
  bridgeSection,
  gitSection,
  hooksSection,
  pollingSection,
  trackerSection,
  workerSection,
  workspaceSection,
} from './config-schema.js';
import {
  type ConfigProblem,
  type RawMap,
  invalid,
  invalidAll,
  isMap,
  parseSection,
  sectionMap,
} from './config-sections.js';
import type { ApprovalsConfig } from './approvals-config.js';
import { parseApprovalsSection } from './approvals-section.js';
import { parseBudgetSection } from './budget-section.js';
import type { WorkflowBudget } from './budget.js';
import { type BoardComment, parseBoardComments } from './board-comments.js';
import type { ReviewConfig } from './review-config.js';
import { parseReviewSection } from './review-section.js';

export { type ConfigProblem, configProblems, settingErrorCode } from './config-sections.js';

/**
 * The normalized WORKFLOW.md configuration. Other layers code against these camelCase names;
 * the YAML spells them in snake_case (see config-schema.ts for keys and defaults).
 */
export interface WorkflowConfig {
  tracker: {
    kind: string;
    activeStates: string[];
    terminalStates: string[];
    endpoint: string | null;
    apiKey: string | null;
    projectSlug: string | null;
    /** Linear: project slug IDs; empty when not given. */
    projectSlugs: string[];
    /** Linear: project labels whose projects are polled; empty when not given. */
    projectLabels: string[];
    assignee: string | null;
    repository: string | null;
    /** GitHub: labels `<prefix><state>` name an issue's state (default `lorenz:`). */
    stateLabelPrefix: string;
    /** Local board: its directory (before `~`/`$VAR` expansion) and its file-name prefix. */
    path: string;
    idPrefix: string;
    /** Jira: the account email, the project key and an optional extra JQL clause. */
    email: string | null;
    projectKey: string | null;
    jql: string | null;
    /** Inline issues of the `memory` tracker, normalized. */
    issues: Issue[];
    /** Their `comments:` (board-comments.ts), one list per entry of `issues`. */
    issueComments: BoardComment[][];
  };
  polling: { intervalMs: number };
  workspace: {
    /** As written; root resolution (env, `~`, `$VAR`) happens in src/workspace. */
    root: string | null;
    isolation: 'per-agent' | 'none';
    /** `workspace.git`: null unless the front matter has the section. */
    git: GitWorkspaceConfig | null;
  };
  hooks: {
    afterCreate: string | null;
    beforeRun: string | null;
    afterRun: string | null;
    beforeRemove: string | null;
    timeoutMs: number;
  };
  agent: {
    kind: string;
    maxConcurrentAgents: number;
    /** Per-state caps, keyed by the state's trimmed, lower-cased name. */
    maxConcurrentAgentsByState: Record<string, number>;
    maxTurns: number;
    maxRetryBackoffMs: number;
    ensembleSize: number;
    skills: string[];
    /** `agent.approvals`: null unless the front matter has it (approvals-config.ts). */
    approvals: ApprovalsConfig | null;
    /** `agent.budget`: null unless the front matter has it (budget-section.ts). */
    budget: WorkflowBudget | null;
  };
  agents: {
    turnTimeoutMs: number;
    /** ≤ 0 disables the stall check. */
    stallTimeoutMs: number;
    /** How long to wait for a JSON-RPC answer that is not a prompt. */
    responseTimeoutMs: number;
    bridges: Record<string, AgentBridge>;
  };
  worker: {
    /** `[user@]host[:port]` entries, checked by parseSshHost. */
    sshHosts: string[];
    sshTimeoutMs: number;
    /** null: no limit per host. */
    maxConcurrentAgentsPerHost: number | null;
  };
  /** `review:`: null unless the front matter has the section (review-section.ts). */
  review: ReviewConfig | null;
}

export interface GitWorkspaceConfig {
  /** As written: a remote, or `owner/name` for repoTemplate; null fails the run (repo missing). */
  repo: string | null;
  repoTemplate: string | null;
  /** Liquid template over `issue`. */
  branch: string;
  /** Globs of branches never pushed from the workspace (besides the default, main, master). */
  protected: string[];
  depth: number;
  setupBinaries: string[];
  userName: string;
  userEmail: string;
}

export interface AgentBridge {
  bridgeCommand: string;
  env: Record<string, string>;
}

export interface ParsedConfig {
  config: WorkflowConfig;
  /** Non-fatal findings, e.g. `unknown key tracker.foo`. */
  warnings: string[];
}

/** Rename camelCase hook aliases to their snake_case keys; both spellings at once is an error. */
function resolveHookAliases(hooks: RawMap): { canonical: RawMap; written: Record<string, string> } {
  // Null-prototype maps: a key such as `constructor` or `__proto__` is just an unknown key.
  const canonical: RawMap = Object.create(null) as RawMap;
  const written: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [key, value] of Object.entries(hooks)) {
    const target = Object.hasOwn(HOOK_KEY_ALIASES, key) ? (HOOK_KEY_ALIASES[key] ?? key) : key;
    if (Object.hasOwn(canonical, target)) {
      throw invalid(
        `hooks.${target}`,
        `given twice (as ${written[target]} and ${key}); keep one spelling`,
      );
    }
    canonical[target] = value;
    written[target] = key;
  }
  return { canonical, written };
}

function parseBridges(
  agents: RawMap,
  context: { warnings: string[]; problems: ConfigProblem[] },
): Record<string, AgentBridge> {
  const fixed = new Set(Object.keys(agentsSection.shape));
  const kinds = new Set([
    ...Object.keys(DEFAULT_BRIDGE_COMMANDS),
    ...Object.keys(agents).filter((key) => !fixed.has(key)),
  ]);
  const bridges: [string, AgentBridge][] = [];
  for (const kind of [...kinds].sort()) {
    const path = `agents.${kind}`;
    const block = (Object.hasOwn(agents, kind) ? agents[kind] : undefined) ?? {};
    if (!isMap(block)) {
      context.problems.push({ path, rule: 'must be a map' });
      continue;
    }
    const defaultCommand = Object.hasOwn(DEFAULT_BRIDGE_COMMANDS, kind)
      ? DEFAULT_BRIDGE_COMMANDS[kind]
      : undefined;
    const parsed = parseSection(bridgeSection(defaultCommand), block, path, context);
    if (parsed) bridges.push([kind, { bridgeCommand: parsed.bridge_command, env: parsed.env }]);
  }
  // fromEntries defines own properties, so even a kind named `__proto__` stays a plain key.
  return Object.fromEntries(bridges);
}

function parseIssues(raw: unknown[]): Issue[] {
  return raw.map((entry, index) => {
    try {
      return normalizeIssue(entry, `tracker.issues[${index}]`);
    } catch (error) {
      // normalizeIssue already names the entry (`tracker.issues[0]: key "title" ...`).
      if (isLorenzError(error)) {
        throw new LorenzError('invalid_workflow_config', error.message, error.detail);
      }
      throw error;
    }
  });
}

/** The config field of each hook. */
export const HOOK_FIELDS: Readonly<
  Record<HookName, Exclude<keyof WorkflowConfig['hooks'], 'timeoutMs'>>
> = {
  after_create: 'afterCreate',
  before_run: 'beforeRun',
  after_run: 'afterRun',
  before_remove: 'beforeRemove',
};

function parseGitSection(value: unknown, warnings: string[]): GitWorkspaceConfig | null {
  if (value === undefined) return null;
  const path = 'workspace.git';
  // `git:` with nothing under it opts in with every default (and then names no repo).
  if (value !== null && !isMap(value)) throw invalid(path, 'must be a map');
  const problems: ConfigProblem[] = [];
  const git = parseSection(gitSection, value ?? {}, path, { warnings, problems });
  if (!git) throw invalidAll(problems);
  git.setup_binaries.forEach((binary, index) => {
    if (!/^[A-Za-z0-9][A-Za-z0-9._+-]*$/.test(binary)) {
      throw invalid(`${path}.setup_binaries[${index}]`, 'must be a binary name, not a path');
    }
  });
  return {
    repo: git.repo,
    repoTemplate: git.repo_template,
    branch: git.branch,
    protected: git.protected,
    depth: git.depth,
    setupBinaries: git.setup_binaries,
    userName: git.user_name,
    userEmail: git.user_email,
  };
}

function checkSharedWorkspace(config: WorkflowConfig): void {
  if (config.workspace.isolation !== 'none') return;
  if (config.workspace.git) {
    throw new LorenzError(
      'invalid_workflow_config',
      'workspace.isolation = "none" does not support workspace.git: every issue would share one clone',
      { path: 'workspace.git' },
    );
  }
  // HOOK_NAMES is in lifecycle order, which is the order the message lists them in.
  const configured = HOOK_NAMES.filter((name) => config.hooks[HOOK_FIELDS[name]] !== null);
  if (configured.length === 0) return;
  throw new LorenzError(
    'invalid_workflow_config',
    `workspace.isolation = "none" does not support hooks; remove ${configured.join(', ')}`,
    { path: 'workspace.isolation' },
  );
}

/**
 * Validate and normalize the front matter map. Unknown keys become warnings; invalid values
 * throw LorenzError `invalid_workflow_config` naming the key path and the rule.
 */
// eslint-disable-next-line max-lines-per-function -- maps every WORKFLOW.md section to its typed field in one place, in the order of the schema
export function parseConfig(raw: Record<string, unknown>): ParsedConfig {
  const warnings: string[] = [];
  const known = new Set<string>(TOP_LEVEL_SECTIONS);
  for (const key of Object.keys(raw)) {
    if (!known.has(key)) warnings.push(`unknown key ${key}`);
  }

  // Every section is validated before any error is thrown, so that one error lists them all.
  const problems: ConfigProblem[] = [];
  const context = { warnings, problems };
  const section = (key: string) => sectionMap(raw, key, problems);
  const tracker = parseSection(trackerSection, section('tracker'), 'tracker', context);
  const polling = parseSection(pollingSection, section('polling'), 'polling', context);
  const workspace = parseSection(workspaceSection, section('workspace'), 'workspace', context);
  const hookAliases = resolveHookAliases(section('hooks'));
  const hooks = parseSection(
    hooksSection,
    hookAliases.canonical,
    'hooks',
    context,
    hookAliases.written,
  );
  const agentRaw = section('agent');
  const agent = parseSection(agentSection, agentRaw, 'agent', context);
  const approvals = parseApprovalsSection(agentRaw.approvals, context);
  const budget = parseBudgetSection(agentRaw.budget, context);
  const agentsRaw = section('agents');
  const fixedAgentKeys = Object.fromEntries(
    Object.keys(agentsSection.shape)
      .filter((key) => Object.hasOwn(agentsRaw, key))
      .map((key) => [key, agentsRaw[key]]),
  );
  // Kind blocks are validated by parseBridges, so only the fixed keys go through here.
  const agents = parseSection(agentsSection, fixedAgentKeys, 'agents', context);
  const bridges = parseBridges(agentsRaw, context);
  const worker = parseSection(workerSection, section('worker'), 'worker', context);
  const review = parseReviewSection(raw.review, workspace, context);

  const bridgeInvalid = (kind: string) =>
    problems.some((problem) => problem.path.startsWith(`agents.${kind}`));
  if (agent && !Object.hasOwn(bridges, agent.kind) && !bridgeInvalid(agent.kind)) {
    problems.push({
      path: 'agent.kind',
      rule: `must name an agent kind with a bridge (${Object.keys(bridges).join(', ')}); got ${JSON.stringify(agent.kind)}`,
    });
  }
  if (!tracker || !polling || !workspace || !hooks || !agent || !agents || !worker) {
    throw invalidAll(problems);
  }
  if (problems.length > 0) throw invalidAll(problems);

  const config: WorkflowConfig = {
    tracker: {
      kind: tracker.kind,
      activeStates: tracker.active_states,
      terminalStates: tracker.terminal_states,
      endpoint: tracker.endpoint,
      apiKey: tracker.api_key,
      projectSlug: tracker.project_slug,
      projectSlugs: tracker.project_slugs,
      projectLabels: tracker.project_labels,
      assignee: tracker.assignee,
      repository: tracker.repository,
      stateLabelPrefix: tracker.state_label_prefix,
      path: tracker.path,
      idPrefix: tracker.id_prefix,
      email: tracker.email,
      projectKey: tracker.project_key,
      jql: tracker.jql,
      issues: parseIssues(tracker.issues),
      issueComments: parseBoardComments(tracker.issues),
    },
    polling: { intervalMs: polling.interval_ms },
    workspace: {
      root: workspace.root,
      isolation: workspace.isolation,
      git: parseGitSection(workspace.git, warnings),
    },
    hooks: {
      afterCreate: hooks.after_create,
      beforeRun: hooks.before_run,
      afterRun: hooks.after_run,
      beforeRemove: hooks.before_remove,
      timeoutMs: hooks.timeout_ms,
    },
    agent: {
      kind: agent.kind,
      maxConcurrentAgents: agent.max_concurrent_agents,
      maxConcurrentAgentsByState: Object.fromEntries(
        Object.entries(agent.max_concurrent_agents_by_state).map(([state, cap]) => [
          state.trim().toLowerCase(),
          cap,
        ]),
      ),
      maxTurns: agent.max_turns,
      maxRetryBackoffMs: agent.max_retry_backoff_ms,
      ensembleSize: agent.ensemble_size,
      skills: agent.skills,
      approvals,
      budget,
    },
    agents: {
      turnTimeoutMs: agents.turn_timeout_ms,
      stallTimeoutMs: agents.stall_timeout_ms,
      responseTimeoutMs: agents.response_timeout_ms,
      bridges,
    },
    worker: {
      sshHosts: worker.ssh_hosts,
      sshTimeoutMs: worker.ssh_timeout_ms,
      maxConcurrentAgentsPerHost: worker.max_concurrent_agents_per_host,
    },
    review,
  };
  checkSharedWorkspace(config);
  return { config, warnings };
}
