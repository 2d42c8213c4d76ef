import { inboxDecisionSchema, type InboxDecision, type InboxPending } from '../../api/inbox.js';
import { pendingRequests } from '../../api/inbox-decisions.js';
import { formatTable } from './table.js';

/**
 * The inbox of `lorenz describe run`: the requests the agent waits on (what, who may answer:
 * `lorenz approve RUN`, or a reply on the issue; until when) and the recent decisions.
 */

export interface InboxView {
  pending: InboxPending[];
  /** The newest decisions, oldest first. */
  decided: InboxDecision[];
}

const RECENT = 10;

/** status.inbox of a live run (raw JSON, read defensively); undefined when it has none. */
export function inboxViewOf(run: unknown): InboxView | undefined {
  const pending = pendingRequests(run);
  const inbox = (run as { status?: { inbox?: { decided?: unknown } } } | undefined)?.status?.inbox;
  const decided = (Array.isArray(inbox?.decided) ? inbox.decided : []).flatMap((each) => {
    const parsed = inboxDecisionSchema.safeParse(each);
    return parsed.success ? [parsed.data] : [];
  });
  if (pending.length === 0 && decided.length === 0) return undefined;
  return { pending, decided: decided.slice(-RECENT) };
}

const whatOf = (request: InboxPending): string =>
  [request.toolKind, request.command ?? request.message ?? request.title]
    .filter(Boolean)
    .join(': ');

export function formatInboxSection(view: InboxView | undefined): string {
  if (!view) return '';
  const indent = (text: string) => text.replace(/^(?=.)/gm, '  ');
  const pending =
    view.pending.length === 0
      ? '  <none>\n'
      : indent(
          formatTable(
            ['REQUEST', 'KIND', 'SLOT', 'WHAT', 'OPTIONS', 'ASKED', 'DEADLINE'],
            view.pending.map((request) => [
              request.id,
              request.kind,
              String(request.slot),
              whatOf(request),
              request.options.map((option) => option.name).join(', '),
              request.askedAt,
              request.deadline,
            ]),
          ),
        ) +
        '  (answer with `lorenz approve RUN [--request ID] [--deny REASON | --answer TEXT]`, or reply on the issue)\n';
  const decided =
    view.decided.length === 0
      ? '  <none>\n'
      : indent(
          formatTable(
            ['REQUEST', 'VERDICT', 'BY', 'VIA', 'AT', 'REASON/ANSWER'],
            view.decided.map((decision) => [
              decision.requestId,
              decision.verdict,
              decision.by ?? '',
              decision.via,
              decision.at,
              decision.reason ?? decision.answer ?? '',
            ]),
          ),
        );
  return `Waiting requests:\n${pending}Recent decisions:\n${decided}`;
}
