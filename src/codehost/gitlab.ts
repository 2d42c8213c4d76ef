// The GitLab code host: merge requests over REST v4, on gitlab.com or a self-hosted instance
// (apiUrl https://gitlab.example/api/v4, or under a relative root). How it reads GitLab
// (docs/codehosts-gitlab.md):
// - the token goes in PRIVATE-TOKEN; the project is addressed by its URL-encoded path, so
//   `group/sub/project` needs no id look-up;
// - a draft is a title that starts with `Draft:` (GitLab's own marker); markReady takes the
//   prefix off with a PUT of the title;
// - reviews come from approvals and reviewer states, comments from discussions (system
//   notes left out), checks from the newest pipeline's jobs plus other commit statuses;
// - every GET is conditional where GitLab gave an ETag (one cache per process, keyed by
//   token and URL), lists are read at most GITLAB_MAX_PAGES pages.
import type { EtagCache } from '../tracker/github/cache.js';
import { isHttpUrl } from '../tracker/http.js';
import { LorenzError } from '../workflow/errors.js';
import type { CodeHost, CodeHostOptions } from './types.js';
import { gitlabChecks } from './gitlab-checks.js';
import { type GitlabContext, projectUrl } from './gitlab-context.js';
import {
  compareBranches,
  findOpenMergeRequest,
  getMergeRequest,
  markMergeRequestReady,
  openMergeRequest,
} from './gitlab-merge-requests.js';
import { gitlabFeedback } from './gitlab-reviews.js';
import { getChecked, projectSchema, userSchema } from './gitlab-schemas.js';
import { GITLAB_REQUEST_TIMEOUT_MS, SHARED_GITLAB_ETAG_CACHE } from './gitlab-transport.js';

export { withoutDraftPrefix } from './gitlab-merge-requests.js';

/** What tests (and nothing else) may set: the cache, the clock, the timeout. */
export interface GitlabInternals {
  cache?: EtagCache;
  now?: () => number;
  timeoutMs?: number;
}

function invalid(message: string): LorenzError {
  return new LorenzError('invalid_codehost_config', message, { codehost: 'gitlab' });
}

function apiRoot(apiUrl: string): string {
  const url = URL.parse(apiUrl);
  if (url === null) throw invalid('the GitLab API root is not a URL');
  if (!isHttpUrl(url)) {
    throw invalid('the GitLab API root must be an http(s) URL');
  }
  if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    throw invalid('the GitLab API root must be plain (no query, fragment or credentials)');
  }
  return url.toString().replace(/\/+$/, '');
}

function checkRepository(repository: string): string {
  const trimmed = repository.trim().replace(/^\/+|\/+$/g, '');
  const parts = trimmed.split('/');
  if (parts.length < 2 || parts.some((part) => part === '' || part === '.' || part === '..')) {
    throw invalid(
      `the GitLab project must be a path like group/project: ${JSON.stringify(repository)}`,
    );
  }
  return trimmed;
}

function contextOf(options: CodeHostOptions, internals: GitlabInternals): GitlabContext {
  if (options.kind !== 'gitlab') throw invalid(`a GitLab code host cannot be kind ${options.kind}`);
  if (options.token.trim() === '') throw invalid('the GitLab token is empty');
  return {
    transport: {
      apiUrl: apiRoot(options.apiUrl),
      token: options.token,
      fetch: options.fetch ?? globalThis.fetch,
      timeoutMs: internals.timeoutMs ?? GITLAB_REQUEST_TIMEOUT_MS,
      cache: internals.cache ?? SHARED_GITLAB_ETAG_CACHE,
      now: internals.now ?? Date.now,
    },
    repository: checkRepository(options.repository),
    onWarning: options.onWarning ?? (() => undefined),
  };
}

async function defaultBranch(context: GitlabContext, signal?: AbortSignal): Promise<string> {
  const url = projectUrl(context, '');
  const path = new URL(url).pathname;
  const project = await getChecked(context.transport, projectSchema, url, signal);
  if (project.default_branch === null || project.default_branch === '') {
    throw new LorenzError(
      'codehost_response',
      `GitLab project ${context.repository} has no default branch (an empty repository?)`,
      { codehost: 'gitlab', path },
    );
  }
  return project.default_branch;
}

async function identity(context: GitlabContext, signal?: AbortSignal): Promise<string> {
  const url = `${context.transport.apiUrl}/user`;
  return (await getChecked(context.transport, userSchema, url, signal)).username;
}

export function createGitlabCodeHost(
  options: CodeHostOptions,
  internals: GitlabInternals = {},
): CodeHost {
  const context = contextOf(options, internals);
  return {
    kind: 'gitlab',
    repository: context.repository,
    identity: (o) => identity(context, o?.signal),
    defaultBranch: (o) => defaultBranch(context, o?.signal),
    compareBranches: (base, head, o) => compareBranches(context, base, head, o?.signal),
    findOpenPullRequest: (head, o) => findOpenMergeRequest(context, head, o?.signal),
    openPullRequest: (input, o) => openMergeRequest(context, input, o?.signal),
    getPullRequest: (number, o) => getMergeRequest(context, number, o?.signal),
    markReady: (pull, o) => markMergeRequestReady(context, pull.number, o?.signal),
    feedback: (pull, o) => gitlabFeedback(context, pull, o?.signal),
    checks: (sha, o) => gitlabChecks(context, sha, o?.signal),
  };
}
