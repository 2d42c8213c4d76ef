// The tracker key lives in a Secret the Workflow names and is read by the controller only.
// Against a Linear stand-in (Linear's published schema, every query validated), the
// controller dispatches the project's active issues; their run Pods print their environment
// and every file they can read. The key must appear nowhere: not in a status, an Event, a
// Pod, a ConfigMap, a log line of a Pod, or a log line of the controller.
import { describe, expect, it } from 'vitest';
import type { IssueRun } from '../../src/api/index.js';
import { isNotFound } from '../../src/controller/runtime/client.js';
import {
  NAMESPACE,
  createLinearWorkflow,
  capturedLogger,
  path,
  until,
  useLinearStandIn,
  useOperatorEnv,
} from './operator-harness.js';

const KEY = 'lin_api_Zq8vRk2PmW4tXs9bN1cY';

describe('a tracker key in a Secret', () => {
  const linear = useLinearStandIn(KEY);
  const controllerLog: string[] = [];
  const env = useOperatorEnv({ logger: capturedLogger(controllerLog) });

  it('reaches the tracker and nothing else', async () => {
    await createLinearWorkflow(
      env,
      'lin',
      { endpoint: linear.url, secretName: 'linear', apiKey: KEY },
      {
        hooks: {
          after_create: 'env; cat /lorenz/inputs/* 2>&1; ls -laR /var/run /run 2>&1 | head -200',
          before_run: 'grep -r . /lorenz 2>/dev/null | head -500',
        },
      },
    );
    const runs: string[] = await until(
      'the active issues of project alpha to be dispatched',
      async () => {
        const list = await env.admin.request<{ items: IssueRun[] }>({ path: path.issueRuns() });
        const names = list.items.map((run) => run.metadata.name ?? '').sort();
        return names.length >= 2 ? names : undefined;
      },
    );
    // ENG-1 (Todo) and ENG-2 (In Progress, its blocker ENG-3 Done); not Done nor Backlog.
    expect(runs).toEqual(['lin-eng-1', 'lin-eng-2']);
    expect(linear.requests.some((request) => request.authorization === KEY)).toBe(true);
    // Once their hooks have printed what they can see, stop them (the stand-in's issues stay
    // active, so the runs would go on) and let them end.
    for (const name of runs) {
      await until(`${name}'s before_run to finish`, async () => {
        const run = await env.admin.request<IssueRun>({ path: path.issueRuns(name) });
        const hook = run.status?.hooks?.find((entry) => entry.name === 'before_run');
        return hook && hook.status !== 'started' ? true : undefined;
      });
    }
    const cancelled: { name: string; uid: string }[] = [];
    for (const name of runs) {
      const run = await env.admin.request<IssueRun>({
        method: 'PATCH',
        path: path.issueRuns(name),
        patchType: 'merge',
        body: { spec: { cancelRequested: true } },
      });
      cancelled.push({ name, uid: run.metadata.uid ?? '' });
    }
    // Each cancelled run object ends. The poller then removes a finished run whose issue is
    // still active and dispatches the issue afresh under the same name, possibly before this
    // test looks: a run gone, or replaced by another uid, had finished.
    await Promise.all(
      cancelled.map(({ name, uid }) =>
        until(
          `cancelled IssueRun ${name} (${uid}) to finish`,
          async () => {
            const run = await env.admin
              .request<IssueRun>({ path: path.issueRuns(name) })
              .catch((error: unknown) => {
                if (isNotFound(error)) return null;
                throw error;
              });
            if (run === null || run.metadata.uid !== uid) return true;
            const ended = run.status?.conditions?.some(
              (c) => c.type === 'Finished' && c.status === 'True',
            );
            return ended ? true : undefined;
          },
          120_000,
        ),
      ),
    );

    const dumps: string[] = [controllerLog.join('')];
    for (const kind of [
      'workflows.lorenz.dev',
      'issueruns.lorenz.dev',
      'pods',
      'configmaps',
      'events',
    ]) {
      dumps.push(await env.kubectl('get', kind, '-n', NAMESPACE, '-o', 'json'));
    }
    const pods = JSON.parse(dumps[3] ?? '{}') as { items: { metadata: { name: string } }[] };
    expect(pods.items.length).toBeGreaterThanOrEqual(2);
    for (const pod of pods.items) {
      dumps.push(await env.kubectl('logs', pod.metadata.name, '-n', NAMESPACE, '-c', 'agent'));
    }
    // The hooks did print their environment and files: the dumps are not empty of them.
    expect(dumps.join('\n')).toContain('LORENZ');
    for (const dump of dumps) expect(dump).not.toContain(KEY);
    expect(dumps.join('\n')).not.toContain(KEY.slice(8));
  }, 300_000);
});
