import type {
  PullRequest,
  PullRequestFeedback,
  Review,
  ReviewComment,
  ReviewState,
} from './types.js';
import { fetchPages } from './gitlab-pages.js';
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

async function approvals(
  context: GitlabContext,
  iid: number,
  signal: AbortSignal | undefined,
): Promise<Review[]> {
  const url = projectUrl(context, `/merge_requests/${iid}/approvals`);
  const answer = await gitlabGet(context.transport, url, { signal, allow: [404] });
  if (answer.status === 404) return [];
  const parsed = parseAnswer(
    context.transport,
    approvalsSchema,
    answer.body,
    new URL(url).pathname,
  );
  return parsed.approved_by.map((entry) => ({
    id: `approval:${entry.user.username}`,
    author: entry.user.username,
    state: 'approved',
    body: '',
    submittedAt: entry.approved_at ?? null,
    commitSha: null,
  }));
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

async function reviewerStates(
  context: GitlabContext,
  iid: number,
  signal: AbortSignal | undefined,
): Promise<Review[]> {
  const url = projectUrl(context, `/merge_requests/${iid}/reviewers`);
  const answer = await gitlabGet(context.transport, url, { signal, allow: [404] });
  if (answer.status === 404) return [];
  if (!Array.isArray(answer.body)) {
    parseAnswer(context.transport, reviewerSchema.array(), answer.body, new URL(url).pathname);
    return [];
  }
  const reviewers = parseItems(reviewerSchema, answer.body, 'reviewer', context.onWarning);
  const out: Review[] = [];
  for (const reviewer of reviewers) {
    const state = reviewerVerdict(reviewer.state);
    if (state === null) continue;
    out.push({
      id: `reviewer:${reviewer.user.username}:${reviewer.state}`,
      author: reviewer.user.username,
      state,
      body: '',
      submittedAt: reviewer.created_at ?? null,
      commitSha: null,
    });
  }
  return out;
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
  const pages = await fetchPages(context.transport, url, { signal, onWarning: context.onWarning });
  const discussions = parseItems(discussionSchema, pages.items, 'discussion', context.onWarning);
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
    approvals(context, pull.number, signal),
    reviewerStates(context, pull.number, signal),
    discussionComments(context, pull.number, signal),
  ]);
  const reviews = latestPerAuthor([...approved, ...reviewed]).sort((a, b) =>
    (a.submittedAt ?? '').localeCompare(b.submittedAt ?? ''),
  );
  return { reviews, comments, state: combinedState(reviews) };
}
