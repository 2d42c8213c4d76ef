/**
 * Every failure the engine reports carries a stable code, so callers (the CLI, the runner,
 * the controller's status reasons) branch on the code and never on message text.
 */
export type LorenzErrorCode =
  // WORKFLOW.md and its config
  | 'missing_workflow_file'
  | 'workflow_parse_error'
  | 'workflow_front_matter_not_a_map'
  | 'invalid_workflow_config'
  | 'template_parse_error'
  | 'template_render_error'
  // issues given to `lorenz run` / IssueRuns
  | 'invalid_issue'
  // workspaces
  | 'invalid_workspace_cwd'
  | 'workspace_is_root'
  | 'workspace_unsafe_symlink'
  | 'workspace_outside_root'
  | 'workspace_skill_source_symlink'
  | 'workspace_skill_source_unsupported'
  | 'workspace_skill_source_missing'
  | 'invalid_ssh_timeout'
  // hooks
  | 'hook_failed'
  | 'hook_timed_out'
  | 'hook_killed'
  // agent
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
  // trackers (later)
  | 'unsupported_tracker_kind'
  | 'invalid_tracker_config'
  | 'missing_tracker_secret'
  | 'tracker_request'
  | 'tracker_status'
  | 'tracker_response'
  | 'tracker_pagination'
  | 'tracker_rate_limited'
  // runner inputs
  | 'input_digest_mismatch'
  // operator
  | 'invalid_pod_template';

/**
 * The code of a failed slot (SlotSummary, an agent step's result, the runner's termination
 * message): any LorenzErrorCode, or an outcome that no LorenzError is thrown for. Every
 * mapping from a code (status reason, exit code) is an exhaustive switch over this union or
 * LorenzErrorCode, so a new code does not compile until each mapping places it.
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

/** Every SlotErrorCode once: a Record, so that one missing or unknown fails to compile. */
const SLOT_ERROR_CODES: Record<SlotErrorCode, true> = {
  missing_workflow_file: true,
  workflow_parse_error: true,
  workflow_front_matter_not_a_map: true,
  invalid_workflow_config: true,
  template_parse_error: true,
  template_render_error: true,
  invalid_issue: true,
  invalid_workspace_cwd: true,
  workspace_is_root: true,
  workspace_unsafe_symlink: true,
  workspace_outside_root: true,
  workspace_skill_source_symlink: true,
  workspace_skill_source_unsupported: true,
  workspace_skill_source_missing: true,
  invalid_ssh_timeout: true,
  hook_failed: true,
  hook_timed_out: true,
  hook_killed: true,
  agent_bridge_missing: true,
  agent_bridge_exited: true,
  agent_protocol_error: true,
  agent_response_timeout: true,
  acp_turn_failed: true,
  turn_timeout: true,
  turn_stalled: true,
  turn_cancelled: true,
  turn_input_required: true,
  approval_required: true,
  issue_state_unavailable: true,
  unsupported_tracker_kind: true,
  invalid_tracker_config: true,
  missing_tracker_secret: true,
  tracker_request: true,
  tracker_status: true,
  tracker_response: true,
  tracker_pagination: true,
  tracker_rate_limited: true,
  input_digest_mismatch: true,
  invalid_pod_template: true,
  cancelled: true,
  workspace_error: true,
  runner_failed: true,
  run_failed: true,
};

/** For codes read back from outside the process (a termination message). */
export function isSlotErrorCode(value: unknown): value is SlotErrorCode {
  return typeof value === 'string' && Object.hasOwn(SLOT_ERROR_CODES, value);
}

export class LorenzError extends Error {
  readonly code: LorenzErrorCode;
  /** Extra machine-readable detail (e.g. the offending template text, a key path). */
  readonly detail: Record<string, unknown> | undefined;

  constructor(code: LorenzErrorCode, message: string, detail?: Record<string, unknown>) {
    super(message);
    this.name = 'LorenzError';
    this.code = code;
    this.detail = detail;
  }
}

export function isLorenzError(value: unknown): value is LorenzError {
  return value instanceof LorenzError;
}

/** The message of anything thrown, for places that must report and go on. */
export function errorMessage(value: unknown): string {
  return value instanceof Error ? value.message : String(value);
}
