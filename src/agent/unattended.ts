import { AgentFailure } from './failures.js';
import { allowOption, selected } from './permission-answer.js';
import type { acp } from './client.js';
import type { ActiveTurn, AgentEmit } from './session.js';

/**
 * The answers of a session without an inbox (no agent.approvals): approve what can be
 * approved, and fail the turn on what nobody is there to answer.
 */

/** A permission nobody can grant: the turn fails with approval_required. */
export function approvalRequired(
  emit: AgentEmit,
  turn: ActiveTurn | undefined,
  request: acp.RequestPermissionRequest,
): acp.RequestPermissionResponse {
  const toolCall = request.toolCall.title ?? request.toolCall.toolCallId;
  const kinds = request.options.map((each) => each.kind);
  emit('approval_required', { turn: turn?.number ?? 0, toolCall, options: kinds });
  turn?.interrupt(
    new AgentFailure(
      'approval_required',
      `agent asked for approval of ${JSON.stringify(toolCall)} with no allow option (${kinds.join(', ') || 'no options'})`,
    ),
  );
  return { outcome: { outcome: 'cancelled' } };
}

export function autoApprove(
  emit: AgentEmit,
  turn: ActiveTurn | undefined,
  request: acp.RequestPermissionRequest,
): acp.RequestPermissionResponse {
  const toolCall = request.toolCall.title ?? request.toolCall.toolCallId;
  const option = allowOption(request.options);
  if (!option || !turn) return approvalRequired(emit, turn, request);
  emit('approval_auto_approved', {
    turn: turn.number,
    toolCall,
    optionId: option.optionId,
    kind: option.kind,
  });
  return selected(option);
}

/** A question nobody can answer: the turn fails with turn_input_required. */
export function inputRequired(
  emit: AgentEmit,
  turn: ActiveTurn | undefined,
  request: acp.CreateElicitationRequest,
): acp.CreateElicitationResponse {
  emit('turn_input_required', { turn: turn?.number ?? 0, message: request.message });
  turn?.interrupt(
    new AgentFailure(
      'turn_input_required',
      `agent asked for user input: ${JSON.stringify(request.message)}`,
    ),
  );
  return { action: 'cancel' };
}
