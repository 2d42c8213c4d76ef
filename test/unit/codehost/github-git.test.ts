// The GitHub stand-in backed by the real git server: what the code host says about a branch
// (its tip, how far it is ahead, the head of its pull request) is what git says was pushed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGithubCodeHost } from '../../../src/codehost/github.js';
import { EtagCache } from '../../../src/tracker/github/cache.js';
import { type GitServer, startGitServer } from '../../support/fakes/git-server.js';
import { type GithubStandIn, startGithubStandIn } from '../../support/fakes/github-server.js';

const REPO = 'acme/app';
const BRANCH = 'lorenz/issue-29-fix-the-widget';

let git: GitServer;
let standIn: GithubStandIn;

beforeAll(async () => {
  git = await startGitServer();
  await git.createRepo(REPO, { commits: 3 });
  standIn = await startGithubStandIn({
    repository: REPO,
    branchHead: (repo, branch, base) => git.branchHead(repo, branch, base),
  });
});

afterAll(async () => {
  await standIn.close();
  await git.close();
});

describe('the code host over a real repository', () => {
  it('compares, opens and follows the branch as git has it', async () => {
    const host = createGithubCodeHost({
      kind: 'github',
      apiUrl: standIn.url,
      repository: REPO,
      token: standIn.token,
      cache: new EtagCache(),
    });
    expect(await host.compareBranches('main', BRANCH)).toBeNull();
    const first = await git.commit(REPO, BRANCH, { 'a.txt': 'one' });
    const second = await git.commit(REPO, BRANCH, { 'a.txt': 'two' });
    expect(await host.compareBranches('main', BRANCH)).toEqual({ aheadBy: 2, headSha: second });
    const pull = await host.openPullRequest({
      head: BRANCH,
      base: 'main',
      title: 'Fix the widget',
      body: '',
      draft: true,
    });
    expect(pull.headSha).toBe(second);
    const third = await git.commit(REPO, BRANCH, { 'b.txt': 'three' });
    expect((await host.getPullRequest(pull.number)).headSha).toBe(third);
    expect(await host.compareBranches('main', BRANCH)).toEqual({ aheadBy: 3, headSha: third });
    expect(first).not.toBe(third);
    // git counts: a branch one commit past main, and main itself.
    const main = await git.branchSha(REPO, 'main');
    await git.commit(REPO, 'lorenz/one-more', {}, { from: 'main' });
    expect(await git.branchHead(REPO, 'lorenz/one-more')).toMatchObject({ aheadBy: 1 });
    expect(await git.branchHead(REPO, 'main')).toEqual({ sha: main, aheadBy: 0 });
    expect(standIn.violations).toEqual([]);
  });
});
