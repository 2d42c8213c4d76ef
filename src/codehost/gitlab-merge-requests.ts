import { LorenzError } from '../workflow/errors.js';
import type { BranchComparison, NewPullRequest, PullRequest } from './types.js';
import { type GitlabContext, projectUrl } from './gitlab-context.js';
import {
  type GitlabMergeRequest,
  branchSchema,
  compareSchema,
  getChecked,
  mergeRequestSchema,
  parseAnswer,
} from './gitlab-schemas.js';
import { gitlabGet, gitlabSend } from './gitlab-transport.js';

/** The draft markers GitLab recognises at the start of a title. */
const DRAFT_PREFIX = /^\s*(?:\[draft\]|\(draft\)|draft:|draft\s+-)\s*/i;

export function withoutDraftPrefix(title: string): string {
  let out = title;
  while (DRAFT_PREFIX.test(out)) out = out.replace(DRAFT_PREFIX, '');
  return out;
}

const pathOf = (url: string) => new URL(url).pathname;

export function pullRequestOf(mr: GitlabMergeRequest): PullRequest {
  // `locked` is GitLab's brief state while a merge is under way: still open until merged.
  const state = mr.state === 'merged' ? 'merged' : mr.state === 'closed' ? 'closed' : 'open';
  return {
    number: mr.iid,
    url: mr.web_url,
    state,
    draft: mr.draft ?? mr.work_in_progress ?? DRAFT_PREFIX.test(mr.title),
    title: mr.title,
    headBranch: mr.source_branch,
    headSha: mr.sha ?? '',
    baseBranch: mr.target_branch,
  };
}

export async function getMergeRequest(
  context: GitlabContext,
  iid: number,
  signal: AbortSignal | undefined,
): Promise<PullRequest> {
  const url = projectUrl(context, `/merge_requests/${iid}`);
  return pullRequestOf(await getChecked(context.transport, mergeRequestSchema, url, signal));
}

export async function findOpenMergeRequest(
  context: GitlabContext,
  head: string,
  signal: AbortSignal | undefined,
): Promise<PullRequest | null> {
  const url = projectUrl(context, '/merge_requests', { source_branch: head, state: 'opened' });
  const list = await getChecked(context.transport, mergeRequestSchema.array(), url, signal);
  // A fork's merge request into this project can use the same branch name: not ours.
  const own = list.filter(
    (mr) =>
      mr.state === 'opened' &&
      mr.source_branch === head &&
      (mr.source_project_id ?? mr.project_id) === mr.project_id,
  );
  const newest = own.sort((a, b) => b.iid - a.iid)[0];
  return newest === undefined ? null : pullRequestOf(newest);
}

export async function openMergeRequest(
  context: GitlabContext,
  input: NewPullRequest,
  signal: AbortSignal | undefined,
): Promise<PullRequest> {
  const url = projectUrl(context, '/merge_requests');
  const bare = withoutDraftPrefix(input.title);
  const answer = await gitlabSend(
    context.transport,
    'POST',
    url,
    {
      source_branch: input.head,
      target_branch: input.base,
      title: input.draft ? `Draft: ${bare}` : input.title,
      description: input.body,
    },
    { signal, allow: [409] },
  );
  if (answer.status === 409) {
    // One already exists for the branch (opened since the last look): that one is it.
    const found = await findOpenMergeRequest(context, input.head, signal);
    if (found !== null) return found;
    throw new LorenzError(
      'codehost_status',
      `GitLab answered HTTP 409 for ${pathOf(url)} and lists no open merge request of the branch`,
      { codehost: 'gitlab', status: 409, path: pathOf(url) },
    );
  }
  return pullRequestOf(
    parseAnswer(context.transport, mergeRequestSchema, answer.body, pathOf(url)),
  );
}

/** Reads the merge request first: the title to strip is the one it has now. */
export async function markMergeRequestReady(
  context: GitlabContext,
  iid: number,
  signal: AbortSignal | undefined,
): Promise<PullRequest> {
  const current = await getMergeRequest(context, iid, signal);
  if (!current.draft) return current;
  const url = projectUrl(context, `/merge_requests/${iid}`);
  const answer = await gitlabSend(
    context.transport,
    'PUT',
    url,
    { title: withoutDraftPrefix(current.title) },
    { signal },
  );
  return pullRequestOf(
    parseAnswer(context.transport, mergeRequestSchema, answer.body, pathOf(url)),
  );
}

export async function compareBranches(
  context: GitlabContext,
  base: string,
  head: string,
  signal: AbortSignal | undefined,
): Promise<BranchComparison | null> {
  const { transport } = context;
  const branchUrl = projectUrl(context, `/repository/branches/${encodeURIComponent(head)}`);
  const branch = await gitlabGet(transport, branchUrl, { signal, allow: [404] });
  if (branch.status === 404) return null;
  const headSha = parseAnswer(transport, branchSchema, branch.body, pathOf(branchUrl)).commit.id;
  // straight=false compares from the merge base: the commits head has that base lacks.
  const compareUrl = projectUrl(context, '/repository/compare', {
    from: base,
    to: head,
    straight: 'false',
  });
  const parsed = await getChecked(transport, compareSchema, compareUrl, signal);
  return { aheadBy: parsed.commits.length, headSha };
}
