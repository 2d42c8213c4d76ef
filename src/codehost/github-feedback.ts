// What people and CI said: reviews, review and conversation comments, check runs and commit
// statuses, every list read page by page (bounded) and every item read on its own, so one
// odd item is a warning, not a failed round.
import { isJsonMap } from '../tracker/github/transport.js';
import type { FetchOptions } from '../tracker/types.js';
import type { Context } from './github-context.js';
import {
  byCreation,
  combineReviews,
  readCheckRun,
  readCommitStatus,
  readIssueComment,
  readReview,
  readReviewComment,
} from './github-normalize.js';
import { CODEHOST_PAGE_SIZE, codehostPages } from './github-pages.js';
import type { CheckResult, PullRequest, PullRequestFeedback } from './types.js';

/** The items a reader accepts; the others are told to onWarning, not thrown. */
function readAll<T>(
  context: Context,
  items: unknown[],
  read: (item: unknown) => T | null,
  what: string,
): T[] {
  const out: T[] = [];
  for (const item of items) {
    const value = read(item);
    if (value !== null) out.push(value);
    else if (!isJsonMap(item) || !['DISMISSED', 'PENDING'].includes(String(item.state))) {
      context.onWarning?.(`GitHub answered ${what} with an item that is not one; left out`);
    }
  }
  return out;
}

function pages(context: Context, path: string, what: string, options: FetchOptions) {
  const url = `${context.repoUrl}${path}?per_page=${CODEHOST_PAGE_SIZE}`;
  return codehostPages(context.transport, url, {
    signal: options.signal,
    maxPages: context.maxPages,
    onWarning: context.onWarning,
    what,
  });
}

export async function feedback(
  context: Context,
  pull: PullRequest,
  options: FetchOptions,
): Promise<PullRequestFeedback> {
  const n = pull.number;
  const [reviewItems, lineItems, conversationItems] = await Promise.all([
    pages(context, `/pulls/${n}/reviews`, `the reviews of #${n}`, options),
    pages(context, `/pulls/${n}/comments`, `the review comments of #${n}`, options),
    pages(context, `/issues/${n}/comments`, `the comments of #${n}`, options),
  ]);
  const reviews = readAll(context, reviewItems, readReview, `the reviews of #${n}`);
  const comments = byCreation([
    ...readAll(context, lineItems, readReviewComment, `the review comments of #${n}`),
    ...readAll(context, conversationItems, readIssueComment, `the comments of #${n}`),
  ]);
  return { reviews, comments, state: combineReviews(reviews) };
}

const listIn =
  (key: string) =>
  (body: unknown): unknown[] | null =>
    isJsonMap(body) && Array.isArray(body[key]) ? body[key] : null;

export async function checks(
  context: Context,
  sha: string,
  options: FetchOptions,
): Promise<CheckResult[]> {
  const ref = encodeURIComponent(sha);
  const read = (path: string, key: string, what: string) =>
    codehostPages(
      context.transport,
      `${context.repoUrl}/commits/${ref}/${path}?per_page=${CODEHOST_PAGE_SIZE}`,
      {
        signal: options.signal,
        maxPages: context.maxPages,
        onWarning: context.onWarning,
        what,
        itemsOf: listIn(key),
      },
    );
  const [runs, statuses] = await Promise.all([
    read('check-runs', 'check_runs', `the check runs of ${sha}`),
    read('status', 'statuses', `the commit statuses of ${sha}`),
  ]);
  return [
    ...readAll(context, runs, readCheckRun, `the check runs of ${sha}`),
    ...readAll(context, statuses, readCommitStatus, `the commit statuses of ${sha}`),
  ];
}
