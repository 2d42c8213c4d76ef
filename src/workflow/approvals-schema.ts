import { z } from 'zod';
import { APPROVALS_DEFAULTS } from './approvals-config.js';
import { MAX_TIMER_MS, durationMs, integerBetween, oneOf } from './config-fields.js';

/**
 * `agent.approvals` and each of its rules, with the snake_case keys a WORKFLOW.md uses and
 * the defaults of approvals-config.ts. The shapes double as the lists of known keys; unlike
 * the other sections an unknown key here is an error, not a warning: a misspelt `comand:`
 * would make a rule match every call, a misspelt `aprovers:` let anyone approve.
 */

/** The ACP tool kinds a rule's `kind` may name. */
export const APPROVAL_TOOL_KINDS = [
  'execute',
  'edit',
  'read',
  'delete',
  'move',
  'search',
  'fetch',
  'think',
  'switch_mode',
  'other',
] as const;

export const MAX_APPROVAL_RULES = 256;
export const MAX_APPROVERS = 256;
/** As long as a reason may be in the inbox (INBOX_LIMITS.reasonLength). */
export const MAX_RULE_REASON_LENGTH = 2048;
export const MIN_APPROVALS_POLL_INTERVAL_MS = 1_000;

const action = () => oneOf(['allow', 'deny', 'ask']);

/** What a matching call gets; a rule without one is refused (there is no safe guess). */
const ruleAction = z.enum(['allow', 'deny', 'ask'], {
  error: (issue) =>
    issue.input === undefined
      ? 'is required: "allow", "deny" or "ask"'
      : 'must be one of "allow", "deny", "ask"',
});

/** The rule every pattern's type and emptiness are refused with. */
export const PATTERN_RULE = 'must be a non-empty pattern (a glob, or /regex/flags)';

/** A pattern as written; approvals-pattern.ts compiles it (a glob, or a regex in slashes). */
function pattern(description: string) {
  return z.string({ error: PATTERN_RULE }).optional().describe(description);
}

const toolKind = oneOf(APPROVAL_TOOL_KINDS);

export const approvalRuleSection = z.object({
  kind: z
    .preprocess(
      (value) => (typeof value === 'string' ? [value] : value),
      z
        .array(toolKind, { error: 'must be a tool kind or a list of them' })
        .min(1, { error: 'must name at least one tool kind' }),
    )
    .optional()
    .describe(
      `A tool kind, or a list of them: ${APPROVAL_TOOL_KINDS.map((kind) => `\`${kind}\``).join(', ')}. Absent: any kind.`,
    ),
  command: pattern(
    "Matches the tool call's command line: a glob (`*` any characters, spaces and `/` included; `?` one; `[...]` a class), anchored at both ends, or `/regex/flags`. A call with no command never matches a rule that has one.",
  ),
  title: pattern("Matches the tool call's title, with the syntax of `command`."),
  path: pattern(
    'Matches when any path the call touches does: a glob in which `*` stops at `/` and `**` crosses it (`**/.env`); one that does not start with `/` matches at any depth, as if it began with `**/` (`.env` is any `.env`); or `/regex/flags`.',
  ),
  action: ruleAction.describe(
    'What a matching call gets: `allow`, `deny` or `ask` (a person answers on the issue). Required.',
  ),
  reason: z
    .string({ error: 'must be a string' })
    .trim()
    .min(1, { error: 'must be a non-empty string' })
    .max(MAX_RULE_REASON_LENGTH, {
      error: `must be at most ${MAX_RULE_REASON_LENGTH} characters`,
    })
    .nullable()
    .default(null)
    .describe('Shown with an ask on the issue, and given to the agent with a deny.'),
});

const approver = z
  .string({ error: 'must be a string (quote a numeric user id: "1234")' })
  .trim()
  .min(1, { error: 'must be a non-empty string' })
  .max(256, { error: 'must be at most 256 characters' });

export const approvalsSection = z.object({
  default: action()
    .default(APPROVALS_DEFAULTS.default)
    .describe('What a permission request that no rule matches gets.'),
  // Each entry is checked by approvals-section.ts, for its own error paths and its patterns.
  rules: z
    .array(z.unknown(), { error: 'must be a list of rules' })
    .max(MAX_APPROVAL_RULES, { error: `must have at most ${MAX_APPROVAL_RULES} rules` })
    .default(() => [])
    .describe(
      'Ordered rules; the first whose matchers (`kind`, `command`, `title`, `path`) all match decides, with its `action` and `reason` (the `agent.approvals.rules[].*` keys below).',
    ),
  approvers: z
    .array(approver, { error: 'must be a list of strings' })
    .max(MAX_APPROVERS, { error: `must have at most ${MAX_APPROVERS} entries` })
    .default(() => [])
    .describe(
      'Tracker user ids, logins or emails who may answer, steer and stop (compared trimmed, case-insensitively). Empty: anyone who can comment on the issue.',
    ),
  timeout_ms: durationMs()
    .default(APPROVALS_DEFAULTS.timeoutMs)
    .describe('How long an ask or a question waits for a reply.'),
  on_timeout: oneOf(['allow', 'deny'])
    .default(APPROVALS_DEFAULTS.onTimeout)
    .describe('What a request whose wait ends without a reply gets (a question is declined).'),
  steering: z
    .boolean({ error: 'must be true or false' })
    .default(APPROVALS_DEFAULTS.steering)
    .describe('Read `/steer` and `/stop` comments while the run is running.'),
  poll_interval_ms: integerBetween(MIN_APPROVALS_POLL_INTERVAL_MS, MAX_TIMER_MS)
    .default(APPROVALS_DEFAULTS.pollIntervalMs)
    .describe(
      "How often the issue's comments are read while a request waits or steering is on (a tracker webhook reads them at once).",
    ),
  asks_per_minute: integerBetween(1, 1000)
    .default(APPROVALS_DEFAULTS.asksPerMinute)
    .describe('Asks per minute per attempt; more are decided at once by `on_timeout`.'),
});
