import type { ApprovalAction, ApprovalRule, ApprovalsConfig } from './approvals-config.js';

/** What a permission request is about, as the rules match it (src/agent/inbox.ts fills it). */
export interface ApprovalFacts {
  toolKind: string | null;
  title: string;
  command: string | null;
  paths: readonly string[];
}

export interface ApprovalVerdict {
  action: ApprovalAction;
  /** The index of the rule that decided; null: the default. */
  rule: number | null;
  reason: string | null;
}

/** Every matcher the rule gives must match; a matcher on a field the request lacks fails. */
export function ruleMatches(rule: ApprovalRule, facts: ApprovalFacts): boolean {
  const kind = (facts.toolKind ?? '').trim().toLowerCase();
  if (rule.kinds && !rule.kinds.some((each) => each.trim().toLowerCase() === kind)) return false;
  if (rule.title && !rule.title.test(facts.title)) return false;
  if (rule.command && (facts.command === null || !rule.command.test(facts.command))) return false;
  if (rule.path && !facts.paths.some((path) => rule.path?.test(path) === true)) return false;
  return true;
}

/** The first rule that matches decides; none: the default (docs/approvals.md). */
export function decideApproval(config: ApprovalsConfig, facts: ApprovalFacts): ApprovalVerdict {
  const rule = config.rules.find((each) => ruleMatches(each, facts));
  if (rule) return { action: rule.action, rule: rule.index, reason: rule.reason };
  return { action: config.default, rule: null, reason: null };
}
