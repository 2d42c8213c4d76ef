// Pull requests: the open one of a branch, a new one, one by number, and out of draft.
import { githubFailure, githubGet, githubSend, isJsonMap } from '../tracker/github/transport.js';
import type { FetchOptions } from '../tracker/types.js';
import { type Context, malformed, pullOf } from './github-context.js';
import { readPullRequest } from './github-normalize.js';
import type { NewPullRequest, PullRequest } from './types.js';

export async function findOpenPullRequest(
  context: Context,
  head: string,
  options: FetchOptions,
): Promise<PullRequest | null> {
  const query = new URLSearchParams({ head: `${context.owner}:${head}`, state: 'open' });
  const answer = await githubGet(
    context.transport,
    `${context.repoUrl}/pulls?${query.toString()}`,
    {
      signal: options.signal,
    },
  );
  if (!Array.isArray(answer.body)) throw malformed(context, `the open pulls of ${head}`);
  const pulls = answer.body.map(readPullRequest);
  if (pulls.includes(null)) throw malformed(context, `the open pulls of ${head}`);
  return pulls.find((pull) => pull?.headBranch === head) ?? null;
}

export async function openPullRequest(
  context: Context,
  input: NewPullRequest,
  options: FetchOptions,
): Promise<PullRequest> {
  const { head, base, title, body, draft } = input;
  const answer = await githubSend(
    context.transport,
    'POST',
    `${context.repoUrl}/pulls`,
    { title, head, base, body, draft },
    options.signal,
  );
  return pullOf(context, answer.body, 'the new pull request');
}

async function rawPull(context: Context, number: number, options: FetchOptions): Promise<unknown> {
  const url = `${context.repoUrl}/pulls/${number}`;
  return (await githubGet(context.transport, url, { signal: options.signal })).body;
}

export async function getPullRequest(
  context: Context,
  number: number,
  options: FetchOptions,
): Promise<PullRequest> {
  return pullOf(context, await rawPull(context, number, options), `pull request #${number}`);
}

const READY_MUTATION = `mutation MarkReady($id: ID!) {
  markPullRequestReadyForReview(input: { pullRequestId: $id }) {
    pullRequest { isDraft }
  }
}`;

export async function markReady(
  context: Context,
  pull: PullRequest,
  options: FetchOptions,
): Promise<PullRequest> {
  const raw = await rawPull(context, pull.number, options);
  const current = pullOf(context, raw, `pull request #${pull.number}`);
  if (!current.draft || current.state !== 'open') return current;
  const id = isJsonMap(raw) ? raw.node_id : undefined;
  if (typeof id !== 'string') throw malformed(context, `pull request #${pull.number}`);
  const answer = await githubSend(
    context.transport,
    'POST',
    context.graphqlUrl,
    { query: READY_MUTATION, variables: { id } },
    options.signal,
  );
  const body = isJsonMap(answer.body) ? answer.body : {};
  if (Array.isArray(body.errors) && body.errors.length > 0) {
    const first: unknown = body.errors[0];
    const message = isJsonMap(first) && typeof first.message === 'string' ? first.message : '';
    throw githubFailure(
      context.transport,
      'codehost_status',
      `GitHub refused to mark #${pull.number} ready: ${message}`,
    );
  }
  if (!isJsonMap(body.data)) throw malformed(context, 'the ready mutation');
  return getPullRequest(context, pull.number, options);
}
