import { type AgentErrorCode, LorenzError } from '../workflow/errors.js';
import type { BridgeExit } from './bridge.js';

/**
 * Why an agent step failed, as a stable code the runner and the controller branch on. The
 * message is for people: it names the bridge command and quotes what the bridge said.
 */
export type AgentFailureCode = AgentErrorCode;

/** A LorenzError whose code is one of the agent's: the type says which codes can occur. */
export class AgentFailure extends LorenzError {
  declare readonly code: AgentFailureCode;

  constructor(code: AgentFailureCode, message: string) {
    super(code, message);
    this.name = 'AgentFailure';
  }
}

/** bash's status for "command not found". */
const COMMAND_NOT_FOUND = 127;
/** Stderr lines quoted in a message about a dead bridge. */
const QUOTED_STDERR_LINES = 5;

function quoteStderr(tail: string[]): string {
  const lines = tail.filter((line) => line.trim() !== '').slice(-QUOTED_STDERR_LINES);
  return lines.length > 0 ? `; stderr: ${lines.join(' | ')}` : '';
}

function describeExit(exit: BridgeExit): string {
  if (exit.exitCode !== null) return `status ${exit.exitCode}`;
  return exit.signal ? `signal ${exit.signal}` : 'an unknown status';
}

/**
 * The bridge process ended on its own. `when` says at what point (`before answering
 * initialize`, `during turn 2`). Exit 127 from `bash -lc` means the command does not exist.
 */
export function bridgeEnded(
  command: string,
  exit: BridgeExit,
  tail: string[],
  when: string,
): AgentFailure {
  if (exit.exitCode === COMMAND_NOT_FOUND) {
    return new AgentFailure(
      'agent_bridge_missing',
      `agent bridge command not found: ${command}${quoteStderr(tail)}`,
    );
  }
  return new AgentFailure(
    'agent_bridge_exited',
    `agent bridge ${command} exited with ${describeExit(exit)} ${when}${quoteStderr(tail)}`,
  );
}

/** The bridge answered a request with a JSON-RPC error. */
export function bridgeRefused(command: string, method: string, error: unknown): AgentFailure {
  return new AgentFailure(
    'agent_protocol_error',
    `agent bridge ${command} refused ${method}: ${quoteError(error)}`,
  );
}

/**
 * A JSON-RPC error as `"message"`, with its data when the bridge sent any: a bare
 * "Internal error" says nothing, the data usually says what went wrong.
 */
export function quoteError(error: unknown): string {
  const text = JSON.stringify(error instanceof Error ? error.message : String(error));
  const data =
    typeof error === 'object' && error !== null ? (error as { data?: unknown }).data : undefined;
  if (data === undefined || data === null) return text;
  const detail = typeof data === 'string' ? data : JSON.stringify(data);
  return `${text} (${detail.length > 500 ? `${detail.slice(0, 500)}…` : detail})`;
}

export function bridgeSilent(command: string, method: string, timeoutMs: number): AgentFailure {
  return new AgentFailure(
    'agent_response_timeout',
    `agent bridge ${command} did not answer ${method} within ${timeoutMs} ms`,
  );
}

export function cancelledByCaller(): AgentFailure {
  return new AgentFailure('turn_cancelled', 'the agent run was cancelled');
}
