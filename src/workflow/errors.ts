/** The codes an agent step fails with (src/agent/failures.ts's AgentFailure). */
export type AgentErrorCode =
  | 'agent_bridge_missing'
  | 'agent_bridge_exited'
  | 'agent_protocol_error'
  | 'agent_response_timeout'
  | 'acp_turn_failed'
  | 'turn_timeout'
  | 'turn_stalled'
  | 'turn_cancelled'
  | 'turn_input_required'
  | 'approval_required'
  | 'issue_state_unavailable'
  | 'budget_exceeded';

/**
 * Every failure the engine reports carries a stable code, so callers (the CLI, the runner,
 * the controller's status reasons) branch on the code and never on message text.
 */
export type LorenzErrorCode =
  // WORKFLOW.md and its config
  | 'missing_workflow_file'
  | 'file_unreadable'
  | 'workflow_parse_error'
  | 'workflow_front_matter_not_a_map'
  | 'invalid_workflow_config'
  | 'template_parse_error'
  | 'template_render_error'
  // issues given to `lorenz run` / IssueRuns
  | 'invalid_issue'
  // manifests given to `lorenz workflow validate`
  | 'invalid_manifest'
  | 'not_a_workflow_file'
  // workspaces
  | 'invalid_workspace_cwd'
  | 'workspace_is_root'
  | 'workspace_unsafe_symlink'
  | 'workspace_outside_root'
  | 'workspace_skill_source_symlink'
  | 'workspace_skill_source_unsupported'
  | 'workspace_skill_source_missing'
  // a workspace's tree digest (warm starts from snapshots: docs/snapshots.md)
  | 'workspace_tree_symlink_escapes'
  | 'workspace_tree_unsupported_file'
  | 'snapshot_digest_mismatch'
  | 'snapshot_tree_missing'
  | 'invalid_ssh_timeout'
  | 'ssh_connect'
  // git workspaces
  | 'workspace_repo_missing'
  | 'workspace_repo_no_clone_address'
  | 'workspace_branch_unresolved'
  | 'workspace_clone_failed'
  | 'workspace_setup_failed'
  | 'invalid_git_credentials'
  // hooks
  | 'hook_failed'
  | 'hook_timed_out'
  | 'hook_killed'
  // agent
  | AgentErrorCode
  // trackers (later)
  | 'unsupported_tracker_kind'
  | 'invalid_tracker_config'
  | 'missing_tracker_secret'
  | 'tracker_request'
  | 'tracker_status'
  | 'tracker_response'
  | 'tracker_pagination'
  | 'tracker_rate_limited'
  // code hosts (the review loop)
  | 'invalid_codehost_config'
  | 'codehost_request'
  | 'codehost_status'
  | 'codehost_response'
  | 'codehost_rate_limited'
  // runner inputs
  | 'input_digest_mismatch'
  // operator
  | 'invalid_pod_template';

/**
 * The code of a failed slot (SlotSummary, an agent step's result, the runner's termination
 * message): any LorenzErrorCode, or an outcome that no LorenzError is thrown for. Every
 * mapping from a code (status reason, exit code) is an exhaustive switch over this union or
 * LorenzErrorCode, so a new code does not compile until each mapping places it. The switches
 * list the same families (agent, tracker, code host) on purpose: a family mapped once for all
 * would let a new code take its family's place unseen (budget_exceeded has its own reason).
 */
export type SlotErrorCode =
  | LorenzErrorCode
  // the run was cancelled before or while the slot ran
  | 'cancelled'
  // the lifecycle caught something that is not a LorenzError
  | 'workspace_error'
  // the runner failed with something that is not a LorenzError
  | 'runner_failed'
  // the slot failed without a code
  | 'run_failed';

/**
 * What each code means, one line each, for people (docs/cli.md's error table is generated from
 * it). A Record, so that a code missing here, or one that is not a code, fails to compile.
 */
export const ERROR_CODE_MEANINGS: Record<SlotErrorCode, string> = {
  missing_workflow_file: 'The WORKFLOW.md file does not exist.',
  file_unreadable:
    'A file given to Lorenz (WORKFLOW.md, an issue file) cannot be read: a directory, a symlink loop, a name too long, no permission.',
  workflow_parse_error: "WORKFLOW.md's YAML front matter does not parse (line and column given).",
  workflow_front_matter_not_a_map:
    'The front matter is not a map of settings (a list, a scalar, null, a tagged value).',
  invalid_workflow_config: 'A setting has the wrong type or value (its key path and rule given).',
  template_parse_error:
    'The prompt or a hook template does not parse, or is longer than the parse limit.',
  template_render_error:
    'A template fails to render: an unknown variable or filter, or a render or memory limit.',
  invalid_issue: 'The issue is missing a required key or has one of the wrong type.',
  invalid_manifest:
    'A Workflow or IssueRun manifest that admission would refuse (the CRD schema or one of its rules), or a manifest file whose YAML does not parse (document, field and line given).',
  not_a_workflow_file:
    '`lorenz workflow validate` was given a file that is neither a WORKFLOW.md (no front matter) nor YAML holding Workflow or IssueRun documents.',
  invalid_workspace_cwd:
    'The workspace path is unusable (missing, not a directory, a control character).',
  workspace_is_root: 'A hook or the agent would run in the workspace root itself.',
  workspace_unsafe_symlink:
    'A symlink in the workspace path, or planted where skills go, leads elsewhere.',
  workspace_outside_root: 'The workspace path resolves outside the workspace root.',
  workspace_skill_source_symlink: 'An agent.skills source is, or contains, a symlink.',
  workspace_skill_source_unsupported: 'An agent.skills source is not a directory of regular files.',
  workspace_skill_source_missing: 'An agent.skills source does not exist.',
  workspace_tree_symlink_escapes:
    "A symlink in the workspace's tree leads outside it (an absolute target, `..` past the top, through another link, or a loop); the path and its target given.",
  workspace_tree_unsupported_file:
    "The workspace's tree holds something that is not a file, directory or symlink (a fifo, socket or device); its path given.",
  snapshot_digest_mismatch:
    "A workspace restored from a snapshot does not have the snapshot's digest (both digests given): refused before any hook.",
  snapshot_tree_missing:
    "A workspace restored from a snapshot holds neither the prepared tree (.lorenz-source/ at the volume root) nor the run's workspace: refused before any hook.",
  invalid_ssh_timeout:
    'worker.ssh_timeout_ms is not a positive integer (at most 2147483647): refused when the workflow loads, before any host is contacted.',
  ssh_connect:
    'An SSH worker could not be reached, refused the key, showed an unknown or changed host key, or dropped the connection mid-command (the host and the reason given).',
  workspace_repo_missing:
    'workspace.git is set but names no repository to clone (workspace.git.repo).',
  workspace_repo_no_clone_address:
    'workspace.git.repo is a short owner/name and no workspace.git.repo_template expands it; no host is guessed.',
  workspace_branch_unresolved:
    "The issue's branch name could not be worked out: workspace.git.branch renders empty or not a valid git branch name.",
  workspace_clone_failed:
    "Cloning workspace.git.repo, or checking out the issue's branch, failed (git's own message given); nothing of the clone is kept.",
  workspace_setup_failed:
    "A step of the repository's setup (.lorenz/workspace.yml, or inferred from its lock files) failed or is not allowed; the clone was discarded. Names the binary and the start of its output.",
  invalid_git_credentials:
    'The git credentials (--git-credentials, or the Secret spec.git.credentialsSecretRef names) cannot be read or parsed.',
  hook_failed: 'A fail-fast hook (after_create, before_run) exited non-zero or could not start.',
  hook_timed_out: 'A hook outlived hooks.timeout_ms (its process group was killed).',
  hook_killed:
    'A hook died of a signal, or was stopped because the run was cancelled or its Pod stopped.',
  agent_bridge_missing: 'The ACP bridge command is not found.',
  agent_bridge_exited: 'The ACP bridge exited during the session.',
  agent_protocol_error: 'The ACP bridge answered outside the protocol.',
  agent_response_timeout: 'The ACP bridge did not answer within agents.response_timeout_ms.',
  acp_turn_failed: 'The agent ended a turn with an error.',
  turn_timeout: 'A turn outlived agents.turn_timeout_ms.',
  turn_stalled: 'The agent was silent for agents.stall_timeout_ms.',
  turn_cancelled: 'The turn was cancelled (the run was cancelled).',
  turn_input_required: 'The agent asked for user input, which a run cannot give.',
  approval_required: 'The agent asked for an approval that policy does not grant.',
  issue_state_unavailable: 'The issue state could not be read before a continuation turn.',
  budget_exceeded:
    'A spend limit (agent.budget: attempt, run, issue or day) was crossed: the turn was cancelled; after_run still ran.',
  unsupported_tracker_kind: 'tracker.kind names no tracker adapter.',
  invalid_tracker_config: 'The tracker settings are incomplete or wrong.',
  missing_tracker_secret: 'The tracker credential is not set.',
  tracker_request: 'A request to the tracker failed (network).',
  tracker_status: 'The tracker answered with an error status.',
  tracker_response: "The tracker's answer is not what its API promises.",
  tracker_pagination: "The tracker's pages do not add up.",
  tracker_rate_limited: 'The tracker rate-limited the request.',
  invalid_codehost_config:
    'The review settings cannot name a code host (review.host, review.api_url, the clone address) or its token.',
  codehost_request: 'A request to the code host failed (network).',
  codehost_status: 'The code host answered with an error status.',
  codehost_response: "The code host's answer is not what its API promises.",
  codehost_rate_limited: 'The code host rate-limited the request.',
  input_digest_mismatch:
    "A run Pod's inputs differ from their manifest (tampered or torn), or are not the ones recorded on the Pod.",
  invalid_pod_template: "The Workflow's podTemplate asks for something run Pods may not have.",
  cancelled: 'The run was cancelled before or while the slot ran.',
  workspace_error: 'The lifecycle failed with an unexpected error (its message given).',
  runner_failed: 'The runner failed with an unexpected error (its message given).',
  run_failed: 'The slot failed without a code (a summary from another version, say).',
};

const SLOT_ONLY_CODES: ReadonlySet<string> = new Set<SlotErrorCode>([
  'cancelled',
  'workspace_error',
  'runner_failed',
  'run_failed',
]);

/** Whether a slot code is one a LorenzError carries (the others are slot outcomes). */
export function isLorenzErrorCode(code: SlotErrorCode): code is LorenzErrorCode {
  return !SLOT_ONLY_CODES.has(code);
}

/** For codes read back from outside the process (a termination message). */
export function isSlotErrorCode(value: unknown): value is SlotErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERROR_CODE_MEANINGS, value);
}

/**
 * An Error with a stable code its callers branch on. The name is passed, not read from the
 * class: a bundler may rename classes.
 */
export class CodedError<Code extends string> extends Error {
  readonly code: Code;
  constructor(name: string, code: Code, message: string) {
    super(message);
    this.name = name;
    this.code = code;
  }
}

export class LorenzError extends CodedError<LorenzErrorCode> {
  /** Extra machine-readable detail (e.g. the offending template text, a key path). */
  readonly detail: Record<string, unknown> | undefined;

  constructor(code: LorenzErrorCode, message: string, detail?: Record<string, unknown>) {
    super('LorenzError', code, message);
    this.detail = detail;
  }
}

export function isLorenzError(value: unknown): value is LorenzError {
  return value instanceof LorenzError;
}

/**
 * `<code>: <message>`, the code once: many messages already start with their code (so that
 * they read alone, in a hook record or a status), and a caller that shows the code before
 * the message must not say it twice.
 */
export function withCode(code: string, message: string): string {
  const prefix = `${code}: `;
  return `${prefix}${message.startsWith(prefix) ? message.slice(prefix.length) : message}`;
}

/** The message of anything thrown, for places that must report and go on. */
export function errorMessage(value: unknown): string {
  return value instanceof Error ? value.message : String(value);
}
