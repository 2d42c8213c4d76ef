// The metrics users watch, read from the controller's /metrics on the local control plane:
// a succeeded and a failed run counted once each (not again on a re-reconcile, nor by a
// controller restarted mid-run), the running gauge while a run runs and after, one hook
// duration per hook record, tokens counted once across that restart, polls by result.
import { describe, expect, it } from 'vitest';
import type { RunningController } from '../../src/controller/main.js';
import { path, until, useOperatorEnv, type EventView } from './operator-harness.js';

/** The value of one series in Prometheus text, 0 when it is absent (a counter not moved yet). */
export function sample(text: string, series: string): number {
  const line = text.split('\n').find((entry) => entry.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

/** Every sample of a metric whose labels include all of `labels`, summed. */
function total(text: string, metric: string, labels: Record<string, string>): number {
  const wanted = Object.entries(labels).map(([key, value]) => `${key}="${value}"`);
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${metric}{`))
    .filter((line) => wanted.every((pair) => line.includes(pair)))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

describe('the metrics users watch', () => {
  const env = useOperatorEnv({ metricsBindAddress: '127.0.0.1:0' });

  const scrape = async (controller = env.controller): Promise<string> => {
    const port = controller?.manager.metricsAddress?.port;
    const response = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(response.status).toBe(200);
    return response.text();
  };
  const hookRecords = async (run: string): Promise<number> => {
    const list = await env.admin.request<{ items: EventView[] }>({ path: path.events });
    return list.items.filter(
      (event) =>
        event.regarding.name === run &&
        event.reason.startsWith('Hook') &&
        event.reason !== 'HookStarted',
    ).length;
  };
  const finishedOf = (text: string, workflow: string) =>
    total(text, 'lorenz_issueruns_finished_total', { namespace: 'default', workflow });

  it('counts a run that succeeds across a controller restart mid-run: its end, hooks and tokens once', async () => {
    await env.createWorkflow('met', {
      // The after_run hook keeps the run Running while the controller restarts.
      hooks: { after_create: 'echo cloned', before_run: 'echo prep', after_run: 'sleep 8' },
      prompt: '@usage 10 5\n@write done.txt ok',
    });
    await env.createIssueRun('met-ok', 'met', { identifier: 'MET-1', title: 'Metrics' });
    const running = 'lorenz_issueruns_running{namespace="default",workflow="met"}';
    await until('the running gauge at 1', async () =>
      sample(await scrape(), running) === 1 ? true : undefined,
    );
    // The usage in the run's status: a restarted controller counts only above it.
    await until('the usage in the status', async () =>
      (await env.getRun('met-ok')).status?.usage?.inputTokens === 10 ? true : undefined,
    );
    const first = env.controller as RunningController;
    await first.stop();
    await env.startController({ metricsBindAddress: '127.0.0.1:0' });
    // What the first controller counted until it stopped (its registry outlives its server).
    const before = await first.manager.metrics.registry.metrics();
    expect(finishedOf(before, 'met')).toBe(0);
    const tokens =
      'lorenz_agent_tokens_total{namespace="default",workflow="met",model="unknown",kind=';
    expect([sample(before, `${tokens}"input"}`), sample(before, `${tokens}"output"}`)]).toEqual([
      10, 5,
    ]);

    const run = await env.finished('met-ok', 120_000);
    expect(run.status?.phase).toBe('Succeeded');
    await until('the running gauge back at 0', async () => {
      const text = await scrape();
      return text.includes(`${running} 0`) ? true : undefined;
    });
    const after = await scrape();
    expect(
      sample(
        after,
        'lorenz_issueruns_finished_total{namespace="default",workflow="met",phase="Succeeded",reason="Succeeded"}',
      ),
    ).toBe(1);
    expect(finishedOf(after, 'met')).toBe(1);
    expect(
      sample(after, 'lorenz_issuerun_duration_seconds_count{workflow="met",phase="Succeeded"}'),
    ).toBe(1);
    // The Pod's log read again from its start by the new controller adds no token.
    expect([sample(after, `${tokens}"input"}`), sample(after, `${tokens}"output"}`)]).toEqual([
      0, 0,
    ]);
    // Each hook record observed once, by one controller or the other: as many as its Events.
    const records = await hookRecords('met-ok');
    expect(records).toBe(3);
    const hooks = (text: string) =>
      total(text, 'lorenz_hook_duration_seconds_count', { workflow: 'met' });
    expect(hooks(before) + hooks(after)).toBe(records);
    expect(
      total(after, 'lorenz_hook_duration_seconds_count', { workflow: 'met', hook: 'after_run' }),
    ).toBe(1);
  });

  it('counts a failed run once with its reason, and not again when it is reconciled again', async () => {
    await env.createWorkflow('met-fail', { prompt: '@exit 3' });
    await env.createIssueRun('met-bad', 'met-fail', { identifier: 'MET-2', title: 'Fails' });
    const run = await env.finished('met-bad');
    expect(run.status?.phase).toBe('Failed');
    const reason = run.status?.reason ?? '';
    const series = `lorenz_issueruns_finished_total{namespace="default",workflow="met-fail",phase="Failed",reason="${reason}"}`;
    await until('the failed run counted', async () =>
      sample(await scrape(), series) === 1 ? true : undefined,
    );
    // A change to the finished run reconciles it again: no second count.
    await env.mergePatch(path.issueRuns('met-bad'), {
      metadata: { annotations: { 'example.com/touched': 'yes' } },
    });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const text = await scrape();
    expect(sample(text, series)).toBe(1);
    expect(finishedOf(text, 'met-fail')).toBe(1);
    expect(finishedOf(text, 'met')).toBe(1);
  });

  it('counts polls by result: a tracker that answers, one that cannot be reached', async () => {
    const board =
      '  issues:\n    - { id: "p1", identifier: "POLL-1", title: "Done", state: "Done" }';
    await env.createWorkflow('met-board', { tracker: board, pollingMs: 500 });
    await env.createWorkflow('met-down', {
      trackerKind: 'github',
      tracker: '  repository: acme/app\n  endpoint: http://127.0.0.1:9\n  api_key: x',
      pollingMs: 500,
    });
    const polls = (workflow: string, result: string) =>
      `lorenz_tracker_polls_total{namespace="default",workflow="${workflow}",result="${result}"}`;
    const text = await until('two polls of each', async () => {
      const seen = await scrape();
      return sample(seen, polls('met-board', 'ok')) >= 2 &&
        sample(seen, polls('met-down', 'error')) >= 2
        ? seen
        : undefined;
    });
    expect(sample(text, polls('met-board', 'error'))).toBe(0);
    expect(sample(text, polls('met-down', 'ok'))).toBe(0);
    // Every result has its series from the first poll on (the alerts' increase() needs it).
    expect(text).toContain(`${polls('met-down', 'ok')} 0`);
  });
});
