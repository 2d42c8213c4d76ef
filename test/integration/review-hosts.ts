// The code host rows of the review loop's integration test (operator-review.test.ts): each
// starts a stand-in backed by the real git server's branches, and says how a person acts on
// it (a comment on a diff line, an approval with green CI, a failing CI job). Each row also
// says how its git credential reads, so the controller's token lookup is tried as users set
// it: GitHub's bare token, GitLab's `oauth2:<token>`.
import type { GitServer } from '../support/fakes/git-server.js';
import { startGithubStandIn, type GithubStandIn } from '../support/fakes/github-server.js';
import { gitBranchHeads } from '../support/fakes/gitlab-git.js';
import { startGitlabServer } from '../support/fakes/gitlab-server.js';

export const REPO = 'acme/app';

/** A started stand-in, as the test drives it. */
export interface HostStandIn {
  apiUrl: string;
  pullCount(): number;
  comment(number: number, body: string): void;
  approve(number: number, sha: string): void;
  /** CI fails on the commit, with this at the end of its output. */
  failCheck(sha: string, output: string): void;
  close(): Promise<void>;
}

export interface HostRow {
  name: 'github' | 'gitlab';
  token: string;
  /** The git user the git server lets push with the token. */
  gitUser: string;
  /** The git credentials Secret's value for the host. */
  credential: string;
  start(git: GitServer): Promise<HostStandIn>;
}

const GITHUB_TOKEN = 'ghp_operatorReviewToken0123456789';
const GITLAB_TOKEN = 'glpat-operatorReviewToken01234';

export const HOSTS: HostRow[] = [
  {
    name: 'github',
    token: GITHUB_TOKEN,
    gitUser: 'x-access-token',
    credential: GITHUB_TOKEN,
    async start(git) {
      const standIn: GithubStandIn = await startGithubStandIn({
        token: GITHUB_TOKEN,
        repository: REPO,
        branchHead: (repository, branch, base) => git.branchHead(repository, branch, base),
      });
      return {
        apiUrl: standIn.url,
        pullCount: () => standIn.pulls().length,
        comment: (number, body) =>
          void standIn.addReviewComment(number, {
            author: 'alice',
            body,
            path: 'greeting.txt',
            line: 1,
          }),
        approve: (number, sha) => {
          standIn.addPullReview(number, { author: 'alice', state: 'APPROVED', commitSha: sha });
          standIn.setCheckRun(sha, { name: 'ci', status: 'completed', conclusion: 'success' });
        },
        failCheck: (sha, output) =>
          void standIn.setCheckRun(sha, {
            name: 'ci',
            status: 'completed',
            conclusion: 'failure',
            summary: output,
          }),
        close: () => standIn.close(),
      };
    },
  },
  {
    name: 'gitlab',
    token: GITLAB_TOKEN,
    gitUser: 'oauth2',
    credential: `oauth2:${GITLAB_TOKEN}`,
    async start(git) {
      const standIn = await startGitlabServer({
        token: GITLAB_TOKEN,
        project: REPO,
        branchHead: gitBranchHeads(git),
      });
      const { state } = standIn;
      const refOf = (sha: string) =>
        state.mergeRequests.find((mr) => mr.sha === sha)?.sourceBranch ?? 'main';
      return {
        apiUrl: standIn.apiUrl,
        pullCount: () => state.mergeRequests.length,
        comment: (iid, body) =>
          void state.addDiscussionNote(iid, {
            author: 'alice',
            body,
            position: { new_path: 'greeting.txt', new_line: 1 },
          }),
        approve: (iid, sha) => {
          state.setApproved(iid, 'alice');
          state.setPipeline(sha, [{ name: 'ci', status: 'success' }], { ref: refOf(sha) });
        },
        // The job's raw trace, ANSI colours and all, as GitLab keeps it.
        failCheck: (sha, output) =>
          void state.setPipeline(
            sha,
            [{ name: 'ci', status: 'failed', trace: `\u001b[31m${output}\u001b[0m\n` }],
            { ref: refOf(sha) },
          ),
        close: async () => {
          await standIn.shutdown();
          if (standIn.violations.length > 0) {
            throw new Error(`the GitLab stand-in saw: ${standIn.violations.join('; ')}`);
          }
        },
      };
    },
  },
];
