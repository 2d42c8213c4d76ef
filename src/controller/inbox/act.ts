import {
  INBOX_LIMITS,
  InboxReasons,
  rfc3339,
  type InboxStatus,
  type IssueRun,
} from '../../api/index.js';
import type { TrackerComment, TrackerWriter } from '../../tracker/types.js';
import { errorMessage } from '../../workflow/errors.js';
import type { LifecycleEvent } from '../events/lifecycle.js';
import type { InboxPost } from './decide.js';
import { inboxEvent, nameDigest } from './events.js';

/**
 * The inbox's writes to the issue (docs/approvals.md): each post goes out once, marked with
 * its key, so a look that runs again after a restart (its status write lost) finds it among
 * the comments instead of posting it twice. A post the tracker refuses is recorded, never
 * thrown: a request comment is tried again until its deadline, a reply is not.
 */

/** The hidden line a post ends with: its key, as a digest (keys hold tracker ids). */
export const postMark = (key: string): string => `<!-- lorenz:inbox-post ${nameDigest(key)} -->`;

export interface PostResult {
  post: InboxPost;
  /** The comment on the issue (posted now, or found there). */
  comment?: TrackerComment;
  error?: string;
}

/**
 * Posts each comment in order. `comments` (those read this look, if any) are looked through
 * for the post's mark first; without a writer every post is refused.
 */
export async function postAll(
  writer: TrackerWriter | undefined,
  issueId: string,
  posts: readonly InboxPost[],
  comments: readonly TrackerComment[] | null,
): Promise<PostResult[]> {
  const results: PostResult[] = [];
  for (const post of posts) {
    const mark = postMark(post.key);
    const there = comments?.find((comment) => comment.body.includes(mark));
    if (there) {
      results.push({ post, comment: there });
      continue;
    }
    if (!writer) {
      results.push({ post, error: 'the tracker of this Workflow cannot write comments' });
      continue;
    }
    try {
      const comment = await writer.comment(issueId, `${post.body}\n\n${mark}`);
      results.push({ post, comment });
    } catch (error) {
      results.push({ post, error: errorMessage(error) });
    }
  }
  return results;
}

/**
 * The inbox with what the posts became: a request comment's id (or why the tracker refused
 * it, with a TrackerCommentFailed Event the first time), and a refused reply as the inbox's
 * last problem.
 */
export function recordPosts(
  run: IssueRun,
  inbox: InboxStatus,
  results: readonly PostResult[],
  now: Date,
): { inbox: InboxStatus; events: LifecycleEvent[] } {
  const events: LifecycleEvent[] = [];
  const next: InboxStatus = { ...inbox, pending: [...(inbox.pending ?? [])] };
  for (const { post, comment, error } of results) {
    const bounded = error?.slice(0, INBOX_LIMITS.reasonLength);
    if (post.requestId === undefined) {
      if (bounded !== undefined) {
        next.reason = InboxReasons.TrackerCommentFailed;
        next.message = `the tracker refused a reply on the issue: ${bounded}`.slice(
          0,
          INBOX_LIMITS.reasonLength,
        );
      }
      continue;
    }
    const index = next.pending?.findIndex((entry) => entry.id === post.requestId) ?? -1;
    const request = next.pending?.[index];
    if (!next.pending || !request) continue;
    if (comment) {
      const posted = { ...request, commentId: comment.id.slice(0, 256), commentedAt: rfc3339(now) };
      delete posted.commentError;
      next.pending[index] = posted;
      continue;
    }
    if (request.commentError === undefined) {
      const text = `the tracker refused the comment of ${request.kind} ${request.id}: ${bounded ?? ''}; it is tried again until ${request.deadline}`;
      events.push(
        inboxEvent(run, InboxReasons.TrackerCommentFailed, `${request.id}-comment-failed`, text),
      );
    }
    next.pending[index] = { ...request, commentError: bounded ?? 'refused' };
  }
  return { inbox: next, events };
}
