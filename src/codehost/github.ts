// The GitHub code host: pull requests, reviews, comments and checks over GitHub's REST API
// (and one GraphQL mutation: REST cannot take a pull request out of draft). It rides on the
// GitHub tracker's transport, so reads are conditional (an unchanged answer is a free 304),
// rate limits are read the same way and the token is scrubbed from every message; the
// transport's `codehost` role gives the failures the codehost codes.
import { githubGet, isJsonMap } from '../tracker/github/transport.js';
import type { FetchOptions } from '../tracker/types.js';
import {
  type Context,
  type GithubCodeHostOptions,
  contextOf,
  malformed,
} from './github-context.js';
import { checks, feedback } from './github-feedback.js';
import { findOpenPullRequest, getPullRequest, markReady, openPullRequest } from './github-pulls.js';
import type { BranchComparison, CodeHost } from './types.js';

export { type GithubCodeHostOptions, githubGraphqlUrl } from './github-context.js';

async function identity(context: Context, options: FetchOptions): Promise<string | null> {
  // An installation token cannot read /user (403); it has no login to leave out.
  const answer = await githubGet(context.transport, `${context.apiUrl}/user`, {
    signal: options.signal,
    allow: [403, 404],
  });
  if (answer.status === 403 || answer.status === 404) return null;
  const login = isJsonMap(answer.body) ? answer.body.login : undefined;
  if (typeof login !== 'string') throw malformed(context, 'user');
  return login;
}

async function defaultBranch(context: Context, options: FetchOptions): Promise<string> {
  const answer = await githubGet(context.transport, context.repoUrl, { signal: options.signal });
  const branch = isJsonMap(answer.body) ? answer.body.default_branch : undefined;
  if (typeof branch !== 'string' || branch === '') throw malformed(context, 'repository');
  return branch;
}

/** The head branch's tip, when the comparison's commits do not reach it (a long branch). */
async function branchTip(
  context: Context,
  head: string,
  options: FetchOptions,
): Promise<string | null> {
  const url = `${context.repoUrl}/branches/${encodeURIComponent(head)}`;
  const answer = await githubGet(context.transport, url, { signal: options.signal, allow: [404] });
  if (answer.status === 404) return null;
  const commit = isJsonMap(answer.body) && isJsonMap(answer.body.commit) ? answer.body.commit : {};
  if (typeof commit.sha !== 'string') throw malformed(context, 'branch');
  return commit.sha;
}

async function compareBranches(
  context: Context,
  base: string,
  head: string,
  options: FetchOptions,
): Promise<BranchComparison | null> {
  const url = `${context.repoUrl}/compare/${encodeURIComponent(base)}...${encodeURIComponent(head)}`;
  const answer = await githubGet(context.transport, url, { signal: options.signal, allow: [404] });
  if (answer.status === 404) return null;
  const body = isJsonMap(answer.body) ? answer.body : {};
  const aheadBy = body.ahead_by;
  const commits = Array.isArray(body.commits) ? body.commits : [];
  const mergeBase = isJsonMap(body.merge_base_commit) ? body.merge_base_commit.sha : undefined;
  if (typeof aheadBy !== 'number' || !Number.isSafeInteger(aheadBy) || aheadBy < 0) {
    throw malformed(context, 'comparison');
  }
  // Not ahead: head is base or an ancestor of it, so the merge base is head's tip.
  if (aheadBy === 0) {
    if (typeof mergeBase !== 'string') throw malformed(context, 'comparison');
    return { aheadBy, headSha: mergeBase };
  }
  // Oldest first, and complete only up to GitHub's page of commits.
  const last: unknown = commits.length >= aheadBy ? commits[commits.length - 1] : undefined;
  const sha = isJsonMap(last) ? last.sha : undefined;
  if (typeof sha === 'string') return { aheadBy, headSha: sha };
  const tip = await branchTip(context, head, options);
  return tip === null ? null : { aheadBy, headSha: tip };
}

/** The GitHub (github.com or Enterprise Server) code host of one repository. */
export function createGithubCodeHost(options: GithubCodeHostOptions): CodeHost {
  const context = contextOf(options);
  return {
    kind: 'github',
    repository: options.repository.trim(),
    identity: (o = {}) => identity(context, o),
    defaultBranch: (o = {}) => defaultBranch(context, o),
    compareBranches: (base, head, o = {}) => compareBranches(context, base, head, o),
    findOpenPullRequest: (head, o = {}) => findOpenPullRequest(context, head, o),
    openPullRequest: (input, o = {}) => openPullRequest(context, input, o),
    getPullRequest: (number, o = {}) => getPullRequest(context, number, o),
    markReady: (pull, o = {}) => markReady(context, pull, o),
    feedback: (pull, o = {}) => feedback(context, pull, o),
    checks: (sha, o = {}) => checks(context, sha, o),
  };
}
