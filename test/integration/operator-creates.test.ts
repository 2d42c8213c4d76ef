// What a run does when the apiserver refuses what the controller creates for it: the
// refusal is on the IssueRun at once, and the run goes on once the cause is gone.
import { beforeAll, describe, expect, it } from 'vitest';
import type { IssueRun } from '../../src/api/index.js';
import {
  NAMESPACE,
  createIssueRun,
  createWorkflow,
  finished,
  getRun,
  path,
  runPodNames,
  useOperatorEnv,
  until,
  workflowText,
  type OperatorEnv,
} from './operator-harness.js';

const condition = (run: IssueRun, type: string) =>
  run.status?.conditions?.find((entry) => entry.type === type);

/** Waits until the run is Stalled with this reason, and returns it. */
const stalledWith = (env: OperatorEnv, name: string, reason: string) =>
  until(`IssueRun ${name} to be Stalled with ${reason}`, async () => {
    const run = await getRun(env, name);
    const stalled = condition(run, 'Stalled');
    return stalled?.status === 'True' && stalled.reason === reason ? run : undefined;
  });

describe('refused creates on a real apiserver', () => {
  const current = useOperatorEnv();
  let env: OperatorEnv;
  beforeAll(async () => {
    env = current();
    await createWorkflow(
      env,
      'wf',
      workflowText(env, { prompt: '{{ issue.description }}\n@write done.txt ok' }),
    );
  });

  it('shows a Pod refused by a ResourceQuota at once, and runs when the quota allows it', async () => {
    const quota = `/api/v1/namespaces/${NAMESPACE}/resourcequotas`;
    await env.admin.request({
      method: 'POST',
      path: quota,
      body: {
        apiVersion: 'v1',
        kind: 'ResourceQuota',
        metadata: { name: 'no-pods' },
        spec: { hard: { pods: '0' } },
      },
    });
    // No quota controller runs here: give the quota the status it would compute, which is
    // what the ResourceQuota admission plugin enforces.
    await env.admin.request({
      method: 'PATCH',
      path: `${quota}/no-pods/status`,
      patchType: 'merge',
      body: { status: { hard: { pods: '0' }, used: { pods: '0' } } },
    });
    const created = Date.now();
    await createIssueRun(env, 'quota-1', 'wf', { identifier: 'Q-1', title: 'Over quota' });
    const run = await stalledWith(env, 'quota-1', 'PodCreateFailed');
    expect(Date.now() - created).toBeLessThan(15_000);
    expect(condition(run, 'Succeeded')).toMatchObject({
      status: 'Unknown',
      reason: 'PodCreateFailed',
    });
    expect(run.status?.message).toMatch(
      /the apiserver refused Pod quota-1-0-1 \(403 Forbidden: .*quota/,
    );
    await env.admin.request({ method: 'DELETE', path: `${quota}/no-pods` });
    const done = await finished(env, 'quota-1', 120_000);
    expect(done.status?.phase).toBe('Succeeded');
  });

  it('names a Pod squatting on the run Pod name, and runs once it is gone', async () => {
    await env.admin.request({
      method: 'POST',
      path: path.pods,
      body: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'squat-1-0-1' },
        // Bound to a node that does not exist: nothing runs it.
        spec: { nodeName: 'nowhere', containers: [{ name: 'c', image: 'busybox' }] },
      },
    });
    await createIssueRun(env, 'squat-1', 'wf', { identifier: 'S-1', title: 'Name taken' });
    const run = await stalledWith(env, 'squat-1', 'NameConflict');
    expect(run.status?.message).toContain("Pod squat-1-0-1 exists and is not this IssueRun's");
    expect(run.status?.message).toContain('kubectl delete pod squat-1-0-1 -n default');
    await env.kubectl(
      'delete',
      'pod',
      'squat-1-0-1',
      '-n',
      NAMESPACE,
      '--grace-period=0',
      '--force',
    );
    const done = await finished(env, 'squat-1', 120_000);
    expect(done.status?.phase).toBe('Succeeded');
  });

  it('ends a run whose inputs cannot fit in a ConfigMap with InputsTooLarge, creating nothing', async () => {
    await createIssueRun(env, 'big-1', 'wf', {
      identifier: 'B-1',
      title: 'Long story',
      description: 'y'.repeat(200_000),
      labels: ['ensemble:4'],
    });
    const run = await finished(env, 'big-1');
    expect(condition(run, 'Succeeded')).toMatchObject({
      status: 'False',
      reason: 'InputsTooLarge',
    });
    expect(run.status?.message).toMatch(/take \d+ bytes; a ConfigMap holds at most 1000000/);
    expect(await runPodNames(env, 'big-1')).toEqual([]);
  });
});
