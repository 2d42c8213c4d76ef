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
  /**
   * Directories first on the agent's PATH, after its login profile (Lorenz's git wrapper):
   * the agent's process is started with them whatever its environment and profile say.
   */
  pathFirst?: readonly string[];
}

export type AgentStepResult =
  | { ok: true; turns: number; usage?: TokenUsage }
  | { ok: false; code: SlotErrorCode; message: string; turns: number; usage?: TokenUsage };

export type AgentStep = (context: AgentStepContext) => Promise<AgentStepResult>;
