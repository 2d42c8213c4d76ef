// The review rows of `npm run bench:dispatch` (docs/review-loop.md, docs/webhooks.md), on the
// operator's integration surroundings: the process node runs the scripted agent, which pushes
// to the real HTTPS git server; the GitHub stand-in is backed by its branches.
//
//   review       a run awaiting review on an open pull request, review.poll_interval_ms
//                60 s: a review comment on the stand-in plus a signed `pull_request_review`
//                delivery → the next attempt's Pod exists. Goal: p99 ≤ 2 s.
//   review-idle  a run awaiting review on an idle pull request, looked at every 5 s for a
//                window: the code host requests it costs, scaled to an hour at the default
//                60 s. Goal: none beyond 304s (free of GitHub's rate limit).
//
//   BENCH_SAMPLES         review rounds timed (10; at most 19: review.max_rounds ≤ 20)
//   BENCH_IDLE_WINDOW_MS  the idle window (60000)
import { chmod, copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { IssueRun } from '../src/api/index.js';
import { startGitServer, type GitServer } from '../test/support/fakes/git-server.js';
import { startGithubStandIn, type GithubStandIn } from '../test/support/fakes/github-server.js';
import {
  createIssueRun,
  createWorkflow,
  getRun,
  NAMESPACE,
  podTemplate,
  startOperatorEnv,
  until,
  workflowText,
  type OperatorEnv,
} from '../test/integration/operator-harness.js';
import {
  createWebhookSecret,
  deliverGithub,
  podExists,
  printLatencyRow,
  WEBHOOK_SECRET_NAME,
  type Percentile,
  type Say,
} from './dispatch-hooks.js';
import { repo } from './reconcile-env.js';

const TOKEN = 'ghp_benchReviewToken0123456789';
const REPO = 'acme/app';
const GOAL_MS = 2000;
const LATENCY_POLL_MS = 60_000;
const IDLE_POLL_MS = 5000;
const DEFAULT_POLL_MS = 60_000;

interface ReviewSurroundings {
  env: OperatorEnv;
  git: GitServer;
  /** World-readable: the agent's Pods run as another uid and read the git server's CA here. */
  shared: string;
}

/** One run of its own Workflow, its own stand-in, awaiting review on its open pull request. */
interface OpenPull {
  host: GithubStandIn;
  run: string;
  number: number;
  branch: string;
  /** status.review.lastCheckTime of the look that opened the pull request. */
  checked: string;
}

async function startSurroundings(say: Say): Promise<ReviewSurroundings> {
  say('starting the control plane, the process node and the git server (review phases)');
  // Bundled into bench/ by hack/run-ts.sh: hack/cluster cannot find tools.sh from there.
  process.env.LORENZ_TOOLS_SCRIPT ??= join(repo, 'hack', 'tools.sh');
  const env = await startOperatorEnv(repo);
  await env.startController({ webhookBindAddress: '127.0.0.1:0' });
  const git = await startGitServer({
    addresses: ['127.0.0.1'],
    users: { 'x-access-token': TOKEN },
  });
  await git.createRepo(REPO, { private: true, files: { 'README.md': 'app\n' } });
  const shared = await mkdtemp(join(tmpdir(), 'lorenz-bench-review-ca-'));
  await chmod(shared, 0o755);
  await copyFile(git.caFile, join(shared, 'ca.pem'));
  await chmod(join(shared, 'ca.pem'), 0o644);
  await env.kubectl(
    'create',
    'secret',
    'generic',
    'git-creds',
    '-n',
    NAMESPACE,
    `--from-literal=127.0.0.1=${TOKEN}`,
  );
  await createWebhookSecret(env.admin, NAMESPACE);
  return { env, git, shared };
}

/** The slot's attempt once the run waits for review again (its attempts done for now). */
const waiting = (run: IssueRun): number | undefined => {
  const slot = run.status?.slots?.[0];
  return run.status?.git?.pullRequest && slot?.reason === 'AwaitingReview'
    ? slot.attempt
    : undefined;
};

/** A Workflow of the loop on its own stand-in, and its run up to its open pull request. */
async function openPull(
  where: ReviewSurroundings,
  name: string,
  review: { pollMs: number; maxRounds: number; webhooks: boolean },
): Promise<OpenPull> {
  const { env, git, shared } = where;
  const host = await startGithubStandIn({
    token: TOKEN,
    repository: REPO,
    branchHead: (repository, branch, base) => git.branchHead(repository, branch, base),
  });
  const [container] = podTemplate.spec.containers;
  if (!container) throw new Error('the harness podTemplate has no agent container');
  const push = (file: string, message: string) =>
    `@shell echo ${file} >> ${file} && git add ${file} && git commit -qm "${message}" && git push -q origin HEAD`;
  const section = [
    'review:',
    '  host: github',
    `  api_url: ${host.url}`,
    `  max_rounds: ${review.maxRounds}`,
    `  poll_interval_ms: ${review.pollMs}`,
    '  continuation_prompt: |',
    '    Round {{ review.round }}.',
    `    ${push('fixes.txt', 'Address the review')}`,
  ].join('\n');
  const text = workflowText(env, {
    prompt: ['Work on {{ issue.identifier }}.', push('greeting.txt', 'Add the greeting')].join(
      '\n',
    ),
  }).replace(
    'hooks:\n',
    `workspace:\n  git:\n    repo: ${git.repoUrl(REPO)}\n${section}\nhooks:\n`,
  );
  await createWorkflow(env, name, text, {
    git: { credentialsSecretRef: { name: 'git-creds' } },
    ...(review.webhooks ? { webhooks: { secretRef: { name: WEBHOOK_SECRET_NAME } } } : {}),
    podTemplate: {
      spec: {
        containers: [
          {
            ...container,
            env: [
              ...container.env,
              { name: 'GIT_SSL_CAINFO', value: join(shared, 'ca.pem') },
              { name: 'GIT_CONFIG_NOSYSTEM', value: '1' },
            ],
          },
        ],
      },
    },
  });
  const run = `${name}-1`;
  await createIssueRun(env, run, name, { identifier: run.toUpperCase(), title: 'Add a greeting' });
  const opened = await until(
    `the pull request of ${run}`,
    async () => {
      const seen = await getRun(env, run);
      return waiting(seen) === 1 && seen.status?.review?.lastCheckTime ? seen : undefined;
    },
    180_000,
  );
  return {
    host,
    run,
    number: opened.status?.git?.pullRequest?.number ?? 0,
    branch: opened.status?.git?.branch ?? '',
    checked: opened.status?.review?.lastCheckTime ?? '',
  };
}

async function reviewLatency(
  where: ReviewSurroundings,
  samples: number,
  percentile: Percentile,
  say: Say,
): Promise<void> {
  const { env } = where;
  const pull = await openPull(where, 'rv', {
    pollMs: LATENCY_POLL_MS,
    maxRounds: samples + 1,
    webhooks: true,
  });
  const port = env.controller?.webhookPort();
  const latencies: number[] = [];
  try {
    for (let round = 1; round <= samples; round += 1) {
      const submitted = performance.now();
      pull.host.addReviewComment(pull.number, {
        author: 'alice',
        body: `round ${round}: please add a farewell`,
        path: 'greeting.txt',
        line: 1,
      });
      await deliverGithub(
        port,
        { namespace: NAMESPACE, workflow: 'rv' },
        'pull_request_review',
        `rv-${round}`,
        {
          action: 'submitted',
          review: { state: 'commented' },
          pull_request: { number: pull.number, head: { ref: pull.branch } },
        },
      );
      await podExists(
        env.admin,
        NAMESPACE,
        `lorenz.dev/issuerun=${pull.run},lorenz.dev/attempt=${round + 1}`,
      );
      latencies.push(performance.now() - submitted);
      say(`review round ${round}/${samples}: ${latencies.at(-1)?.toFixed(0)} ms`);
      // Untimed: the agent works the round and the run waits for review again.
      await until(
        `round ${round} to end`,
        async () => (waiting(await getRun(env, pull.run)) === round + 1 ? true : undefined),
        180_000,
      );
    }
  } finally {
    await pull.host.close();
  }
  printLatencyRow(
    'Review submitted + a pull_request_review delivery → the next attempt’s Pod exists',
    { label: 'review.poll_interval_ms', value: `${LATENCY_POLL_MS} ms` },
    latencies,
    GOAL_MS,
    percentile,
  );
}

/** `GET /repos/o/r/pulls/7` → `GET /repos/{owner}/{repo}/pulls/{n}`: one row per kind. */
const route = (method: string, url: URL) =>
  `${method} ${url.pathname
    .replace(/^\/repos\/[^/]+\/[^/]+/, '/repos/{owner}/{repo}')
    .replace(/\/[0-9a-f]{40}(?=\/|$)/, '/{sha}')
    .replace(/\/\d+(?=\/|$)/g, '/{n}')}`;

async function idleRequests(where: ReviewSurroundings, windowMs: number, say: Say): Promise<void> {
  const pull = await openPull(where, 'idle', {
    pollMs: IDLE_POLL_MS,
    maxRounds: 1,
    webhooks: false,
  });
  try {
    // The first look after the one that opened it fills the ETag cache: counted apart, as it
    // happens once per run and controller start, not every hour.
    const opened = pull.host.requests.length;
    await until(
      'the first look at the open pull request',
      async () => {
        const run = await getRun(where.env, pull.run);
        return run.status?.review?.lastCheckTime !== pull.checked ? true : undefined;
      },
      60_000,
    );
    const from = pull.host.requests.length;
    const hitsBefore = pull.host.conditionalHits;
    const cold = pull.host.requests.slice(opened, from);
    say(`idle pull request: counting the stand-in's requests for ${windowMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, windowMs));
    const seen = pull.host.requests.slice(from);
    const free = pull.host.conditionalHits - hitsBefore;
    // One read of the pull request a look: the looks the window held, whatever the timers did.
    const looks = Math.max(
      1,
      seen.filter(
        (request) => route(request.method, request.url) === 'GET /repos/{owner}/{repo}/pulls/{n}',
      ).length,
    );
    const perHour = (count: number) => (count / looks) * (3_600_000 / DEFAULT_POLL_MS);
    const rows = new Map<string, { all: number; free: number; conditional: number }>();
    for (const request of seen) {
      const key = route(request.method, request.url);
      const row = rows.get(key) ?? { all: 0, free: 0, conditional: 0 };
      row.all += 1;
      if (request.status === 304) row.free += 1;
      if (request.ifNoneMatch !== undefined) row.conditional += 1;
      rows.set(key, row);
    }
    console.log('\n## Code host requests per idle pull request per hour\n');
    console.log(
      `measured: ${seen.length} requests in ${windowMs / 1000} s at review.poll_interval_ms ${IDLE_POLL_MS} (${looks} looks), ${free} answered 304; the first look before it (cache cold): ${cold.length} requests, ${cold.filter((request) => request.status === 304).length} answered 304`,
    );
    console.log(
      `\n${perHour(seen.length).toFixed(0)} requests/hour, of which 304 (free of rate limit): ${perHour(free).toFixed(0)}, goal: 0 beyond 304s (at the default ${DEFAULT_POLL_MS} ms)\n`,
    );
    console.log('| request | per look | answered 304 | sent with If-None-Match |');
    console.log('|---|---:|---:|---:|');
    for (const [key, row] of [...rows].sort(([a], [b]) => a.localeCompare(b))) {
      console.log(
        `| ${key} | ${(row.all / looks).toFixed(1)} | ${row.free} | ${row.conditional} |`,
      );
    }
  } finally {
    await pull.host.close();
  }
}

export async function reviewPhases(
  options: { latency: boolean; idle: boolean; samples: number; idleWindowMs: number },
  percentile: Percentile,
  say: Say,
): Promise<void> {
  const where = await startSurroundings(say);
  try {
    if (options.latency) await reviewLatency(where, Math.min(options.samples, 19), percentile, say);
    if (options.idle) await idleRequests(where, options.idleWindowMs, say);
  } finally {
    await where.env.stop();
    await where.git.close();
    await rm(where.shared, { recursive: true, force: true });
  }
}
