import type { TrackerComment } from '../../tracker/types.js';

/** Who may answer, steer and stop: agent.approvals.approvers against a comment's author. */

const normal = (value: string): string => value.trim().toLowerCase();

/**
 * Empty list: anyone. Else the comment's author_id, author (login/name) or author_email
 * equals an entry, trimmed and case-insensitive. A blank entry or a blank author field
 * matches nothing, so a tracker that leaves the author out never lets anyone in.
 */
export function isApprover(approvers: readonly string[], comment: TrackerComment): boolean {
  if (approvers.length === 0) return true;
  const wanted = new Set(approvers.map(normal).filter((entry) => entry !== ''));
  const authors = [comment.author_id, comment.author, comment.author_email]
    .filter((value): value is string => typeof value === 'string')
    .map(normal)
    .filter((value) => value !== '');
  return authors.some((author) => wanted.has(author));
}

/** Who wrote it, for status and replies: author, else author_email, else author_id, else "someone". */
export function authorOf(comment: TrackerComment): string {
  for (const value of [comment.author, comment.author_email, comment.author_id]) {
    if (typeof value === 'string' && value.trim() !== '') return value.trim();
  }
  return 'someone';
}
