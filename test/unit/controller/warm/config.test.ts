// What a warm snapshot depends on, and what keeps a Workflow from being warmed: the config
// digest moves with what shapes the tree and nothing else; an after_create that reads the
// issue is refused; the warm-up Pod is a run Pod in prepare mode, owned by the Workflow.
import { describe, expect, it } from 'vitest';
import type { Workflow } from '../../../../src/api/index.js';
import { loadWorkflowText } from '../../../../src/template/load-workflow.js';
import { warmConfigDigest } from '../../../../src/controller/warm/config-digest.js';
import { afterCreateDependsOnIssue } from '../../../../src/controller/warm/issue-independence.js';
import { warmUpPod } from '../../../../src/controller/warm/children.js';
import { warmName } from '../../../../src/controller/warm/warm-names.js';
import { parseRunnerInvocation } from '../../../../src/runner/args.js';
import { claimedWorkspace, workflow } from '../../../support/fakes/objects.js';

const config = (hooks: string, extra = '') =>
  loadWorkflowText(
    `---\ntracker: { kind: memory }\nhooks:\n${hooks}${extra}\n---\nDo {{ issue.identifier }}\n`,
    'test',
  ).config;
const GIT = `workspace:\n  git:\n    repo: https://example.com/repo.git\n`;

describe('warmConfigDigest', () => {
  const base = config('  after_create: npm ci', `\n${GIT}`);
  const wf = workflow(claimedWorkspace('fast-ssd'));
  const digest = warmConfigDigest(wf, base);
  const withAgent = (agent: {
    image?: string;
    env?: { name: string; value: string }[];
  }): Workflow =>
    workflow({
      ...claimedWorkspace('fast-ssd'),
      podTemplate: {
        spec: { containers: [{ name: 'agent', image: 'example.com/agent:1', ...agent }] },
      },
    });
  const rows: { name: string; changed: string; same: boolean }[] = [
    { name: 'the same Workflow and config', changed: warmConfigDigest(wf, base), same: true },
    {
      name: 'the prompt and before_run do not shape the tree',
      changed: warmConfigDigest(
        wf,
        loadWorkflowText(
          `---\ntracker: { kind: memory }\nhooks:\n  after_create: npm ci\n  before_run: echo hi\n${GIT}---\nAnother prompt\n`,
          't',
        ).config,
      ),
      same: true,
    },
    {
      name: 'after_create',
      changed: warmConfigDigest(wf, config('  after_create: make', `\n${GIT}`)),
      same: false,
    },
    {
      name: 'the hook timeout',
      changed: warmConfigDigest(
        wf,
        config('  after_create: npm ci\n  timeout_ms: 1000', `\n${GIT}`),
      ),
      same: false,
    },
    {
      name: 'workspace.git',
      changed: warmConfigDigest(wf, config('  after_create: npm ci')),
      same: false,
    },
    {
      name: 'the agent image',
      changed: warmConfigDigest(withAgent({ image: 'example.com/agent:2' }), base),
      same: false,
    },
    {
      name: 'the agent env',
      changed: warmConfigDigest(withAgent({ env: [{ name: 'A', value: '1' }] }), base),
      same: false,
    },
    {
      name: 'the claim template',
      changed: warmConfigDigest(workflow(claimedWorkspace('slow')), base),
      same: false,
    },
  ];
  it.each(rows.map((row) => [row.name, row] as const))('%s', (_name, row) => {
    expect(row.changed === digest).toBe(row.same);
    expect(row.changed).toMatch(/^sha256:[0-9a-f]{64}$/);
  });
});

describe('afterCreateDependsOnIssue', () => {
  const rows: { name: string; hook: string; refused: boolean }[] = [
    { name: 'no after_create', hook: '  before_run: echo {{ issue.identifier }}', refused: false },
    { name: 'a plain command', hook: '  after_create: npm ci && make setup', refused: false },
    {
      name: 'a template that does not read the issue',
      hook: "  after_create: echo {{ 'x' | upcase }}",
      refused: false,
    },
    { name: 'the identifier', hook: '  after_create: echo {{ issue.identifier }}', refused: true },
    {
      name: 'the labels',
      hook: '  after_create: echo {{ issue.labels | size }}',
      refused: true,
    },
    {
      name: 'the branch',
      hook: '  after_create: git checkout {{ issue.branch_name }}',
      refused: true,
    },
  ];
  it.each(rows.map((row) => [row.name, row] as const))('%s', (_name, row) => {
    const why = afterCreateDependsOnIssue(config(row.hook));
    if (row.refused) expect(why).toMatch(/^hooks\.after_create depends on the issue/);
    else expect(why).toBeNull();
  });
});

describe('the warm-up Pod', () => {
  const wf = workflow({
    ...claimedWorkspace('fast-ssd'),
    git: { credentialsSecretRef: { name: 'git-creds' } },
  });
  const make = (unlessCommit?: string) =>
    warmUpPod({
      workflow: wf,
      config: config('  after_create: npm ci', `\n${GIT}`),
      name: warmName('wf', 4),
      operatorImage: 'ghcr.io/lorenz-dev/lorenz:0.1.0',
      inputsDigest: 'sha256:in',
      configDigest: 'sha256:cfg',
      unlessCommit,
    });

  it('runs the runner in prepare mode on its own claim, with the git credentials, owned by the Workflow', () => {
    const pod = make();
    expect(pod.metadata?.name).toBe('wf-warm-4');
    expect(pod.metadata?.labels).toMatchObject({
      'lorenz.dev/warm-of': 'wf',
      'app.kubernetes.io/managed-by': 'lorenz',
    });
    expect(pod.metadata?.labels).not.toHaveProperty('lorenz.dev/issuerun');
    expect(pod.metadata?.annotations).toMatchObject({
      'lorenz.dev/warm-config-digest': 'sha256:cfg',
    });
    expect(pod.metadata?.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'Workflow', name: 'wf', uid: 'uid-wf-1', controller: true }),
    ]);
    const agent = pod.spec?.containers[0];
    expect(agent?.command).toEqual([
      'sh',
      '/lorenz-bin/lorenz',
      'runner',
      '--inputs',
      '/lorenz/inputs',
      '--workspace',
      '/workspace',
      '--inputs-digest-file',
      '/lorenz/podinfo/inputs-digest',
      '--prepare',
      '--git-credentials',
      '/lorenz/git-credentials',
    ]);
    // The runner in the Pod takes these flags as a warm-up (it refuses a run's flags there).
    const invocation = parseRunnerInvocation(agent?.command?.slice(3) ?? []);
    expect(invocation.mode).toBe('prepare');
    expect(pod.spec?.volumes).toEqual(
      expect.arrayContaining([
        { name: 'workspace', persistentVolumeClaim: { claimName: 'wf-warm-4' } },
        { name: 'lorenz-inputs', configMap: { name: 'wf-warm-4', defaultMode: 0o444 } },
        { name: 'lorenz-git-credentials', secret: { secretName: 'git-creds', defaultMode: 0o440 } },
      ]),
    );
    expect(pod.spec?.securityContext).toMatchObject({ runAsNonRoot: true });
    expect(pod.spec?.initContainers?.[0]?.name).toBe('install-runner');
  });

  it('a head check adds --unless-commit, which the runner takes, and has no claim: an emptyDir', () => {
    const check = make('a'.repeat(40));
    expect(check.spec?.volumes).toEqual(
      expect.arrayContaining([{ name: 'workspace', emptyDir: {} }]),
    );
    expect(JSON.stringify(check.spec?.volumes)).not.toContain('persistentVolumeClaim');
    const command = check.spec?.containers[0]?.command ?? [];
    expect(command).toEqual(
      expect.arrayContaining(['--prepare', '--unless-commit', 'a'.repeat(40)]),
    );
    expect(parseRunnerInvocation(command.slice(3))).toMatchObject({
      mode: 'prepare',
      args: { unlessCommit: 'a'.repeat(40) },
    });
  });

  it('names are bounded like Pod names', () => {
    expect(warmName('w'.repeat(80), 12).length).toBeLessThanOrEqual(63);
    expect(warmName('w'.repeat(80), 12)).toMatch(/-warm-12$/);
  });
});
