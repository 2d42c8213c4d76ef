// What a run does when the apiserver refuses what the controller creates for it: the
// refusal is on the IssueRun at once, and the run goes on once the cause is gone.
import { beforeAll, describe, expect, it } from 'vitest';
import type { IssueRun } from '../../src/api/index.js';
import { NAMESPACE, path, until, useOperatorEnv, type OperatorEnv } from './operator-harness.js';

const condition = (run: IssueRun, type: string) =>
  run.status?.conditions?.find((entry) => entry.type === type);

/** Waits until the run is Stalled with this reason, and returns it. */
const stalledWith = (env: OperatorEnv, name: string, reason: string) =>
  until(`IssueRun ${name} to be Stalled with ${reason}`, async () => {
    const run = await env.getRun(name);
    const stalled = condition(run, 'Stalled');
    return stalled?.status === 'True' && stalled.reason === reason ? run : undefined;
  });

describe('refused creates on a real apiserver', () => {
  const env = useOperatorEnv();
  beforeAll(async () => {
    await env.createWorkflow('wf', { prompt: '{{ issue.description }}\n@write done.txt ok' });
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
    await env.mergePatch(`${quota}/no-pods/status`, {
      status: { hard: { pods: '0' }, used: { pods: '0' } },
    });
    const created = Date.now();
    await env.createIssueRun('quota-1', 'wf', { identifier: 'Q-1', title: 'Over quota' });
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
    const done = await env.finished('quota-1', 120_000);
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
    await env.createIssueRun('squat-1', 'wf', { identifier: 'S-1', title: 'Name taken' });
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
    const done = await env.finished('squat-1', 120_000);
    expect(done.status?.phase).toBe('Succeeded');
  });

  it('a run deleted and made again waits for what the earlier one left, and never mounts it', async () => {
    await env.createIssueRun('again-1', 'wf', { identifier: 'A-1', title: 'Made first' });
    const earlier = await env.finished('again-1', 120_000);
    // Its inputs outlive it for a while (held here by a finalizer, as a slow garbage
    // collector would), and it is made again at once, as `kubectl replace --force` does.
    const inputs = path.configMaps('again-1-inputs');
    await env.mergePatch(inputs, { metadata: { finalizers: ['test.lorenz.dev/hold'] } });
    await env.kubectl('delete', 'issuerun', 'again-1', '-n', NAMESPACE, '--wait=true');
    // The collector took its Pod first (it goes in no set order), so no Pod name stands in
    // the way of a new Pod mounting what is left.
    await env.kubectl(
      'delete',
      'pod',
      'again-1-0-1',
      '-n',
      NAMESPACE,
      '--grace-period=0',
      '--force',
      '--ignore-not-found',
      '--wait=true',
    );
    await env.createIssueRun('again-1', 'wf', { identifier: 'A-1', title: 'Made again' });
    const run = await stalledWith(env, 'again-1', 'NameConflict');
    expect(run.status?.message).toMatch(
      new RegExp(
        `^ConfigMap again-1-inputs is still held by an earlier IssueRun again-1 \\(uid ${earlier.metadata.uid}\\), which was deleted; the run waits until the garbage collector has removed it$`,
      ),
    );
    // Held long enough for a doubling backoff to have reached 16 s (1 + 2 + 4 + 8 s); then
    // taken, as the collector would (it may have asked already).
    await new Promise((resolve) => setTimeout(resolve, 16_000));
    await env.admin.request({ method: 'DELETE', path: inputs }).catch(() => undefined);
    await env.mergePatch(inputs, { metadata: { finalizers: null } });
    const released = Date.now();
    await until('the run to make its own inputs', async () => {
      const made = await env.admin
        .request<{ metadata: { ownerReferences?: { uid: string }[] } }>({ path: inputs })
        .catch(() => undefined);
      return made?.metadata.ownerReferences?.[0]?.uid === run.metadata.uid ? true : undefined;
    });
    // With the wait capped at 5 s: at most 5 s after the release, and load. Doubling, it
    // would be 15 s.
    expect(Date.now() - released).toBeLessThan(10_000);
    // Its Pod ran its own inputs: the earlier run's (another title, another digest) would
    // have ended it with InputsInvalid.
    const done = await env.finished('again-1', 120_000);
    expect(done.status?.phase, JSON.stringify(done.status)).toBe('Succeeded');
  });

  it('ends a run whose inputs cannot fit in a ConfigMap with InputsTooLarge, creating nothing', async () => {
    await env.createIssueRun('big-1', 'wf', {
      identifier: 'B-1',
      title: 'Long story',
      description: 'y'.repeat(200_000),
      labels: ['ensemble:4'],
    });
    const run = await env.finished('big-1');
    expect(condition(run, 'Succeeded')).toMatchObject({
      status: 'False',
      reason: 'InputsTooLarge',
    });
    expect(run.status?.message).toMatch(/take \d+ bytes; a ConfigMap holds at most 1000000/);
    expect(await env.runPodNames('big-1')).toEqual([]);
  });
});
