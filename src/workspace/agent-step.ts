import type { SlotErrorCode } from '../workflow/errors.js';
import type { Issue } from '../workflow/issue.js';
import type { EventSink, TokenUsage } from '../workflow/events.js';

/**
 * What the lifecycle calls between before_run and after_run. The agent layer (src/agent)
 * implements it with an ACP session and the turn loop; the lifecycle does not know ACP.
 * `--no-agent` passes no step at all.
 */
export interface AgentStepContext {
  /** The slot's workspace directory (the agent's cwd). */
  workspace: string;
  slot: number;
  ensembleSize: number;
  issue: Issue;
  attempt: number | null;
  /** Aborted on cancellation: stop the agent promptly (after_run still runs). */
  signal: AbortSignal;
  emit: EventSink;
  /** Variables set for this slot's agent over its base environment (Lorenz's git on PATH). */
  env?: Record<string, string>;
}

export type AgentStepResult =
  | { ok: true; turns: number; usage?: TokenUsage }
  | { ok: false; code: SlotErrorCode; message: string; turns: number; usage?: TokenUsage };

export type AgentStep = (context: AgentStepContext) => Promise<AgentStepResult>;
