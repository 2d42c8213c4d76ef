import type { z } from 'zod';
import type { ApprovalPattern, ApprovalRule, ApprovalsConfig } from './approvals-config.js';
import { PatternError, compilePattern, type PatternField } from './approvals-pattern.js';
import { MAX_APPROVAL_RULES, approvalRuleSection, approvalsSection } from './approvals-schema.js';
import { type ConfigProblem, type RawMap, isMap, parseSection } from './config-sections.js';

/**
 * `agent.approvals` (docs/approvals.md): absent is null (every permission approved, as
 * before); present, even empty, opts in with every default. Every rule is checked and its
 * patterns compiled here, at load, so a bad rule is a config problem naming it
 * (`agent.approvals.rules[2].command: invalid regex /…/: …`), never a surprise mid-run.
 */

type Context = { warnings: string[]; problems: ConfigProblem[] };

const PATH = 'agent.approvals';
const PATTERN_FIELDS: readonly PatternField[] = ['command', 'title', 'path'];

/**
 * The map without its unknown keys, each reported as a problem: in a policy a misspelt key
 * is not harmless (a rule without its `command` matches every call).
 */
function knownKeys(value: RawMap, schema: z.ZodObject, path: string, context: Context): RawMap {
  const known = Object.keys(schema.shape);
  const kept: RawMap = Object.create(null) as RawMap;
  for (const [key, entry] of Object.entries(value)) {
    if (known.includes(key)) kept[key] = entry;
    else
      context.problems.push({
        path: `${path}.${key}`,
        rule: `unknown key (known: ${known.join(', ')})`,
      });
  }
  return kept;
}

/** The compiled pattern, or undefined when it is refused (the problem is reported). */
function compileField(
  source: string,
  field: PatternField,
  path: string,
  context: Context,
): ApprovalPattern | undefined {
  try {
    return compilePattern(source, field);
  } catch (error) {
    if (!(error instanceof PatternError)) throw error;
    context.problems.push({ path: `${path}.${field}`, rule: error.message });
    return undefined;
  }
}

function parseRule(value: unknown, index: number, context: Context): ApprovalRule | undefined {
  const path = `${PATH}.rules[${index}]`;
  if (!isMap(value)) {
    context.problems.push({ path, rule: 'must be a map (a rule with an action)' });
    return undefined;
  }
  const known = knownKeys(value, approvalRuleSection, path, context);
  const rule = parseSection(approvalRuleSection, known, path, context);
  // Compiled even when another key is wrong, so that one load lists every problem; a
  // pattern that is not a string is the schema's to report.
  const [command, title, pathPattern] = PATTERN_FIELDS.map((field) => {
    const source = known[field];
    return typeof source === 'string' ? compileField(source, field, path, context) : null;
  });
  if (!rule || command === undefined || title === undefined || pathPattern === undefined) {
    return undefined;
  }
  return {
    index,
    kinds: rule.kind ?? null,
    title,
    command,
    path: pathPattern,
    action: rule.action,
    reason: rule.reason,
  };
}

function parseRules(value: unknown, context: Context): ApprovalRule[] | undefined {
  // Not a list, or too long: the section's schema reports it.
  if (!Array.isArray(value) || value.length > MAX_APPROVAL_RULES) return undefined;
  const rules = value.map((entry, index) => parseRule(entry, index, context));
  return rules.every((rule) => rule !== undefined) ? rules : undefined;
}

export function parseApprovalsSection(value: unknown, context: Context): ApprovalsConfig | null {
  if (value === undefined) return null;
  if (value !== null && !isMap(value)) {
    context.problems.push({ path: PATH, rule: 'must be a map' });
    return null;
  }
  const raw = knownKeys(value ?? {}, approvalsSection, PATH, context);
  const section = parseSection(approvalsSection, raw, PATH, context);
  const rules = parseRules(raw.rules ?? [], context);
  if (!section || !rules) return null;
  return {
    default: section.default,
    rules,
    approvers: section.approvers,
    timeoutMs: section.timeout_ms,
    onTimeout: section.on_timeout,
    steering: section.steering,
    pollIntervalMs: section.poll_interval_ms,
    asksPerMinute: section.asks_per_minute,
  };
}
