import type {
  PullRequest,
  PullRequestFeedback,
  Review,
  ReviewComment,
  ReviewState,
} from './types.js';
import { listItems } from './gitlab-pages.js';
import {
  type GitlabNote,
  approvalsSchema,
  discussionSchema,
  noteSchema,
  parseAnswer,
  parseItems,
  reviewerSchema,
} from './gitlab-schemas.js';
import { type GitlabContext, projectUrl } from './gitlab-context.js';
import { gitlabGet } from './gitlab-transport.js';

// GitLab has no review objects with a verdict and a body, as GitHub does. The verdicts come
// from two places: approvals (who approved) and the reviewers list (each reviewer's state,
// `requested_changes` among them). The words come from discussions (notes, some on a diff
// line). Both the approvals and the reviewers endpoints may be missing on an older or a
// restricted instance (404): then they say nothing, and the discussions still count.

/**
 * The verdicts of a merge request's `part` (approvals, reviewers) as `read` finds them in its
 * answer; none where the instance does not have that part (404).
 */
async function optionalVerdicts(
  context: GitlabContext,
  iid: number,
  part: 'approvals' | 'reviewers',
  read: (context: GitlabContext, body: unknown, path: string) => Review[],
  signal: AbortSignal | undefined,
): Promise<Review[]> {
  const url = projectUrl(context, `/merge_requests/${iid}/${part}`);
  const answer = await gitlabGet(context.transport, url, { signal, allow: [404] });
  return answer.status === 404 ? [] : read(context, answer.body, new URL(url).pathname);
}

/** A verdict without words of its own: GitLab's words are in the discussions. */
const bareVerdict = (
  id: string,
  author: string,
  state: Review['state'],
  submittedAt: string | null | undefined,
): Review => ({ id, author, state, body: '', submittedAt: submittedAt ?? null, commitSha: null });

function approvals(context: GitlabContext, body: unknown, path: string): Review[] {
  const parsed = parseAnswer(context.transport, approvalsSchema, body, path);
  return parsed.approved_by.map((entry) =>
    bareVerdict(
      `approval:${entry.user.username}`,
      entry.user.username,
      'approved',
      entry.approved_at,
    ),
  );
}

/** A reviewer's state as a verdict; unreviewed (and unknown) states say nothing. */
function reviewerVerdict(state: string): Review['state'] | null {
  switch (state) {
    case 'requested_changes':
      return 'changes_requested';
    case 'approved':
      return 'approved';
    case 'reviewed':
      return 'commented';
    default:
      return null;
  }
}

function reviewerStates(context: GitlabContext, body: unknown, path: string): Review[] {
  if (!Array.isArray(body)) {
    parseAnswer(context.transport, reviewerSchema.array(), body, path);
    return [];
  }
  const reviewers = parseItems(reviewerSchema, body, 'reviewer', context.onWarning);
  return reviewers.flatMap((reviewer) => {
    const state = reviewerVerdict(reviewer.state);
    if (state === null) return [];
    const id = `reviewer:${reviewer.user.username}:${reviewer.state}`;
    return [bareVerdict(id, reviewer.user.username, state, reviewer.created_at)];
  });
}

/**
 * One review per author: a reviewer's requested_changes outranks their approval (GitLab
 * keeps an approval given before the request), an approval outranks a plain `reviewed`.
 */
function latestPerAuthor(reviews: readonly Review[]): Review[] {
  const rank = { changes_requested: 3, approved: 2, commented: 1 } as const;
  const byAuthor = new Map<string, Review>();
  for (const review of reviews) {
    const key = review.author ?? review.id;
    const held = byAuthor.get(key);
    if (held === undefined || rank[review.state] > rank[held.state]) byAuthor.set(key, review);
  }
  return [...byAuthor.values()];
}

export function combinedState(reviews: readonly Review[]): ReviewState {
  if (reviews.some((review) => review.state === 'changes_requested')) return 'changes_requested';
  if (reviews.some((review) => review.state === 'approved')) return 'approved';
  if (reviews.length > 0) return 'commented';
  return 'none';
}

/** A note as a comment: a diff note names its file and line (the new side, else the old). */
export function noteComment(note: GitlabNote): ReviewComment {
  const position = note.type === 'DiffNote' ? note.position : null;
  return {
    id: String(note.id),
    path: position?.new_path ?? position?.old_path ?? null,
    line: position?.new_line ?? position?.old_line ?? null,
    author: note.author?.username ?? null,
    body: note.body,
    createdAt: note.created_at ?? null,
  };
}

async function discussionComments(
  context: GitlabContext,
  iid: number,
  signal: AbortSignal | undefined,
): Promise<ReviewComment[]> {
  const url = projectUrl(context, `/merge_requests/${iid}/discussions`);
  const discussions = await listItems(
    context,
    url,
    { schema: discussionSchema, what: 'discussion' },
    signal,
  );
  const notes = discussions.flatMap((discussion) =>
    parseItems(noteSchema, discussion.notes, 'note', context.onWarning),
  );
  // System notes ("added 1 commit", "approved this merge request") are GitLab's own log.
  return notes
    .filter((note) => !note.system)
    .map(noteComment)
    .sort(
      (a, b) => (a.createdAt ?? '').localeCompare(b.createdAt ?? '') || Number(a.id) - Number(b.id),
    );
}

export async function gitlabFeedback(
  context: GitlabContext,
  pull: PullRequest,
  signal: AbortSignal | undefined,
): Promise<PullRequestFeedback> {
  const [approved, reviewed, comments] = await Promise.all([
    optionalVerdicts(context, pull.number, 'approvals', approvals, signal),
    optionalVerdicts(context, pull.number, 'reviewers', reviewerStates, signal),
    discussionComments(context, pull.number, signal),
  ]);
  const reviews = latestPerAuthor([...approved, ...reviewed]).sort((a, b) =>
    (a.submittedAt ?? '').localeCompare(b.submittedAt ?? ''),
  );
  return { reviews, comments, state: combinedState(reviews) };
}
