// The GitLab stand-in answers as GitLab documents: every operation the code host uses has a
// route and a documented shape, every answer the stand-in gives in a full review pass fits
// its shape, the checker catches answers that do not, and the token travels in the header
// GitLab's OpenAPI description names.
import { afterEach, describe, expect, it } from 'vitest';
import { createGitlabCodeHost } from '../../../src/codehost/gitlab.js';
import { EtagCache } from '../../../src/tracker/github/cache.js';
import { startGitServer } from '../../support/fakes/git-server.js';
import { gitBranchHeads } from '../../support/fakes/gitlab-git.js';
import { ROUTES } from '../../support/fakes/gitlab-routes.js';
import { type GitlabStandIn, startGitlabServer } from '../../support/fakes/gitlab-server.js';
import {
  checkAnswer,
  documentedOperations,
  documentedTokenHeader,
} from '../../support/fakes/gitlab-shapes.js';

const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function standIn(...args: Parameters<typeof startGitlabServer>): Promise<GitlabStandIn> {
  const started = await startGitlabServer(...args);
  cleanups.push(() => started.shutdown());
  return started;
}

const hostFor = (server: GitlabStandIn) =>
  createGitlabCodeHost(
    { kind: 'gitlab', apiUrl: server.apiUrl, repository: server.project, token: server.token },
    { cache: new EtagCache() },
  );

const SHA = 'f'.repeat(40);

describe('the GitLab stand-in', () => {
  it('has a route for every documented operation and a documented shape for every route', () => {
    const documented = documentedOperations().map(
      (operation) => `${operation.method} ${operation.path}`,
    );
    const routed = ROUTES.map((route) => `${route.method} ${route.template}`);
    expect([...routed].sort()).toEqual([...documented].sort());
    for (const operation of documentedOperations()) {
      expect(operation.doc).toMatch(/^doc\/api\/[a-z_]+\.md$/);
      expect(operation.section).not.toBe('');
    }
  });

  it('answers a whole review pass in the documented shapes', async () => {
    const server = await standIn({ project: 'group/sub/app' });
    const host = hostFor(server);
    server.state.setBranch('lorenz/issue-1', SHA, 2);
    await host.identity();
    await host.defaultBranch();
    await host.compareBranches('main', 'lorenz/issue-1');
    await host.compareBranches('main', 'gone');
    const pull = await host.openPullRequest({
      head: 'lorenz/issue-1',
      base: 'main',
      title: 'T',
      body: 'B',
      draft: true,
    });
    await host.findOpenPullRequest('lorenz/issue-1');
    await host.markReady(pull);
    server.state.setApproved(pull.number, 'alice');
    server.state.setReviewerState(pull.number, 'bob', 'requested_changes');
    server.state.addDiscussionNote(pull.number, {
      body: 'hm',
      author: 'bob',
      position: { new_path: 'a.ts', new_line: 2 },
    });
    server.state.addDiscussionNote(pull.number, {
      body: 'added 1 commit',
      author: 'x',
      system: true,
    });
    await host.feedback(pull);
    server.state.setPipeline(SHA, [
      { name: 'test', status: 'failed', trace: 'boom' },
      { name: 'lint', status: 'success' },
    ]);
    server.state.addCommitStatus(SHA, {
      name: 'ext',
      status: 'pending',
      description: null,
      targetUrl: null,
    });
    await host.checks(SHA);
    server.state.merge(pull.number);
    await host.getPullRequest(pull.number);
    // And the error answers: an unknown merge request, a missing branch.
    await expect(host.getPullRequest(99)).rejects.toMatchObject({ code: 'codehost_status' });

    expect(server.violations).toEqual([]);
    const hit = new Set(server.requests.map((request) => `${request.method} ${request.status}`));
    expect(hit).toEqual(new Set(['GET 200', 'GET 404', 'POST 201', 'PUT 200']));
    // Every route was exercised.
    const paths = server.requests.map((request) => `${request.method} ${request.rawPath}`);
    for (const route of ROUTES) {
      const pattern = new RegExp(
        `^${route.method} /api/v4${route.template.replace(/:[a-z_]+/g, '[^/]+')}$`,
      );
      expect(
        paths.some((path) => pattern.test(path)),
        `${route.method} ${route.template}`,
      ).toBe(true);
    }
  });

  it.each([
    [
      'a merge request without an iid',
      'GET',
      '/projects/:id/merge_requests/:merge_request_iid',
      200,
      { id: 1, title: 't' },
    ],
    [
      'a merge request state GitLab does not have',
      'GET',
      '/projects/:id/merge_requests',
      200,
      [{ state: 'open' }],
    ],
    [
      'a job status GitLab does not have',
      'GET',
      '/projects/:id/pipelines/:pipeline_id/jobs',
      200,
      [{ id: 1, status: 'passed' }],
    ],
    [
      'a reviewer state GitLab does not have',
      'GET',
      '/projects/:id/merge_requests/:merge_request_iid/reviewers',
      200,
      [
        {
          user: { id: 1, username: 'a', name: 'a', state: 'active', web_url: 'u' },
          state: 'lgtm',
          created_at: 't',
        },
      ],
    ],
    ['an error without message or error', 'GET', '/user', 401, { detail: 'no' }],
    ['an undocumented success status', 'POST', '/projects/:id/merge_requests', 200, {}],
    ['an undocumented operation', 'DELETE', '/projects/:id', 204, null],
  ])('catches %s', (_, method, path, status, body) => {
    expect(checkAnswer(method, path, status, body)).not.toEqual([]);
  });

  it('asks for the token in the header GitLab documents, and refuses a request without it', async () => {
    expect(documentedTokenHeader()).toBe('PRIVATE-TOKEN');
    const server = await standIn();
    await hostFor(server).identity();
    expect(server.requests[0]).toMatchObject({ status: 200, privateToken: server.token });
    const bare = await fetch(`${server.apiUrl}/user`);
    expect(bare.status).toBe(401);
    const header = documentedTokenHeader();
    const named = await fetch(`${server.apiUrl}/user`, { headers: { [header]: server.token } });
    expect(named.status).toBe(200);
  });

  it('answers a path that is not URL-encoded with 404, as GitLab does', async () => {
    const server = await standIn({ project: 'group/sub/app' });
    const answer = await fetch(`${server.apiUrl}/projects/group/sub/app`, {
      headers: { 'private-token': server.token },
    });
    expect(answer.status).toBe(404);
  });

  it('paginates with GitLab’s headers', async () => {
    const server = await standIn();
    server.state.addMergeRequest({ sourceBranch: 'a', sourceProjectId: 42 });
    server.state.addMergeRequest({ sourceBranch: 'b', sourceProjectId: 42 });
    server.state.addMergeRequest({ sourceBranch: 'c', sourceProjectId: 42 });
    const answer = await fetch(`${server.apiUrl}/projects/acme%2Fapp/merge_requests?per_page=2`, {
      headers: { 'private-token': server.token },
    });
    expect(answer.headers.get('x-next-page')).toBe('2');
    expect(answer.headers.get('x-total')).toBe('3');
    expect(answer.headers.get('x-total-pages')).toBe('2');
    expect(answer.headers.get('link')).toMatch(/[?&]page=2[^>]*>; rel="next"/);
    expect(((await answer.json()) as unknown[]).length).toBe(2);
  });

  it('takes branch heads from a real git server', async () => {
    const git = await startGitServer();
    cleanups.push(() => git.close());
    await git.createRepo('acme/app');
    const first = await git.commit('acme/app', 'lorenz/issue-3', { 'a.txt': 'one' });
    const head = await git.commit('acme/app', 'lorenz/issue-3', { 'a.txt': 'two' });
    expect(first).not.toBe(head);
    const server = await standIn({ branchHead: gitBranchHeads(git) });
    const host = hostFor(server);
    expect(await host.compareBranches('main', 'lorenz/issue-3')).toEqual({
      aheadBy: 2,
      headSha: head,
    });
    expect(await host.compareBranches('main', 'lorenz/none')).toBeNull();
    expect(server.violations).toEqual([]);
  });

  it('moves an open merge request’s head with pushes to its branch, and keeps a merged one’s', async () => {
    const server = await standIn();
    const host = hostFor(server);
    server.state.setBranch('lorenz/issue-4', SHA, 1);
    const pull = await host.openPullRequest({
      head: 'lorenz/issue-4',
      base: 'main',
      title: 'Issue 4',
      body: '',
      draft: false,
    });
    expect(pull.headSha).toBe(SHA);
    const pushed = 'e'.repeat(40);
    server.state.setBranch('lorenz/issue-4', pushed, 2);
    expect((await host.findOpenPullRequest('lorenz/issue-4'))?.headSha).toBe(pushed);
    server.state.merge(pull.number);
    server.state.setBranch('lorenz/issue-4', 'd'.repeat(40), 3);
    expect((await host.getPullRequest(pull.number)).headSha).toBe(pushed);
    expect(server.violations).toEqual([]);
  });
});
