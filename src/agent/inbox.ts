import type { ApprovalFacts, ApprovalVerdict } from '../workflow/approvals-policy.js';

/**
 * What the agent session asks of the run's inbox (docs/approvals.md). The runner makes one
 * per slot from `agent.approvals` and the agent-tools gateway; the session only holds the
 * ACP request open and turns the answer into ACP. Without `agent.approvals` the session gets
 * no inbox and behaves as it always did (approve what can be approved, fail on a question).
 */

/** What a permission request is about, as the approval rules see it (bounded by the session). */
export type PermissionFacts = ApprovalFacts;

/** What the rules said: the action, and the rule that said it (null: the default). */
export type PolicyVerdict = ApprovalVerdict;

export interface AskOption {
  optionId: string;
  name: string;
  kind: string;
}

/** One ask, as the session makes it; the inbox adds the id, slot, attempt and times. */
export type AskInput =
  | {
      kind: 'permission';
      turn: number;
      facts: PermissionFacts;
      options: readonly AskOption[];
      verdict: PolicyVerdict;
    }
  | { kind: 'question'; turn: number; message: string };

/**
 * The answer an ask ends with. A timeout, a request the gateway never took, or one over the
 * rate limit is already turned into approve or deny (on_timeout) here, with `via` saying so.
 */
export interface InboxAnswer {
  /** The request id the inbox made (events name it). */
  requestId: string;
  verdict: 'approve' | 'approve_always' | 'deny' | 'answer' | 'decline';
  reason?: string | undefined;
  answer?: string | undefined;
  by?: string | undefined;
  via: 'comment' | 'kubernetes' | 'timeout' | 'rate_limit' | 'unavailable';
}

export interface AgentInbox {
  /** What the rules say of a permission request (pure). */
  decide(facts: PermissionFacts): PolicyVerdict;
  /**
   * Ask a person and wait (the caller pauses the turn's stall and turn timers). Resolves
   * with the answer, never rejects except when `signal` aborts (the run is cancelled).
   * `onRequested` is called with the request's id once it is really asked (not for one
   * decided at once: over the rate limit, or no gateway), so the session's event names it.
   */
  ask(
    input: AskInput,
    signal: AbortSignal,
    onRequested?: (requestId: string) => void,
  ): Promise<InboxAnswer>;
  /** A decision policy made alone, for the record (an Event on the IssueRun); never throws. */
  report(
    facts: PermissionFacts,
    turn: number,
    verdict: PolicyVerdict,
    via: 'policy' | 'always',
  ): void;
  /** Steers waiting for this slot, oldest first; each is handed out once. Never throws. */
  takeSteers(): Promise<readonly { text: string; by?: string | undefined }[]>;
}
