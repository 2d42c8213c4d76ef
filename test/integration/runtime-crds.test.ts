import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  installCrds,
  startControlPlane,
  type ControlPlane,
} from '../../hack/cluster/control-plane.js';
import { writeInput } from '../support/child-input.js';
import { createKubeClient } from '../../src/controller/runtime/index.js';
import { createStatusWriter } from '../../src/controller/shared/status-writer.js';
import { ISSUERUNS } from '../../src/controller/shared/resources.js';
import { ISSUE_RUN_COLUMNS } from './operator-harness.js';

/** The column names of a table `kubectl get` printed. */
const headerOf = (table: string) => table.split('\n')[0]?.split(/\s+/).filter(Boolean);

const root = join(import.meta.dirname, '..', '..');
let cp: ControlPlane;

beforeAll(async () => {
  cp = await startControlPlane({ controllers: [] });
  await installCrds(cp, [
    join(root, 'crds/lorenz.dev_workflows.yaml'),
    join(root, 'crds/lorenz.dev_issueruns.yaml'),
  ]);
});
afterAll(async () => {
  await cp?.stop();
});

function kubectl(
  args: string[],
  stdin?: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cp.tools.kubectl, [
      '--kubeconfig',
      cp.kubeconfigPath,
      '-n',
      'default',
      ...args,
    ]);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    // A kubectl that fails before reading closes the pipe: its status and stderr say why.
    writeInput(child.stdin, stdin ?? '').catch(reject);
  });
}

const apply = (manifest: object) => kubectl(['apply', '-f', '-'], JSON.stringify(manifest));

function workflow(name: string, spec: Record<string, unknown>) {
  return { apiVersion: 'lorenz.dev/v1alpha1', kind: 'Workflow', metadata: { name }, spec };
}
function issueRun(name: string, spec: Record<string, unknown>) {
  return { apiVersion: 'lorenz.dev/v1alpha1', kind: 'IssueRun', metadata: { name }, spec };
}
const ISSUE = {
  id: 'i-1',
  identifier: 'ENG-1',
  title: 'Fix the bug',
  description: null,
  state: 'Todo',
  labels: ['bug'],
};

describe('Lorenz CRDs on a real apiserver', () => {
  it('accept valid objects and show the printer columns', async () => {
    expect(
      (
        await apply(
          workflow('wf', { workflow: '---\ntracker: {}\n---\nhi', ttlSecondsAfterFinished: 0 }),
        )
      ).stderr,
    ).toBe('');
    expect(
      (await apply(issueRun('run-1', { workflowRef: { name: 'wf' }, issue: ISSUE }))).code,
    ).toBe(0);
    const status = {
      status: {
        phase: 'Running',
        reason: 'Running',
        attempt: 1,
        turn: 3,
        conditions: [
          {
            type: 'Succeeded',
            status: 'Unknown',
            reason: 'Running',
            message: '',
            lastTransitionTime: '2025-01-01T00:00:00Z',
          },
        ],
      },
    };
    const patched = await kubectl([
      'patch',
      'issuerun',
      'run-1',
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify(status),
    ]);
    expect(patched.stderr).toBe('');
    const table = await kubectl(['get', 'ir']);
    expect(headerOf(table.stdout)).toEqual(ISSUE_RUN_COLUMNS);
    expect(table.stdout).toMatch(/run-1\s+ENG-1\s+wf\s+Running\s+Running\s+1\s+3\s+/);
    const workflows = await kubectl(['get', 'workflows.lorenz.dev']);
    expect(headerOf(workflows.stdout)).toEqual([
      'NAME',
      'READY',
      'CONFIGVALID',
      'SUSPENDED',
      'ACTIVE',
      'TRACKER',
      'CANDIDATES',
      'AGE',
    ]);
    expect(
      (await kubectl(['get', 'lorenz', '-o', 'name'])).stdout.split('\n').filter(Boolean).sort(),
    ).toEqual(['issuerun.lorenz.dev/run-1', 'workflow.lorenz.dev/wf']);
  });

  it.each([
    {
      name: 'an IssueRun without an identifier',
      manifest: issueRun('bad-1', { workflowRef: { name: 'wf' }, issue: { title: 't' } }),
      message: 'spec.issue.identifier: Required value',
    },
    {
      name: 'an IssueRun with an empty identifier',
      manifest: issueRun('bad-2', {
        workflowRef: { name: 'wf' },
        issue: { identifier: '', title: 't' },
      }),
      message:
        'spec.issue.identifier: Invalid value: "": spec.issue.identifier in body should be at least 1 chars long',
    },
    {
      name: 'a Workflow with both workflow and workflowFrom',
      manifest: workflow('bad-3', {
        workflow: 'x',
        workflowFrom: { configMapKeyRef: { name: 'c', key: 'k' } },
      }),
      message: 'exactly one of spec.workflow and spec.workflowFrom must be set',
    },
    {
      name: 'a Workflow with neither',
      manifest: workflow('bad-4', { suspend: true }),
      message: 'exactly one of spec.workflow and spec.workflowFrom must be set',
    },
    {
      name: 'a negative ttlSecondsAfterFinished',
      manifest: workflow('bad-5', { workflow: 'x', ttlSecondsAfterFinished: -1 }),
      message:
        'spec.ttlSecondsAfterFinished: Invalid value: -1: spec.ttlSecondsAfterFinished in body should be greater than or equal to 0',
    },
    {
      name: 'a Workflow whose WORKFLOW.md is longer than 256 KiB',
      manifest: workflow('bad-6', { workflow: 'x'.repeat(262_145) }),
      message: 'spec.workflow: Too long: may not be more than 262144 bytes',
    },
    ...[
      {
        name: 'a pod template projecting a service-account token',
        spec: {
          volumes: [
            {
              name: 'token',
              projected: { sources: [{ serviceAccountToken: { path: 'token' } }] },
            },
          ],
        },
        message:
          'spec.podTemplate.spec.volumes[0].projected: Invalid value: serviceAccountToken projections are refused',
      },
      {
        name: 'an unconfined AppArmor profile',
        spec: { securityContext: { appArmorProfile: { type: 'Unconfined' } } },
        message:
          'spec.podTemplate.spec.securityContext.appArmorProfile: Invalid value: the AppArmor profile must be RuntimeDefault or Localhost',
      },
      {
        name: 'an unconfined seccomp profile on the agent',
        spec: {
          containers: [
            {
              name: 'agent',
              image: 'x',
              securityContext: { seccompProfile: { type: 'Unconfined' } },
            },
          ],
        },
        message:
          'spec.podTemplate.spec.containers[0].securityContext.seccompProfile: Invalid value: the seccomp profile must be RuntimeDefault or Localhost',
      },
      {
        name: 'the spc_t SELinux type',
        spec: { securityContext: { seLinuxOptions: { type: 'spc_t' } } },
        message:
          'spec.podTemplate.spec.securityContext.seLinuxOptions: Invalid value: seLinuxOptions may set only level and a container type',
      },
      {
        name: 'an unsafe sysctl',
        spec: { securityContext: { sysctls: [{ name: 'kernel.msgmax', value: '1' }] } },
        message:
          'spec.podTemplate.spec.securityContext.sysctls[0].name: Invalid value: "kernel.msgmax": only the safe namespaced sysctls',
      },
    ].map(({ name, spec, message }, index) => ({
      name,
      manifest: workflow(`bad-pod-${index}`, {
        workflow: 'x',
        podTemplate: { spec: { containers: [{ name: 'agent', image: 'x' }], ...spec } },
      }),
      message,
    })),
  ])('reject $name at admission with a readable message', async ({ manifest, message }) => {
    const result = await apply(manifest);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(message);
  });

  it('let issue.state and cancelRequested change, and nothing else of the spec', async () => {
    expect(
      (
        await apply(
          issueRun('run-1', {
            workflowRef: { name: 'wf' },
            issue: { ...ISSUE, state: 'Done' },
            cancelRequested: true,
          }),
        )
      ).stderr,
    ).toBe('');
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ workflowRef: { name: 'other' }, issue: ISSUE }, 'spec.workflowRef is immutable'],
      [
        { workflowRef: { name: 'wf' }, issue: { ...ISSUE, title: 'Changed' } },
        'spec.issue.title is immutable',
      ],
      [
        { workflowRef: { name: 'wf' }, issue: { ...ISSUE, url: 'https://x' } },
        'fields of spec.issue other than state cannot be added or removed',
      ],
      [
        { workflowRef: { name: 'wf' }, issue: ISSUE, attempt: 2 },
        'fields of spec other than cancelRequested cannot be added or removed',
      ],
    ];
    for (const [spec, message] of cases) {
      const result = await kubectl(['replace', '-f', '-'], JSON.stringify(issueRun('run-1', spec)));
      expect(result.stderr, JSON.stringify(spec)).toContain(message);
    }
  });

  it('grant the controller service account what config/rbac lists, and nothing more', async () => {
    expect((await kubectl(['create', 'namespace', 'lorenz-system'])).code).toBe(0);
    const applied = await kubectl([
      'apply',
      '-k',
      join(root, 'config/rbac'),
      '-n',
      'lorenz-system',
    ]);
    expect(applied.stderr).toBe('');
    const as = 'system:serviceaccount:lorenz-system:lorenz-controller';
    const cases: Array<[string[], boolean]> = [
      [['create', 'pods', '-n', 'team-a'], true],
      [['get', 'pods', '--subresource=log', '-n', 'team-a'], true],
      [['patch', 'issueruns.lorenz.dev', '--subresource=status', '-n', 'team-a'], true],
      [['create', 'events.events.k8s.io', '-n', 'team-a'], true],
      [['update', 'leases.coordination.k8s.io', '-n', 'lorenz-system'], true],
      [['update', 'leases.coordination.k8s.io', '-n', 'team-a'], false],
      [['create', 'issueruns.lorenz.dev', '-n', 'team-a'], true],
      [['get', 'secrets', '-n', 'team-a'], true],
      [['create', 'secrets', '-n', 'team-a'], true],
      [['delete', 'secrets', '-n', 'team-a'], true],
      [['list', 'secrets', '-n', 'team-a'], false],
      [['watch', 'secrets', '-n', 'team-a'], false],
      [['update', 'secrets', '-n', 'team-a'], false],
      [['update', 'pods', '-n', 'team-a'], false],
      [['create', 'pods', '--subresource=exec', '-n', 'team-a'], false],
    ];
    for (const [args, allowed] of cases) {
      const result = await kubectl(['auth', 'can-i', ...args, `--as=${as}`]);
      expect(result.stdout.trim(), args.join(' ')).toBe(allowed ? 'yes' : 'no');
    }
  });

  it('write a status only to the object it was built for: another under the name refuses it', async () => {
    const run = () =>
      issueRun('run-uid', { workflowRef: { name: 'wf' }, issue: { ...ISSUE, id: 'i-9' } });
    const uidOf = async () =>
      (await kubectl(['get', 'issuerun', 'run-uid', '-o', 'jsonpath={.metadata.uid}'])).stdout;
    expect((await apply(run())).code).toBe(0);
    const first = await uidOf();
    const client = createKubeClient(cp.kubeConfig);
    try {
      const statuses = createStatusWriter(client, ISSUERUNS);
      const key = 'default/run-uid';
      await statuses.write(key, 'default', 'run-uid', { phase: 'Pending' }, 0, { uid: first });
      expect(
        (await kubectl(['get', 'issuerun', 'run-uid', '-o', 'jsonpath={.status.phase}'])).stdout,
      ).toBe('Pending');
      // Deleted and made again under the name: the status built for the first is refused.
      expect((await kubectl(['delete', 'issuerun', 'run-uid'])).code).toBe(0);
      expect((await apply(run())).code).toBe(0);
      expect(await uidOf()).not.toBe(first);
      await expect(
        statuses.write(key, 'default', 'run-uid', { phase: 'Running' }, 0, { uid: first }),
      ).rejects.toThrow();
      expect(
        (await kubectl(['get', 'issuerun', 'run-uid', '-o', 'jsonpath={.status.phase}'])).stdout,
      ).toBe('');
    } finally {
      client.close();
    }
  });
});
