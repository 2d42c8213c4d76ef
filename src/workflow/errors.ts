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
