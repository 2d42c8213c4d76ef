// workspace.git on the operator side: the IssueRun works its branch out once, keeps it in
// its status before rendering anything with it, and hands it to every attempt through the
// run's inputs; a run whose repository or branch cannot be named ends before any Pod.
import { describe, expect, it } from 'vitest';
import { Reasons } from '../../../../src/api/index.js';
import { decideBranch } from '../../../../src/controller/issuerun/git-branch.js';
import { loadWorkflowText } from '../../../../src/template/load-workflow.js';
import * as fake from '../../../support/fakes/run-table.js';
import { eachNamedCase } from '../../../support/cases.js';

const { progressing } = fake.runConditions;

/** The fakes' scripted WORKFLOW.md with a workspace.git section (YAML lines under `git:`). */
const gitWorkflow = (...git: string[]): string =>
  fake
    .workflowText()
    .replace('hooks:\n', `workspace:\n  git:\n${git.map((l) => `    ${l}\n`).join('')}hooks:\n`);
const REPO = 'repo: https://git.example.com/acme/app.git';
const gitConfig = (...git: string[]) =>
  loadWorkflowText(gitWorkflow(...git), 'test').config.workspace.git;

const kept = (branch: string) =>
  fake.issueRun({ status: { ...fake.startedStatus(1, 'Running'), git: { branch } } });

describe('the branch of a run', () => {
  eachNamedCase('%s', decideBranch, [
    ['no workspace.git: no branch', null, fake.issueRun(), { kind: 'none' }],
    [
      'first time: rendered from the default template',
      gitConfig(REPO),
      fake.issueRun(),
      { kind: 'new', branch: 'lorenz/eng-1-fix-the-bug' },
    ],
    [
      'first time: rendered from the Workflow template',
      gitConfig(REPO, 'branch: "agent/{{ issue.identifier }}"'),
      fake.issueRun(),
      { kind: 'new', branch: 'agent/ENG-1' },
    ],
    [
      'kept in the status: used as it is, whatever the template and the title say now',
      gitConfig(REPO, 'branch: "agent/{{ issue.title | slug }}"'),
      kept('lorenz/eng-1-old-title'),
      { kind: 'stored', branch: 'lorenz/eng-1-old-title' },
    ],
    [
      'no repository',
      gitConfig('depth: 5'),
      fake.issueRun(),
      {
        kind: 'unresolved',
        reason: Reasons.WorkspaceRepoMissing,
        message: expect.stringContaining('set workspace.git.repo') as unknown as string,
      },
    ],
    [
      'a short repository nothing expands',
      gitConfig('repo: acme/app'),
      kept('lorenz/eng-1'),
      {
        kind: 'unresolved',
        reason: Reasons.WorkspaceRepoNoCloneAddress,
        message: expect.stringContaining('"acme/app" is owner/name') as unknown as string,
      },
    ],
    [
      'a template that renders no branch name',
      gitConfig(REPO, 'branch: "{% if false %}x{% endif %}"'),
      fake.issueRun(),
      {
        kind: 'unresolved',
        reason: Reasons.WorkspaceBranchUnresolved,
        message: expect.stringContaining('it is empty') as unknown as string,
      },
    ],
    [
      'a template that names what the issue does not have',
      gitConfig(REPO, 'branch: "{{ issue.nothing }}"'),
      fake.issueRun(),
      {
        kind: 'unresolved',
        reason: Reasons.WorkspaceBranchUnresolved,
        message: expect.stringContaining('undefined variable: issue.nothing') as unknown as string,
      },
    ],
    [
      'a template that renders a protected branch',
      gitConfig(REPO, 'branch: main'),
      fake.issueRun(),
      {
        kind: 'unresolved',
        reason: Reasons.WorkspaceBranchUnresolved,
        message: expect.stringContaining('a protected branch') as unknown as string,
      },
    ],
    [
      'an issue that does not normalize',
      gitConfig(REPO),
      fake.issueRun({ spec: { issue: { identifier: '', title: 't' } } }),
      {
        kind: 'unresolved',
        reason: Reasons.InputsInvalid,
        message: expect.stringContaining('spec.issue') as unknown as string,
      },
    ],
  ]);
});

const runJson = (branch: string) =>
  expect.stringContaining(`"branch": ${JSON.stringify(branch)}`) as unknown;
const failedPod = fake.runPod({
  phase: 'Failed',
  agent: fake.summary({ succeeded: false, errorCode: 'hook_failed', error: 'boom' }),
});
const attempt2Pod = `POST pods/${fake.podName(0, 2)}`;

const GET_CREDENTIALS = 'GET secrets/git-creds';
const GIT_CREDENTIALS = {
  match: GET_CREDENTIALS,
  answer: { body: { metadata: { name: 'git-creds' } } },
};

const rows: fake.RunRow[] = [
  {
    name: 'the credentials Secret does not exist: no Pod, the run says what it waits for',
    run: fake.issueRun(),
    snapshot: gitWorkflow(REPO),
    workflow: fake.workflow({ git: { credentialsSecretRef: { name: 'git-creds' } } }),
    steps: [
      {
        want: fake.heldStalled(
          Reasons.GitCredentialsNotFound,
          'waiting for Secret git-creds (spec.git.credentialsSecretRef of Workflow wf): not found',
          [GET_CREDENTIALS],
          10_000,
        ),
      },
    ],
  },
  {
    name: 'first reconcile: the branch is stored first, then the inputs carry it and the Pod mounts the credentials',
    run: fake.issueRun(),
    snapshot: gitWorkflow(REPO),
    workflow: fake.workflow({ git: { credentialsSecretRef: { name: 'git-creds' } } }),
    steps: [
      {
        answers: [GIT_CREDENTIALS],
        want: {
          actions: [
            GET_CREDENTIALS,
            fake.STATUS,
            fake.CREATE_INPUTS,
            fake.CREATE_POD(0),
            fake.STATUS,
          ],
          status: {
            phase: 'Pending',
            branch: 'lorenz/eng-1-fix-the-bug',
            inputsConfigMap: `${fake.RUN}-inputs`,
            slots: [`${fake.podName(0)} Pending/Pending`],
          },
          bodies: {
            // The first write: only the branch, before anything was rendered.
            [fake.STATUS]: [
              {
                op: 'add',
                path: '/status',
                value: { git: { branch: 'lorenz/eng-1-fix-the-bug' }, phase: 'Pending' },
              },
            ],
            [fake.CREATE_INPUTS]: { data: { 'run.json': runJson('lorenz/eng-1-fix-the-bug') } },
            [fake.CREATE_POD(0)]: {
              spec: {
                containers: [
                  {
                    command: expect.arrayContaining([
                      '--git-credentials',
                      '/lorenz/git-credentials',
                    ]) as unknown,
                  },
                ],
                volumes: expect.arrayContaining([
                  {
                    name: 'lorenz-git-credentials',
                    secret: { secretName: 'git-creds', defaultMode: 0o440 },
                  },
                ]) as unknown,
              },
            },
          },
        },
      },
    ],
  },
  {
    name: 'no workspace.git: no branch in the status or the inputs, no credentials even with spec.git',
    run: fake.issueRun(),
    workflow: fake.workflow({ git: { credentialsSecretRef: { name: 'git-creds' } } }),
    steps: [
      {
        want: {
          actions: [fake.CREATE_INPUTS, fake.CREATE_POD(0), fake.STATUS],
          status: { branch: undefined },
          bodies: {
            [fake.CREATE_INPUTS]: {
              data: { 'run.json': expect.not.stringContaining('branch') as unknown },
            },
            [fake.CREATE_POD(0)]: fake.withoutVolume('lorenz-git-credentials'),
          },
        },
      },
    ],
  },
  {
    name: 'no repository: Failed WorkspaceRepoMissing, no Pod',
    run: fake.issueRun(),
    snapshot: gitWorkflow('depth: 5'),
    steps: [
      {
        want: fake.runEnded('Failed', Reasons.WorkspaceRepoMissing, {
          message: expect.stringContaining('workspace.git names no repository'),
          slots: [],
        }),
      },
    ],
  },
  {
    name: 'a branch template that cannot render: Failed WorkspaceBranchUnresolved, no Pod',
    run: fake.issueRun(),
    snapshot: gitWorkflow(REPO, 'branch: "{{ issue.nothing }}"'),
    steps: [
      {
        want: fake.runEnded('Failed', Reasons.WorkspaceBranchUnresolved, {
          message: expect.stringContaining('undefined variable: issue.nothing'),
        }),
      },
    ],
  },
  {
    name: 'the issue renamed between attempts: the next attempt keeps the stored branch',
    snapshot: gitWorkflow(REPO),
    run: fake.issueRun({
      spec: {
        retries: 1,
        issue: { identifier: 'ENG-1', title: 'A whole new title', state: 'Todo' },
      },
      status: { ...fake.startedStatus(1, 'Running'), git: { branch: 'lorenz/eng-1-fix-the-bug' } },
    }),
    pods: [failedPod],
    steps: [
      fake.afterLogRead(
        fake.runWrites(
          { reason: Reasons.RetryScheduled, branch: 'lorenz/eng-1-fix-the-bug' },
          { requeueAfter: 10_000 },
        ),
      ),
      {
        advanceMs: 10_000,
        want: {
          actions: [`POST configmaps/${fake.RUN}-inputs-2`, attempt2Pod, fake.STATUS],
          status: {
            conditions: progressing('Pending'),
            branch: 'lorenz/eng-1-fix-the-bug',
            slots: [`${fake.podName(0, 2)} Pending/Pending`],
          },
          bodies: {
            [`POST configmaps/${fake.RUN}-inputs-2`]: {
              data: {
                'run.json': runJson('lorenz/eng-1-fix-the-bug'),
                'prompt-0.md': expect.stringContaining('A whole new title') as unknown,
              },
            },
          },
        },
      },
    ],
  },
];

describe('IssueRun reconciler: git workspaces', () => {
  it.each(rows.map((row) => [row.name, row] as const))('%s', async (_name, row) => {
    await fake.playRun(row);
  });
});
