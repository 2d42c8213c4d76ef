import { InboxReasons, inboxDecisionSchema } from '../api/inbox.js';
import { pendingRequests, specDecisions } from '../api/inbox-decisions.js';
import { parseWorkflowContent } from '../workflow/front-matter.js';
import { get, given, isRecord, str, type Json } from './json.js';
import type { InboxDecisionView, InboxRequestView, InboxView } from './view-api.js';

/**
 * status.inbox of an IssueRun (raw JSON) as the run page shows it: each entry checked against
 * the CRD's schema (a malformed one is left out), plus who may answer. Pure.
 */

const DECIDED_SHOWN = 32;
const IN_KUBERNETES = 'here: whoever may patch this IssueRun';

/** Who may answer on the issue, as the Workflow's WORKFLOW.md says (agent.approvals.approvers). */
export function answeredByOf(workflow: Json | undefined): string {
  const text = str(get(workflow, 'spec', 'workflow'));
  if (text === undefined)
    return `on the issue: the Workflow's agent.approvals.approvers; ${IN_KUBERNETES}`;
  let approvers: unknown;
  try {
    approvers = get(parseWorkflowContent(text).frontMatter, 'agent', 'approvals', 'approvers');
  } catch {
    approvers = undefined;
  }
  const names = Array.isArray(approvers)
    ? approvers.filter((each): each is string => typeof each === 'string')
    : [];
  return names.length > 0
    ? `on the issue: ${names.join(', ')}; ${IN_KUBERNETES}`
    : `on the issue: anyone who can comment on it; ${IN_KUBERNETES}`;
}

export function inboxOfIssueRun(run: Json, workflow?: Json): InboxView | undefined {
  const answered = new Set(specDecisions(run).map((each) => get(each, 'requestId')));
  const pending: InboxRequestView[] = pendingRequests(run).map((request) => ({
    id: request.id,
    kind: request.kind,
    slot: request.slot,
    attempt: request.attempt,
    turn: request.turn,
    title: request.title,
    ...(request.toolKind ? { toolKind: request.toolKind } : {}),
    ...(request.command ? { command: request.command } : {}),
    ...(request.paths?.length ? { paths: request.paths } : {}),
    options: request.options.map(({ optionId, name, kind }) => ({ optionId, name, kind })),
    ...(request.optionsOmitted ? { optionsOmitted: request.optionsOmitted } : {}),
    ...(request.message ? { message: request.message } : {}),
    ...(request.ruleReason ? { ruleReason: request.ruleReason } : {}),
    askedAt: request.askedAt,
    deadline: request.deadline,
    ...(answered.has(request.id) ? { answered: true } : {}),
  }));
  const list = get(run, 'status', 'inbox', 'decided');
  const decided: InboxDecisionView[] = (Array.isArray(list) ? list : [])
    .flatMap((each) => {
      const parsed = inboxDecisionSchema.safeParse(each);
      if (!parsed.success) return [];
      const { requestId, verdict, reason, answer, by, via, at } = parsed.data;
      return [{ requestId, verdict, ...given({ reason, answer, by }), via, at }];
    })
    .slice(-DECIDED_SHOWN);
  if (pending.length === 0 && decided.length === 0) return undefined;
  return { pending, decided, answeredBy: answeredByOf(workflow) };
}

/**
 * The reason a runs table shows: while a request waits, the waiting slot's reason
 * (AwaitingApproval, AwaitingAnswer), whatever the run's own reason says.
 */
export function awaitingOf(run: Json): { reason: string; count: number } | undefined {
  const phase = str(get(run, 'status', 'phase'));
  if (phase === 'Succeeded' || phase === 'Failed') return undefined;
  const waiting = new Set<string>([InboxReasons.AwaitingApproval, InboxReasons.AwaitingAnswer]);
  const slots = get(run, 'status', 'slots');
  const slotReason = (Array.isArray(slots) ? slots : [])
    .map((slot) => (isRecord(slot) ? str(slot.reason) : undefined))
    .find((reason): reason is string => reason !== undefined && waiting.has(reason));
  const pending = pendingRequests(run);
  if (!slotReason && pending.length === 0) return undefined;
  const reason =
    slotReason ??
    (pending.every((request) => request.kind === 'question')
      ? InboxReasons.AwaitingAnswer
      : InboxReasons.AwaitingApproval);
  return { reason, count: pending.length };
}
