import { describe, expect, it } from 'vitest';
import { NAMESPACE, useOperatorEnv } from './operator-harness.js';

/**
 * Run Pods pass Pod Security admission at its strictest: the namespace enforces the
 * `restricted` profile (kube-apiserver's built-in PodSecurity admission), a Pod that breaks
 * it is refused there (so the check can fail), and an IssueRun still runs to Succeeded.
 */
describe('run Pods under pod-security.kubernetes.io/enforce: restricted', () => {
  // The namespace enforces restricted before the controller starts.
  const env = useOperatorEnv(async (env) => {
    await env.kubectl(
      'label',
      'namespace',
      NAMESPACE,
      'pod-security.kubernetes.io/enforce=restricted',
      'pod-security.kubernetes.io/enforce-version=latest',
    );
    return {};
  });

  it('refuses a Pod that breaks the profile in this namespace', async () => {
    const refused = await env
      .kubectl('-n', NAMESPACE, 'run', 'unrestricted', '--image=busybox', '--restart=Never')
      .then(
        () => '',
        (error: Error) => error.message,
      );
    expect(refused).toContain('violates PodSecurity "restricted:latest"');
  });

  it('admits the run Pod and runs it to Succeeded', async () => {
    await env.createWorkflow('restricted', {
      hooks: { after_create: 'echo admitted', before_run: 'id -u' },
    });
    await env.createIssueRun('restricted-1', 'restricted', {
      identifier: 'ENG-1',
      title: 'Run restricted',
    });
    const run = await env.finished('restricted-1');
    expect(run.status?.phase, JSON.stringify(run.status?.conditions)).toBe('Succeeded');
    expect(run.status?.hooks?.[0]?.output).toBe('admitted');
  });
});
