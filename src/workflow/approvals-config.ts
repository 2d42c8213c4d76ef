/**
 * `agent.approvals` in WORKFLOW.md, parsed (docs/approvals.md): what the runner does with an
 * agent's permission requests and questions, and who may answer them on the issue. Absent,
 * every permission is approved as before (the `allow` default) and a question fails its
 * turn (`turn_input_required`), so Workflows written before it keep running unchanged.
 */

export type ApprovalAction = 'allow' | 'deny' | 'ask';

/** A pattern as written: a glob (`git push --force*`) or a regex in slashes (`/\.env$/i`). */
export interface ApprovalPattern {
  /** As written in WORKFLOW.md (shown in events and docs). */
  source: string;
  /** Whether the whole text matches (a glob is anchored; a regex matches as written). */
  test(text: string): boolean;
}

/**
 * One rule: every matcher given must match (absent ones match anything); the first rule
 * that matches decides. Commands match the tool call's command line, paths any path it
 * touches; a rule with `command` never matches a tool call that has no command.
 */
export interface ApprovalRule {
  /** Its place in `agent.approvals.rules` (0-based), named in events and in the comment. */
  index: number;
  /** ACP tool kinds (execute, edit, read, delete, move, search, fetch, think, other); null: any. */
  kinds: readonly string[] | null;
  title: ApprovalPattern | null;
  command: ApprovalPattern | null;
  path: ApprovalPattern | null;
  action: ApprovalAction;
  /** Shown with an ask, given to the agent with a deny. */
  reason: string | null;
}

export interface ApprovalsConfig {
  /** When no rule matches (`allow`). */
  default: ApprovalAction;
  rules: readonly ApprovalRule[];
  /**
   * Tracker user ids, logins or emails who may answer, steer and stop (matched trimmed and
   * case-insensitively against a comment's author id, login/name and email). Empty: anyone
   * who can comment on the issue.
   */
  approvers: readonly string[];
  /** How long an ask waits for a reply (3 600 000: one hour). */
  timeoutMs: number;
  /** What a wait that times out decides (`deny`). */
  onTimeout: 'allow' | 'deny';
  /** Whether `/steer` and `/stop` are read while the run is running (false). */
  steering: boolean;
  /** How often the comments are read while a request waits or steering is on (10 000). */
  pollIntervalMs: number;
  /** Asks per minute per attempt; more are decided at once by `on_timeout` (10). */
  asksPerMinute: number;
}

export const APPROVALS_DEFAULTS = {
  default: 'allow',
  timeoutMs: 3_600_000,
  onTimeout: 'deny',
  steering: false,
  pollIntervalMs: 10_000,
  asksPerMinute: 10,
} as const;
