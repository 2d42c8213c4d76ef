// The preconditions of a run's start (start-preconditions.ts), one row per verdict: the
// first that fails decides what the run's status says and when it is looked at again.
import { describe, expect, it } from 'vitest';
import { Reasons, type IssueRun, type Workflow } from '../../../../src/api/index.js';
import {
  checkStart,
  refusalState,
  type StartVerdict,
} from '../../../../src/controller/issuerun/start-preconditions.js';
import type { PodObject } from '../../../../src/controller/shared/resources.js';
import {
  FakeKubeClient,
  fakeWorkflowConfigLoader,
  type AnswerRule,
} from '../../../support/fakes/controller.js';
import {
  SNAPSHOT,
  claimedWorkspace,
  issueRun,
  runPod,
  startedStatus,
  workflow,
  workflowText,
} from '../../../support/fakes/objects.js';

const HOSTS = ['w@host-a', 'w@host-b'];
const withSection = (section: string, options: Parameters<typeof workflowText>[0] = {}) =>
  workflowText(options).replace('hooks:\n', `${section}hooks:\n`);
const GIT = withSection('workspace:\n  git:\n    repo: https://git.example.com/acme/app.git\n');
const NO_REPO = withSection('workspace:\n  git:\n    depth: 5\n');
const SSH = (cap: number, ensembleSize = 1) =>
  withSection(
    `worker:\n  ssh_hosts: ${JSON.stringify(HOSTS)}\n  max_concurrent_agents_per_host: ${cap}\n`,
    { ensembleSize },
  );
const found = (match: string): AnswerRule => ({
  match,
  answer: { body: { metadata: { name: match.split('/').pop() } } },
});
const sshKey = { worker: { sshKeySecretRef: { name: 'worker-ssh' } } };

interface Row {
  name: string;
  workflow?: Workflow | null;
  snapshot?: string;
  run?: IssueRun;
  pods?: PodObject[];
  podsNotCached?: boolean;
  answers?: AnswerRule[];
  want: Partial<StartVerdict> & { start: boolean };
  /** The status the refusal writes: its kind (and phase), or null: nothing written. */
  writes?: string | null;
}

const rows: Row[] = [
  {
    name: 'no Workflow: stalled until it appears',
    workflow: null,
    want: {
      start: false,
      hold: 'stalled',
      reason: Reasons.WorkflowNotFound,
      message: 'Workflow wf not found',
    },
    writes: 'stalled',
  },
  {
    name: 'a suspended Workflow and no Pod yet: pending',
    workflow: workflow({ suspend: true }),
    want: { start: false, hold: 'pending', reason: Reasons.WorkflowSuspended },
    writes: 'progressing Pending',
  },
  {
    name: 'a suspended Workflow whose Pod already exists: the start goes on',
    workflow: workflow({ suspend: true }),
    pods: [runPod({ phase: 'Running', agent: 'running' })],
    want: { start: true },
  },
  {
    name: 'no good configuration: stalled, with the Workflow’s own message',
    workflow: workflow({}, { message: 'tracker.kind is missing' }),
    want: {
      start: false,
      hold: 'stalled',
      reason: Reasons.WorkflowInvalid,
      message: 'Workflow wf has no valid configuration: tracker.kind is missing',
    },
    writes: 'stalled',
  },
  {
    name: 'Pods created a moment ago are not cached: nothing written, looked at in 1 s',
    podsNotCached: true,
    want: { start: false, hold: 'unwritten', requeueAfter: 1000 },
    writes: null,
  },
  {
    name: 'a repository nobody can name: the run fails',
    snapshot: NO_REPO,
    want: { start: false, hold: 'failed', reason: Reasons.WorkspaceRepoMissing },
    writes: 'finished failed',
  },
  {
    name: 'the git credentials Secret is missing: stalled, looked for again in 10 s',
    snapshot: GIT,
    workflow: workflow({ git: { credentialsSecretRef: { name: 'git-creds' } } }),
    want: {
      start: false,
      hold: 'stalled',
      reason: Reasons.GitCredentialsNotFound,
      requeueAfter: 10_000,
    },
    writes: 'stalled',
  },
  {
    name: 'the git credentials are there: the start goes on',
    snapshot: GIT,
    workflow: workflow({ git: { credentialsSecretRef: { name: 'git-creds' } } }),
    answers: [found('GET secrets/git-creds')],
    want: { start: true },
  },
  {
    name: 'the StorageClass is missing: stalled, looked for again in 10 s',
    workflow: workflow(claimedWorkspace('fast-ssd')),
    want: {
      start: false,
      hold: 'stalled',
      reason: Reasons.StorageClassNotFound,
      requeueAfter: 10_000,
    },
    writes: 'stalled',
  },
  {
    name: 'SSH hosts without a key Secret reference: stalled on the user',
    snapshot: SSH(1),
    want: {
      start: false,
      hold: 'stalled',
      reason: Reasons.SshKeySecretRefMissing,
      requeueAfter: 10_000,
    },
    writes: 'stalled',
  },
  {
    name: 'an ensemble the SSH hosts can never take: the run fails',
    snapshot: SSH(1, 3),
    workflow: workflow(sshKey),
    answers: [found('GET secrets/worker-ssh')],
    want: { start: false, hold: 'failed' },
    writes: 'finished failed',
  },
  {
    name: 'SSH hosts with room: the start goes on with the hosts placed',
    snapshot: SSH(1),
    workflow: workflow(sshKey),
    answers: [found('GET secrets/worker-ssh')],
    want: { start: true, ssh: expect.objectContaining({ kind: 'ready', fresh: [0] }) as never },
  },
  {
    name: 'everything there: the start goes on with a new branch',
    snapshot: GIT,
    want: {
      start: true,
      branch: { kind: 'new', branch: 'lorenz/eng-1-fix-the-bug' },
      ssh: { kind: 'local' },
    },
  },
  {
    name: 'a branch the status keeps is used again',
    snapshot: GIT,
    run: issueRun({ status: { ...startedStatus(0), git: { branch: 'lorenz/kept' } } }),
    want: { start: true, branch: { kind: 'stored', branch: 'lorenz/kept' } },
  },
];

describe('the preconditions of a start', () => {
  it.each(rows)('$name', async (row) => {
    const client = new FakeKubeClient();
    client.answer(...(row.answers ?? []));
    const loader = fakeWorkflowConfigLoader({ [SNAPSHOT]: row.snapshot ?? workflowText() });
    const theWorkflow = row.workflow === undefined ? workflow() : row.workflow;
    const verdict = await checkStart(
      {
        client,
        workflow: () => theWorkflow ?? undefined,
        loadWorkflowConfig: loader.load,
        podsNotCached: () => row.podsNotCached ?? false,
        runs: () => [],
      },
      row.run ?? issueRun(),
      row.pods ?? [],
    );
    expect(verdict).toMatchObject(row.want);
    if (verdict.start) return;
    const state = refusalState(verdict);
    const written =
      state === null
        ? null
        : [
            state.kind,
            'phase' in state
              ? state.phase
              : 'succeeded' in state && !state.succeeded
                ? 'failed'
                : '',
          ]
            .filter(Boolean)
            .join(' ');
    expect(written).toBe(row.writes);
  });
});
