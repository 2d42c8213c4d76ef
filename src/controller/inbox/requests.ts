import {
  FINISHED,
  INBOX_REQUEST_ANNOTATION_PREFIX,
  INBOX_STEERED_ANNOTATION_PREFIX,
  findCondition,
  inboxRequestSchema,
  type InboxRequest,
  type IssueRun,
} from '../../api/index.js';

/**
 * What the inbox reads off the IssueRun besides its status: the requests the gateway left in
 * annotations, the steer marks of the slots, and whether the run (or a slot's attempt) is
 * past asking anything.
 */

/** One request annotation: the request, or why it cannot be one. */
export type RequestAnnotation =
  { annotation: string; request: InboxRequest } | { annotation: string; error: string };

/** `a1-s0-2` before `a1-s0-10`. */
const natural = (a: string, b: string): number => a.localeCompare(b, 'en', { numeric: true });

/** The run's request annotations, oldest first (askedAt, then id): each parsed, never thrown. */
export function requestAnnotations(run: IssueRun): RequestAnnotation[] {
  const entries = Object.entries(run.metadata.annotations ?? {}).filter(([key]) =>
    key.startsWith(INBOX_REQUEST_ANNOTATION_PREFIX),
  );
  const parsed = entries.map(([annotation, text]): RequestAnnotation => {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return { annotation, error: `annotation ${annotation} is not JSON` };
    }
    const result = inboxRequestSchema.safeParse(value);
    if (!result.success) {
      const issue = result.error.issues[0];
      const where = issue?.path.join('.') || 'the request';
      return { annotation, error: `annotation ${annotation}: ${where}: ${issue?.message ?? ''}` };
    }
    const id = annotation.slice(INBOX_REQUEST_ANNOTATION_PREFIX.length);
    if (result.data.id !== id) {
      return { annotation, error: `annotation ${annotation} holds request ${result.data.id}` };
    }
    return { annotation, request: result.data };
  });
  return parsed.sort((a, b) => {
    if (!('request' in a) || !('request' in b)) return natural(a.annotation, b.annotation);
    const [x, y] = [a.request, b.request];
    return timeOf(x.askedAt, 0) - timeOf(y.askedAt, 0) || natural(x.id, y.id);
  });
}

/** A time of the status or the tracker in ms; `fallback` when it is absent or not a time. */
export function timeOf(text: string | null | undefined, fallback: number): number {
  const ms = Date.parse(text ?? '');
  return Number.isFinite(ms) ? ms : fallback;
}

export function runFinished(run: IssueRun): boolean {
  const phase = run.status?.phase;
  return (
    phase === 'Succeeded' ||
    phase === 'Failed' ||
    findCondition(run.status?.conditions, FINISHED)?.status === 'True'
  );
}

/** Whether the attempt that asked is over: the run ended, or the slot moved on to another. */
export function attemptOver(run: IssueRun, request: { slot: number; attempt: number }): boolean {
  if (runFinished(run)) return true;
  const slot = run.status?.slots?.find((entry) => entry.slot === request.slot);
  return (slot?.attempt ?? request.attempt) > request.attempt;
}

/** The highest steer seq any slot has taken (the gateway's marks; 0: none). */
export function steeredMark(run: IssueRun): number {
  const marks = Object.entries(run.metadata.annotations ?? {})
    .filter(([key, text]) => key.startsWith(INBOX_STEERED_ANNOTATION_PREFIX) && /^\d+$/.test(text))
    .map(([, text]) => Number(text));
  return Math.max(0, ...marks);
}
