import type { LorenzErrorCode } from '../workflow/errors.js';

/**
 * Exit codes: 2 for usage and for invalid workflows/issues, 1 for anything else that failed.
 * No default: a new code does not compile until it is placed here. invalid_ssh_timeout is a
 * setting of the workflow refused when it loads, like invalid_workflow_config: exit 2.
 */
export function exitCodeForError(code: LorenzErrorCode): 1 | 2 {
  switch (code) {
    case 'missing_workflow_file':
    case 'file_unreadable':
    case 'workflow_parse_error':
    case 'workflow_front_matter_not_a_map':
    case 'invalid_workflow_config':
    case 'invalid_ssh_timeout':
    case 'template_parse_error':
    case 'invalid_issue':
    case 'invalid_manifest':
    case 'not_a_workflow_file':
      return 2;
    case 'template_render_error':
    case 'invalid_workspace_cwd':
    case 'workspace_is_root':
    case 'workspace_unsafe_symlink':
    case 'workspace_outside_root':
    case 'workspace_skill_source_symlink':
    case 'workspace_skill_source_unsupported':
    case 'workspace_skill_source_missing':
    case 'workspace_tree_symlink_escapes':
    case 'workspace_tree_unsupported_file':
    case 'ssh_connect':
    case 'workspace_repo_missing':
    case 'workspace_repo_no_clone_address':
    case 'workspace_branch_unresolved':
    case 'workspace_clone_failed':
    case 'workspace_setup_failed':
    case 'invalid_git_credentials':
    case 'hook_failed':
    case 'hook_timed_out':
    case 'hook_killed':
    case 'agent_bridge_missing':
    case 'agent_bridge_exited':
    case 'agent_protocol_error':
    case 'agent_response_timeout':
    case 'acp_turn_failed':
    case 'turn_timeout':
    case 'turn_stalled':
    case 'turn_cancelled':
    case 'turn_input_required':
    case 'approval_required':
    case 'issue_state_unavailable':
    case 'budget_exceeded':
    case 'unsupported_tracker_kind':
    case 'invalid_tracker_config':
    case 'missing_tracker_secret':
    case 'tracker_request':
    case 'tracker_status':
    case 'tracker_response':
    case 'tracker_pagination':
    case 'tracker_rate_limited':
    case 'invalid_codehost_config':
    case 'codehost_request':
    case 'codehost_status':
    case 'codehost_response':
    case 'codehost_rate_limited':
    case 'input_digest_mismatch':
    case 'snapshot_digest_mismatch':
    case 'snapshot_tree_missing':
    case 'invalid_pod_template':
      return 1;
  }
}
