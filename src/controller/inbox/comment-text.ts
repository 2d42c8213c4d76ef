import { INBOX_COMMENT_MARKER, INBOX_LIMITS, type InboxPending } from '../../api/inbox.js';

/**
 * The comments the inbox writes on the issue. Everything in them that came from the agent or
 * a commenter (titles, commands, paths, messages, reasons, names) is hostile: it goes in a
 * fenced code block whose fence is longer than any backtick run inside, or in an inline code
 * span built the same way, so no Markdown, HTML, mention or forged `/approve` survives. Each
 * comment starts with INBOX_COMMENT_MARKER so the inbox never reads its own words as a reply.
 */

/** The most options (and approvers) a comment lists; the rest are counted. */
export const LISTED_MAX = 16;
const NAME_LENGTH = 256;

/** Cuts to at most `max` UTF-16 units (no split surrogate pair), marking a cut with "…". */
export function bounded(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max);
  return `${/[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut}…`;
}

function longestRun(text: string, char: '`' | '~'): number {
  let longest = 0;
  for (const run of text.matchAll(char === '`' ? /`+/g : /~+/g)) {
    longest = Math.max(longest, run[0].length);
  }
  return longest;
}

/** A fenced code block holding `text` verbatim: no line inside can close it. */
export function fenced(text: string, max: number): string {
  const body = bounded(text.replace(/\r\n?/g, '\n'), max);
  const fence = '`'.repeat(Math.max(3, longestRun(body, '`') + 1));
  return `${fence}text\n${body}\n${fence}`;
}

/** An inline code span holding `text` on one line (a span is inert: no HTML, links or mentions). */
export function inlineCode(text: string, max = NAME_LENGTH): string {
  const body = bounded(text.replace(/[\r\n]+/g, ' '), max);
  if (body.trim() === '') return '(none)';
  const ticks = '`'.repeat(longestRun(body, '`') + 1);
  const pad = body.startsWith('`') || body.endsWith('`') ? ' ' : '';
  return `${ticks}${pad}${body}${pad}${ticks}`;
}

/** A list of at most LISTED_MAX items, then "and N more" for the rest and `omitted`. */
function listed(items: readonly string[], omitted = 0): string[] {
  const shown = items.slice(0, LISTED_MAX).map((item) => `- ${item}`);
  const more = items.length - Math.min(items.length, LISTED_MAX) + omitted;
  return more > 0 ? [...shown, `- and ${more} more`] : shown;
}

interface RequestContext {
  run: string;
  approvers: readonly string[];
  onTimeout: 'allow' | 'deny';
}

function whoMayAnswer(approvers: readonly string[]): string[] {
  if (approvers.length === 0) return ['', 'Anyone who can comment on this issue may answer.', ''];
  return ['', 'Only these may answer:', ...listed(approvers.map((a) => inlineCode(a))), ''];
}

function permissionLines(p: InboxPending, o: RequestContext): string[] {
  const id = inlineCode(p.id);
  const kind =
    p.toolKind === undefined ? 'a tool call' : `a tool call of kind ${inlineCode(p.toolKind, 64)}`;
  const lines = [
    `**The agent asks for permission** (run ${inlineCode(o.run)}, request ${id}): ${kind}.`,
    '',
    fenced(p.title, INBOX_LIMITS.titleLength),
  ];
  if (p.command !== undefined) {
    lines.push('', 'Command:', '', fenced(p.command, INBOX_LIMITS.commandLength));
  }
  if (p.paths !== undefined && p.paths.length > 0) {
    lines.push(
      '',
      'Paths:',
      ...listed(p.paths.map((path) => inlineCode(path, INBOX_LIMITS.pathLength))),
    );
  }
  if (p.ruleReason !== undefined && p.ruleReason.trim() !== '') {
    const rule = p.rule === undefined ? 'the default' : `rule ${p.rule}`;
    lines.push('', `Why it asks (${rule}):`, '', fenced(p.ruleReason, INBOX_LIMITS.reasonLength));
  }
  const options = p.options.map(
    (option) => `${inlineCode(option.name)} (${inlineCode(option.kind, 64)})`,
  );
  if (options.length > 0 || (p.optionsOmitted ?? 0) > 0) {
    lines.push('', 'The options it offered:', ...listed(options, p.optionsOmitted ?? 0));
  }
  const outcome = o.onTimeout === 'allow' ? 'allowed' : 'denied';
  lines.push(
    '',
    'Answer with a comment:',
    '- `/approve` to allow it once',
    '- `/approve always` to allow it, and what the same rule asks, for the rest of the attempt',
    '- `/deny <reason>` to refuse it (the reason is given to the agent)',
    '',
    `When more than one request waits, name this one: ${inlineCode(`/approve ${p.id}`)}, ${inlineCode(`/deny ${p.id} <reason>`)}.`,
    ...whoMayAnswer(o.approvers),
    `If nobody answers by ${inlineCode(p.deadline)}, it is ${outcome} (agent.approvals.on_timeout).`,
  );
  return lines;
}

function questionLines(p: InboxPending, o: RequestContext): string[] {
  return [
    `**The agent asks a question** (run ${inlineCode(o.run)}, request ${inlineCode(p.id)}):`,
    '',
    fenced(p.message ?? p.title, INBOX_LIMITS.messageLength),
    '',
    'Reply to answer: the text of your comment is the answer (quoted lines left out).',
    `Or \`/deny <reason>\` to decline (with the id when more than one request waits: ${inlineCode(`/deny ${p.id} <reason>`)}).`,
    ...whoMayAnswer(o.approvers),
    `If nobody answers by ${inlineCode(p.deadline)}, the question times out unanswered.`,
  ];
}

/**
 * The comment that asks a person: for a permission, what the agent wants to do, the options
 * it offered, how to answer, who may, and what a timeout decides; for a question, the question.
 */
export function requestCommentText(p: InboxPending, o: RequestContext): string {
  const lines = p.kind === 'permission' ? permissionLines(p, o) : questionLines(p, o);
  return `${INBOX_COMMENT_MARKER}\n${lines.join('\n')}\n`;
}

export type ReplyKind =
  | 'approved'
  | 'approved_always'
  | 'denied'
  | 'answered'
  | 'timed_out'
  | 'not_approver'
  | 'already_decided'
  | 'no_request'
  | 'steer_received'
  | 'steering_off'
  | 'stopped'
  | 'decided_in_kubernetes'
  | 'steer_undelivered';

export interface ReplyDetails {
  requestId?: string;
  title?: string;
  by?: string;
  reason?: string;
  decidedBy?: string;
  onTimeout?: 'allow' | 'deny';
}

const request = (d: ReplyDetails): string => {
  const id = d.requestId === undefined ? 'The request' : `Request ${inlineCode(d.requestId)}`;
  return d.title === undefined ? id : `${id} (${inlineCode(d.title, INBOX_LIMITS.titleLength)})`;
};
const who = (name: string | undefined): string => inlineCode(name ?? 'someone');
const reasonBlock = (d: ReplyDetails): string =>
  d.reason === undefined || d.reason.trim() === ''
    ? ''
    : `\n\n${fenced(d.reason, INBOX_LIMITS.reasonLength)}`;

const REPLIES: Record<ReplyKind, (d: ReplyDetails) => string> = {
  approved: (d) => `${request(d)} is approved by ${who(d.by)}.`,
  approved_always: (d) =>
    `${request(d)} is approved by ${who(d.by)}, and so is what the same rule asks for the rest of the attempt.`,
  denied: (d) => `${request(d)} is denied by ${who(d.by)}.${reasonBlock(d)}`,
  answered: (d) => `${request(d)} is answered by ${who(d.by)}; the agent has the answer.`,
  timed_out: (d) =>
    `${request(d)} timed out without an answer: it is ${d.onTimeout === 'allow' ? 'allowed' : 'denied'} (agent.approvals.on_timeout).`,
  not_approver: (d) =>
    `${who(d.by)} is not among this workflow's approvers (agent.approvals.approvers): the reply was not acted upon.`,
  already_decided: (d) =>
    `${request(d)} was already decided${d.decidedBy === undefined ? '' : ` by ${who(d.decidedBy)}`}: the reply of ${who(d.by)} was not acted upon.`,
  no_request: (d) =>
    `${d.requestId === undefined ? 'No request waits' : `${request(d)} does not wait`}: the reply of ${who(d.by)} was not acted upon.`,
  steer_received: (d) =>
    `The steer of ${who(d.by)} is received: the agent gets it as its next turn.`,
  steering_off: (d) =>
    `Steering is off for this workflow (agent.approvals.steering): the /steer or /stop of ${who(d.by)} was not acted upon.`,
  stopped: (d) => `${who(d.by)} stopped the run: it is cancelled.`,
  decided_in_kubernetes: (d) =>
    `${request(d)} was decided in Kubernetes (spec.decisions) by ${who(d.decidedBy ?? d.by)}.${reasonBlock(d)}`,
  steer_undelivered: (d) =>
    `The steer of ${who(d.by)} was not delivered: the run ended before the agent took it.`,
};

/** A reply of the inbox on the issue (a decision taken, or a reply it did not act on). */
export function replyCommentText(kind: ReplyKind, d: ReplyDetails): string {
  return `${INBOX_COMMENT_MARKER}\n${REPLIES[kind](d)}\n`;
}
