import type { WakeTarget } from '../shared/wake.js';
import type { WebhookHost } from './verify.js';

/** Which Workflow a delivery was addressed to (from its URL, never from its body). */
export interface WebhookRoute {
  namespace: string;
  workflow: string;
}

const GITHUB_POLL = new Set(['issues', 'issue_comment']);
const GITHUB_REVIEW = new Set([
  'pull_request',
  'pull_request_review',
  'pull_request_review_comment',
  'check_run',
  'check_suite',
  'status',
]);
const GITLAB_REVIEW = new Set(['Merge Request Hook', 'Note Hook', 'Pipeline Hook', 'Job Hook']);
const LINEAR_POLL = new Set(['Issue', 'Comment']);

/** A git ref as a name to look for, or nothing: a branch is a hint, never an instruction. */
const MAX_BRANCH = 255;
function branchName(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const name = value.replace(/^refs\/heads\//, '');
  if (name.length === 0 || name.length > MAX_BRANCH || /[\s\0~^:?*[\\]/.test(name)) {
    return undefined;
  }
  return name;
}

/** `object.a.b` for plain JSON objects; undefined at the first missing step. */
function field(body: unknown, ...path: string[]): unknown {
  let at = body;
  for (const step of path) {
    if (typeof at !== 'object' || at === null || Array.isArray(at)) return undefined;
    at = (at as Record<string, unknown>)[step];
  }
  return at;
}

/** The branch of a GitHub review-side event: the pull request's head, or the suite's. */
function githubBranch(event: string, body: unknown): string | undefined {
  switch (event) {
    case 'pull_request':
    case 'pull_request_review':
    case 'pull_request_review_comment':
      return branchName(field(body, 'pull_request', 'head', 'ref'));
    case 'check_run':
      return branchName(field(body, 'check_run', 'check_suite', 'head_branch'));
    case 'check_suite':
      return branchName(field(body, 'check_suite', 'head_branch'));
    default:
      // A commit status names a SHA, not a branch: every pull request is looked at.
      return undefined;
  }
}

function gitlabBranch(event: string, body: unknown): string | undefined {
  switch (event) {
    case 'Merge Request Hook':
      return branchName(field(body, 'object_attributes', 'source_branch'));
    case 'Note Hook':
      return branchName(field(body, 'merge_request', 'source_branch'));
    case 'Pipeline Hook':
      return branchName(field(body, 'object_attributes', 'ref'));
    case 'Job Hook':
      return branchName(field(body, 'ref'));
    default:
      return undefined;
  }
}

const review = (route: WebhookRoute, branch: string | undefined): WakeTarget => ({
  kind: 'review',
  ...route,
  ...(branch ? { branch } : {}),
});
const poll = (route: WebhookRoute): WakeTarget => ({ kind: 'poll', ...route });

/**
 * What a verified delivery wakes: read from the event's kind (a header, or one body field
 * for Linear and Jira) and, for the review side, the branch it concerns. No content of the
 * delivery (titles, states, comments) is read: whoever wakes reads the state back. Events
 * that concern neither side (a push, GitHub's ping) wake nothing.
 */
export function wakesOf(
  host: WebhookHost,
  headers: Readonly<Record<string, string | undefined>>,
  body: unknown,
  route: WebhookRoute,
): WakeTarget[] {
  switch (host) {
    case 'github': {
      const event = headers['x-github-event'] ?? '';
      if (GITHUB_POLL.has(event)) return [poll(route)];
      if (GITHUB_REVIEW.has(event)) return [review(route, githubBranch(event, body))];
      return [];
    }
    case 'gitlab': {
      const event = headers['x-gitlab-event'] ?? '';
      if (event === 'Issue Hook') return [poll(route)];
      // A note on an issue is the tracker side; on a merge request (or a commit), the review.
      if (event === 'Note Hook' && field(body, 'object_attributes', 'noteable_type') === 'Issue') {
        return [poll(route)];
      }
      if (GITLAB_REVIEW.has(event)) return [review(route, gitlabBranch(event, body))];
      return [];
    }
    case 'linear': {
      const type = field(body, 'type');
      return typeof type === 'string' && LINEAR_POLL.has(type) ? [poll(route)] : [];
    }
    case 'jira': {
      const event = field(body, 'webhookEvent');
      return typeof event === 'string' && /^(jira:issue_|comment_)/.test(event)
        ? [poll(route)]
        : [];
    }
  }
}
