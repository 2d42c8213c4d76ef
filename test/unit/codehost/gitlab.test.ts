import { describe, expect, it } from 'vitest';
import { createGitlabCodeHost, withoutDraftPrefix } from '../../../src/codehost/gitlab.js';
import { gitlabHarnessPerTest } from '../../support/fakes/gitlab-host.js';
import { eachCase } from '../../support/cases.js';

const start = gitlabHarnessPerTest();

const SHA = 'a'.repeat(40);

describe('the GitLab code host: the project and its branches', () => {
  it('names the token user, the default branch and how far a branch is ahead', async () => {
    const { host, standIn } = await start();
    standIn.state.setBranch('lorenz/issue-7', SHA, 3);
    expect(host.kind).toBe('gitlab');
    expect(host.repository).toBe('acme/app');
    expect(await host.identity()).toBe('lorenz-bot');
    expect(await host.defaultBranch()).toBe('main');
    expect(await host.compareBranches('main', 'lorenz/issue-7')).toEqual({
      aheadBy: 3,
      headSha: SHA,
    });
    const compare = standIn.requests.find((request) =>
      request.rawPath.endsWith('/repository/compare'),
    );
    expect(compare?.query.get('from')).toBe('main');
    expect(compare?.query.get('to')).toBe('lorenz/issue-7');
    // The branch name is one path segment: its slash is encoded.
    expect(standIn.requests.map((request) => request.rawPath)).toContain(
      '/api/v4/projects/acme%2Fapp/repository/branches/lorenz%2Fissue-7',
    );
  });

  it('answers null for a branch that was never pushed', async () => {
    const { host } = await start();
    expect(await host.compareBranches('main', 'lorenz/nothing')).toBeNull();
  });

  it('says so when the project has no default branch (an empty repository)', async () => {
    const { host, standIn } = await start();
    standIn.defaultBranch = null;
    await expect(host.defaultBranch()).rejects.toMatchObject({ code: 'codehost_response' });
  });

  it('addresses a project in nested groups by its encoded path', async () => {
    const { host, standIn } = await start({ project: 'platform/backend/services/app' });
    expect(host.repository).toBe('platform/backend/services/app');
    expect(await host.defaultBranch()).toBe('main');
    expect(standIn.requests[0]?.rawPath).toBe(
      '/api/v4/projects/platform%2Fbackend%2Fservices%2Fapp',
    );
  });

  it('reaches a self-hosted instance under a relative URL root', async () => {
    const { host, standIn } = await start({ apiPath: '/gitlab/api/v4' });
    expect(standIn.apiUrl).toMatch(/\/gitlab\/api\/v4$/);
    expect(await host.identity()).toBe('lorenz-bot');
    expect(await host.defaultBranch()).toBe('main');
    expect(standIn.requests.map((request) => request.rawPath)).toEqual([
      '/gitlab/api/v4/user',
      '/gitlab/api/v4/projects/acme%2Fapp',
    ]);
  });

  it('takes an API root with a trailing slash', async () => {
    const { host, standIn } = await start();
    const slashed = createGitlabCodeHost({
      kind: 'gitlab',
      apiUrl: `${standIn.apiUrl}/`,
      repository: standIn.project,
      token: standIn.token,
    });
    expect(await slashed.defaultBranch()).toBe(await host.defaultBranch());
  });
});

describe('the GitLab code host: merge requests', () => {
  it('opens a draft merge request with the Draft: prefix, finds it, and marks it ready', async () => {
    const { host, standIn } = await start();
    standIn.state.setBranch('lorenz/issue-7', SHA, 1);
    expect(await host.findOpenPullRequest('lorenz/issue-7')).toBeNull();
    const opened = await host.openPullRequest({
      head: 'lorenz/issue-7',
      base: 'main',
      title: 'Fix the parser',
      body: 'Closes #7',
      draft: true,
    });
    expect(opened).toMatchObject({
      number: 1,
      state: 'open',
      draft: true,
      title: 'Draft: Fix the parser',
      headBranch: 'lorenz/issue-7',
      headSha: SHA,
      baseBranch: 'main',
    });
    expect(opened.url).toMatch(/\/acme\/app\/-\/merge_requests\/1$/);
    expect(standIn.state.openMergeRequest('lorenz/issue-7')?.description).toBe('Closes #7');
    expect(await host.findOpenPullRequest('lorenz/issue-7')).toEqual(opened);

    const ready = await host.markReady(opened);
    expect(ready).toMatchObject({ number: 1, draft: false, title: 'Fix the parser' });
    const put = standIn.requests.find((request) => request.method === 'PUT');
    expect(put?.body).toEqual({ title: 'Fix the parser' });
    // Ready already: nothing is written again.
    await host.markReady(ready);
    expect(standIn.requests.filter((request) => request.method === 'PUT')).toHaveLength(1);
  });

  it('opens a ready merge request with the title as given', async () => {
    const { host } = await start();
    const opened = await host.openPullRequest({
      head: 'feature',
      base: 'main',
      title: 'Add a flag',
      body: '',
      draft: false,
    });
    expect(opened).toMatchObject({ draft: false, title: 'Add a flag', headSha: '' });
  });

  it('returns the open merge request when one already exists for the branch (409)', async () => {
    const { host, standIn } = await start();
    const existing = standIn.state.addMergeRequest({
      sourceBranch: 'feature',
      sourceProjectId: 42,
    });
    const opened = await host.openPullRequest({
      head: 'feature',
      base: 'main',
      title: 'Again',
      body: '',
      draft: true,
    });
    expect(opened.number).toBe(existing.iid);
    expect(standIn.requests.some((request) => request.status === 409)).toBe(true);
  });

  it('skips a fork merge request from a branch of the same name', async () => {
    const { host, standIn } = await start();
    standIn.state.addMergeRequest({ sourceBranch: 'feature', sourceProjectId: 99 });
    expect(await host.findOpenPullRequest('feature')).toBeNull();
  });

  it.each([
    ['opened', 'open'],
    ['locked', 'open'],
    ['merged', 'merged'],
    ['closed', 'closed'],
  ] as const)('reads a merge request that is %s as %s', async (gitlabState, state) => {
    const { host, standIn } = await start();
    const mr = standIn.state.addMergeRequest({ sourceBranch: 'feature', sourceProjectId: 42 });
    mr.state = gitlabState;
    expect((await host.getPullRequest(mr.iid)).state).toBe(state);
  });

  it('follows a merge and a close made on GitLab', async () => {
    const { host, standIn } = await start();
    const first = standIn.state.addMergeRequest({ sourceBranch: 'one', sourceProjectId: 42 });
    const second = standIn.state.addMergeRequest({ sourceBranch: 'two', sourceProjectId: 42 });
    expect((await host.getPullRequest(first.iid)).state).toBe('open');
    standIn.state.merge(first.iid);
    standIn.state.close(second.iid);
    expect((await host.getPullRequest(first.iid)).state).toBe('merged');
    expect((await host.getPullRequest(second.iid)).state).toBe('closed');
    expect(await host.findOpenPullRequest('two')).toBeNull();
  });

  eachCase('takes the draft marker off %j', withoutDraftPrefix, [
    ['Draft: Fix it', 'Fix it'],
    ['draft:Fix it', 'Fix it'],
    ['[Draft] Fix it', 'Fix it'],
    ['(Draft) Fix it', 'Fix it'],
    ['Draft: Draft: Fix it', 'Fix it'],
    ['Fix the draft: later', 'Fix the draft: later'],
  ]);
});
