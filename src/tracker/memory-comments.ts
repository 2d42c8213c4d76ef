import { createHash } from 'node:crypto';
import type { BoardComment } from '../workflow/board-comments.js';
import { LorenzError } from '../workflow/errors.js';
import type { Issue } from '../workflow/issue.js';
import type { TrackerComment } from './types.js';

/**
 * The memory board's own comments (`tracker.issues[].comments`, src/workflow/board-comments.ts)
 * as the memory writer lists them: what was left out filled in, so that the same board read
 * again gives the same ids (the inbox acts on a comment once) and a comment without a time is
 * as new as the read (a reply added with `kubectl apply` is newer than what it answers).
 */

/** A board comment's id when it names none: the same for the same comment on every read. */
function boardCommentId(issue: Issue, index: number, comment: BoardComment): string {
  const digest = createHash('sha256')
    .update(JSON.stringify([issue.identifier, index, comment.author, comment.body]))
    .digest('hex');
  return `board-${digest.slice(0, 20)}`;
}

/** The board's comments by issue identifier, oldest first, with their defaults filled in. */
export function boardComments(
  source: readonly Issue[],
  lists: readonly (readonly BoardComment[])[] | undefined,
  now: () => Date,
): Map<string, TrackerComment[]> {
  const byIssue = new Map<string, TrackerComment[]>();
  // Read once, and only for a board that has comments: the clock also stamps the writes.
  let readAt: string | undefined;
  const at = () => (readAt ??= now().toISOString());
  source.forEach((issue, position) => {
    const written = lists?.[position] ?? [];
    if (written.length === 0) return;
    const list = byIssue.get(issue.identifier) ?? [];
    const mapped = written.map((comment, index) => ({
      id: comment.id ?? boardCommentId(issue, index, comment),
      body: comment.body,
      author: comment.author,
      author_id: comment.author_id,
      author_email: comment.author_email,
      created_at: comment.created_at ?? at(),
      updated_at: comment.created_at ?? at(),
    }));
    list.push(...mapped);
    // A stable sort: comments of the same time keep the order they are written in.
    const time = (comment: TrackerComment) => Date.parse(comment.created_at ?? at());
    list.sort((a, b) => time(a) - time(b));
    byIssue.set(issue.identifier, list);
  });
  return byIssue;
}

/** A person's comment is not the agent's to rewrite, as on a hosted tracker. */
export function refuseBoardEdit(
  board: readonly TrackerComment[] | undefined,
  issueId: string,
  commentId: string,
): void {
  if (board?.some((comment) => comment.id === commentId) !== true) return;
  throw new LorenzError(
    'tracker_status',
    `memory tracker: comment ${commentId} of ${issueId} is the board's (WORKFLOW.md), not the agent's`,
    { tracker: 'memory', status: 403 },
  );
}
