/**
 * The Lorenz event vocabulary. The engine emits these, `lorenz run` and the in-pod runner
 * print each as one JSON line on stdout, and the controller turns them into status fields
 * and Events. One definition so that every layer spells them the same way.
 */

import type { SlotErrorCode } from './errors.js';

export type HookName = 'after_create' | 'before_run' | 'after_run' | 'before_remove';
export const HOOK_NAMES: readonly HookName[] = [
  'after_create',
  'before_run',
  'after_run',
  'before_remove',
];

export interface HookExecutionMessage {
  status: 'started' | 'completed' | 'failed';
  hookName: HookName;
  /** The command as rendered (what bash ran), or the unrendered text if rendering failed. */
  command: string;
  cwd: string;
  /** Result fields: absent on `started`. `exitCode` is null when the process was killed or never ran. */
  exitCode?: number | null;
  output?: string;
  outputTruncated?: boolean;
  error?: string | null;
  errorTruncated?: boolean;
  /** Milliseconds from spawn to exit; absent on `started`. */
  durationMs?: number;
  /** Ensemble slot that ran this hook (0 for a solo run). */
  slot?: number;
}

/**
 * A piece of a hook's output, streamed while the hook runs (stdout and stderr merged in
 * arrival order). Concatenating the `text` of every record of one hook run, in order, gives
 * its whole output; a record ends with a newline unless it holds a partial line (flushed after
 * a quiet spell, at the hook's end, or cut at HOOK_OUTPUT_RECORD_CHARS). docs/run-log.md.
 */
export interface HookOutputMessage {
  hookName: HookName;
  slot: number;
  /**
   * The hook run this output belongs to: the 0-based position of its `started`
   * hook_execution record among the `started` hook_execution records of this log.
   */
  seq: number;
  text: string;
}

/** One step of a git workspace (src/workspace/git), reported like a hook. */
export type GitStep = 'clone' | 'branch' | 'merge_up' | 'setup' | 'push' | 'teardown';

/** A commit an attempt pushed: its id and the first line of its message. */
export interface GitCommit {
  sha: string;
  subject: string;
}

export interface GitWorkspaceMessage {
  step: GitStep;
  /** `warning`: the step did not do what it tries to, and the run goes on (a merge-up undone). */
  status: 'completed' | 'failed' | 'warning';
  /** The branch. */
  branch: string;
  /** What happened, in a sentence; never a credential. */
  detail: string;
  code?: SlotErrorCode;
  durationMs: number;
  slot: number;
  /** step `push`: the commits the attempt pushed to the branch, newest first (bounded). */
  commits?: GitCommit[];
}

export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  /** Of inputTokens, those read from the prompt cache (ACP cachedReadTokens). */
  cachedInputTokens?: number;
  /** Cost in `currency`, as a decimal string (docs/budgets.md); absent when unknown. */
  cost?: string;
  currency?: string;
  /** The model the agent reported. */
  model?: string;
}

/** Agent-side event names (see src/agent). */
export type AgentEventType =
  | 'session_started'
  | 'turn_started'
  | 'turn_completed'
  | 'turn_failed'
  | 'turn_cancelled'
  | 'turn_input_required'
  | 'approval_required'
  | 'approval_auto_approved'
  /** agent.approvals (docs/approvals.md): a rule allowed, or a person approved. */
  | 'approval_allowed'
  /** A rule denied, a person denied, or the wait timed out to deny. */
  | 'approval_denied'
  /** A rule said ask: the request waits for a person (its id, facts and options). */
  | 'approval_requested'
  /** The wait ended without a reply: on_timeout decided. */
  | 'approval_timed_out'
  /** More asks than agent.approvals.asks_per_minute: decided at once by on_timeout. */
  | 'approval_rate_limited'
  /** A question (ACP elicitation) went to the issue. */
  | 'input_requested'
  /** A reply answered it (or the wait ended: declined). */
  | 'input_answered'
  /** A /steer comment became the next turn's prompt. */
  | 'steer_delivered'
  /** Budgets (docs/budgets.md): a limit's warn ratio was reached (scope, limit, spent). */
  | 'budget_warning'
  /** A limit was crossed: the turn is cancelled (scope, limit, spent). */
  | 'budget_exceeded'
  /** A turn ended without token counts: the limits cannot hold (said once per attempt). */
  | 'usage_unreported'
  | 'stderr'
  | 'process_exit'
  | 'session_notification'
  | 'malformed';

export type LorenzEvent =
  | { type: 'hook_execution'; message: HookExecutionMessage }
  | { type: 'hook_output'; message: HookOutputMessage }
  | { type: 'workspace_prepared'; message: { path: string; created: boolean; slot: number } }
  | { type: 'workspace_removed'; message: { path: string; slot: number } }
  | {
      type: 'workspace_restored';
      message: {
        path: string;
        digest: string;
        files: number;
        bytes: number;
        durationMs: number;
        slot: number;
      };
    }
  | { type: 'skills_synced'; message: { path: string; skills: string[]; slot: number } }
  | { type: 'git_workspace'; message: GitWorkspaceMessage }
  | { type: 'stderr'; message: string; slot?: number }
  | { type: AgentEventType; message: Record<string, unknown> | string; slot?: number }
  | { type: 'run_completed'; message: RunSummary }
  /**
   * A warm-up's last record (`lorenz runner --prepare`, docs/snapshots.md#the-warm-up-pod): what
   * its termination message says. A warm-up's log has no run_completed.
   */
  | { type: 'warm_up_completed'; message: WarmUpCompletedMessage };

/**
 * A warm-up's outcome: api/warm-up.ts's WarmUpResult (that module is a layer above this one;
 * the runner emits a WarmUpResult as this message, so one that no longer fits fails to compile).
 */
export type WarmUpCompletedMessage =
  | {
      outcome: 'prepared';
      digest: string;
      commit: string | null;
      files: number;
      bytes: number;
      prepareMs: number;
      digestMs: number;
    }
  | { outcome: 'unchanged'; commit: string }
  | { outcome: 'moved'; commit: string }
  | { outcome: 'failed'; errorCode: string; error: string };

export interface SlotSummary {
  slot: number;
  workspace: string;
  succeeded: boolean;
  /** Stable failure code when the slot failed (hook_failed, hook_timed_out, acp_turn_failed …). */
  errorCode?: SlotErrorCode;
  error?: string;
  turns: number;
  usage?: TokenUsage;
}

export interface RunSummary {
  identifier: string;
  succeeded: boolean;
  slots: SlotSummary[];
}

export type EventSink = (event: LorenzEvent) => void;
