// The review loop end to end, on the local control plane: a Workflow with workspace.git and
// `review:`, the real HTTPS git server and a code host stand-in backed by its branches. The
// first case starts from an issue on a local board: its run's agent pushes its branch and moves
// the issue to In Review; the controller opens the pull request once (a controller restart in
// between opens no second one) and links it in one issue comment; a review comment brings the
// agent back on the same branch with the comment in its prompt; its new commit lands there; an
// approval with green checks moves the issue to Done and ends the loop and the run.
// Table-driven over code hosts (review-hosts.ts): GitHub and GitLab, each with the git
// credential as its users write it.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1EnvVar } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssueRun } from '../../src/api/index.js';
import { startGitServer, type GitServer } from '../support/fakes/git-server.js';
import {
  NAMESPACE,
  agentPodTemplate,
  freePort,
  gatewayOptions,
  path,
  sharedCa,
  until,
  useOperatorEnv,
} from './operator-harness.js';
import { HOSTS, REPO, type HostStandIn } from './review-hosts.js';

const BRANCH = 'lorenz/board-1-add-the-greeting';
/** The board's issue BOARD-1, and the run the Workflow `app`'s poll makes of it. */
const RUN = 'app-board-1';
const ISSUE = `---\nstatus: Todo\nlabels: [agent]\n---\n# Add the greeting\nSay hello.\n`;

describe.each(HOSTS)('the review loop on the operator: $name', (row) => {
  let server: GitServer;
  let host: HostStandIn;
  let shared: string;
  let gitEnv: V1EnvVar[];
  let board: string;
  let toolsPort: number;
  // The tools gateway on a fixed port: the agent moves its issue through it, before and after
  // a controller restart.
  const startController = () => env.startController(gatewayOptions(toolsPort));
  const env = useOperatorEnv(async () => {
    toolsPort = await freePort();
    return gatewayOptions(toolsPort);
  });
  beforeAll(async () => {
    server = await startGitServer({
      addresses: ['127.0.0.1'],
      users: { [row.gitUser]: row.token },
    });
    await server.createRepo(REPO, { private: true, files: { 'README.md': 'app\n' } });
    host = await row.start(server);
    board = await mkdtemp(join(tmpdir(), 'lorenz-review-board-'));
    await writeFile(join(board, 'BOARD-1.md'), ISSUE);
    ({ dir: shared, gitEnv } = await sharedCa(server.caFile, 'lorenz-review-ca-'));
    await env.createSecret('git-creds', { '127.0.0.1': row.credential });
  });
  afterAll(async () => {
    await host?.close();
    await server?.close();
    if (shared) await rm(shared, { recursive: true, force: true });
    if (board) await rm(board, { recursive: true, force: true });
  });

  /** The text of BOARD-1's comments, as the board keeps them (`- <time> agent: <text>`). */
  const boardComments = async () =>
    [...(await readFile(join(board, 'BOARD-1.md'), 'utf8')).matchAll(/^- \S+ agent: (.*)$/gm)].map(
      (match) => match[1],
    );

  /** The run once its first push has opened its pull request. */
  const pullRequestOpened = (name: string) =>
    until(
      'the pull request',
      async () => {
        const run = await env.getRun(name);
        return run.status?.git?.pullRequest ? run : undefined;
      },
      180_000,
    );

  /** The run once review round 1 has been worked: attempt 2 pushed and awaits review again. */
  const firstRoundWorked = (name: string, what: string) =>
    until(
      what,
      async () => {
        const run = await env.getRun(name);
        const slot = run.status?.slots?.[0];
        return run.status?.review?.round === 1 &&
          slot?.attempt === 2 &&
          slot.reason === 'AwaitingReview'
          ? run
          : undefined;
      },
      180_000,
    );

  /**
   * A Workflow of the loop whose round prompt quotes the feedback and pushes a fix. On the
   * board, the agent moves its issue to In Review after its push (which hands the run to the
   * review loop), and approval moves it to Done; else runs are made directly.
   */
  async function reviewWorkflow(name: string, maxRounds: number, onBoard = false): Promise<void> {
    const push = (file: string, message: string) =>
      `@shell echo ${file} >> ${file} && git add ${file} && git commit -qm "${message}" && git push -q origin HEAD`;
    const review = [
      'review:',
      `  host: ${row.name}`,
      `  api_url: ${host.apiUrl}`,
      `  max_rounds: ${maxRounds}`,
      '  poll_interval_ms: 5000',
      ...(onBoard ? ['  on_approved: Done'] : []),
      '  continuation_prompt: |',
      '    Round {{ review.round }}:{% for c in review.comments %} {{ c.author }} said {{ c.body }}{% endfor %}{% for f in checks.failed %} {{ f.name }} failed: {{ f.output }}{% endfor %}',
      `    ${push('fixes.txt', 'Address the review')}`,
    ].join('\n');
    const prompt = ['Work on {{ issue.identifier }}.', push('greeting.txt', 'Add the greeting')];
    // The attempt outlives a few polls after the move: whether a success continues is read
    // from the run's issue state, which the poll (every second) brings from the board.
    if (onBoard) prompt.push('@tool tracker_update_state {"state":"In Review"}', '@sleep 3000');
    const tracker = onBoard
      ? { trackerKind: 'local', tracker: `  path: ${board}`, pollingMs: 1000 }
      : {};
    const text = env
      .workflowText({
        ...tracker,
        prompt: prompt.join('\n'),
      })
      .replace(
        'hooks:\n',
        `workspace:\n  git:\n    repo: ${server.repoUrl(REPO)}\n${review}\nhooks:\n`,
      );
    await env.createWorkflow(name, text, {
      git: { credentialsSecretRef: { name: 'git-creds' } },
      podTemplate: agentPodTemplate({ env: gitEnv }),
    });
  }

  it('from a board issue: opens the pull request once, works a review comment on the same branch, moves the issue to Done on approval', async () => {
    await reviewWorkflow('app', 2, true);

    const opened = await pullRequestOpened(RUN);
    expect(opened.status?.reason, JSON.stringify(opened.status)).toBe('AwaitingReview');
    expect(opened.status?.git?.branch).toBe(BRANCH);
    expect(await server.readFile(REPO, BRANCH, 'greeting.txt')).toBe('greeting.txt\n');
    expect(host.pullCount()).toBe(1);

    // A restart: the new controller reads the pull request back, and opens none.
    await env.controller?.stop();
    await startController();
    const checked = opened.status?.review?.lastCheckTime;
    await until(
      'a look after the restart',
      async () => {
        const run = await env.getRun(RUN);
        return run.status?.review?.lastCheckTime !== checked ? run : undefined;
      },
      30_000,
    );
    expect(host.pullCount()).toBe(1);
    const url = opened.status?.git?.pullRequest?.url ?? '';
    expect(await boardComments()).toEqual([`Pull request for BOARD-1: ${url}`]);

    const number = opened.status?.git?.pullRequest?.number ?? 0;
    host.comment(number, 'please add a farewell');
    const reworked = await firstRoundWorked(RUN, 'the review round to run');
    expect(reworked.status?.review?.roundAttempt).toBe(2);
    const inputs = await env.admin.request<{ data: Record<string, string> }>({
      path: path.configMaps(`${RUN}-inputs-2`),
    });
    const prompt = Object.entries(inputs.data).find(([key]) => key.startsWith('prompt'))?.[1];
    expect(prompt).toContain('Round 1: alice said please add a farewell');
    // The new commit is on the same branch.
    expect(await server.readFile(REPO, BRANCH, 'fixes.txt')).toBe('fixes.txt\n');
    expect(host.pullCount()).toBe(1);

    const head = (await server.branchHead(REPO, BRANCH))?.sha ?? '';
    host.approve(number, head);
    const run: IssueRun = await env.finished(RUN, 60_000);
    expect(run.status?.phase, JSON.stringify(run.status)).toBe('Succeeded');
    expect(run.status?.review?.phase).toBe('Approved');
    expect(run.status?.git?.pullRequest?.headSha).toBe(head);
    // The issue moved on approval; the restart and the round posted no second link.
    const file = await readFile(join(board, 'BOARD-1.md'), 'utf8');
    expect(file).toMatch(/^status: Done$/m);
    expect(await boardComments()).toEqual([`Pull request for BOARD-1: ${url}`]);
    const dump = await env.kubectl('get', 'issueruns.lorenz.dev', '-n', NAMESPACE, '-o', 'json');
    expect(dump).not.toContain(row.token);
  });

  it('works a failing check, and stops with a clear reason when max_rounds is reached', async () => {
    await reviewWorkflow('ci', 1);
    await env.createIssueRun('ci-1', 'ci', { identifier: 'CI-1', title: 'Fix the build' });
    const opened = await pullRequestOpened('ci-1');
    const branch = opened.status?.git?.branch ?? '';
    const first = (await server.branchHead(REPO, branch))?.sha ?? '';
    host.failCheck(first, 'FAIL greeting.test.ts');
    const reworked = await firstRoundWorked('ci-1', 'the round on the failed check');
    expect(reworked.status?.review?.cursor?.failedChecksSha).toBe(first);
    const inputs = await env.admin.request<{ data: Record<string, string> }>({
      path: path.configMaps('ci-1-inputs-2'),
    });
    const prompt = Object.entries(inputs.data).find(([key]) => key.startsWith('prompt'))?.[1];
    expect(prompt).toContain('ci failed: FAIL greeting.test.ts');
    const second = (await server.branchHead(REPO, branch))?.sha ?? '';
    expect(second).not.toBe(first);

    // CI fails again on the fix: one round was all review.max_rounds allows.
    host.failCheck(second, 'FAIL again');
    const run = await env.finished('ci-1', 60_000);
    expect(run.status?.phase, JSON.stringify(run.status)).toBe('Succeeded');
    expect(run.status?.reason).toBe('MaxRoundsReached');
    expect(run.status?.message).toMatch(
      /has new feedback \(1 failed check\(s\)\) after 1 review round\(s\), the most review.max_rounds \(1\) allows: the loop stops/,
    );
    expect(run.status?.review?.phase).toBe('MaxRoundsReached');
    expect(host.pullCount()).toBe(2);
  });
});
