// The user-facing metrics' pure parts (which status change is an end, what a usage adds,
// what runs) and the set itself on a real prom-client registry, read back as Prometheus text.
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { IssueRun, IssueRunStatus, Workflow } from '../../../../src/api/index.js';
import {
  reasonLabel,
  runEnding,
  runMetrics,
  runningCounts,
  tokenGrowth,
} from '../../../../src/controller/shared/run-metrics.js';

const condition = (type: string, status: 'True' | 'False') => ({
  type,
  status,
  reason: 'R',
  message: '',
  lastTransitionTime: '2026-12-01T00:00:00Z',
});
const running: IssueRunStatus = {
  phase: 'Running',
  reason: 'Running',
  startTime: '2026-12-01T10:00:00Z',
  conditions: [condition('Finished', 'False')],
};
const ended = (phase: 'Succeeded' | 'Failed', reason: string): IssueRunStatus => ({
  ...running,
  phase,
  reason,
  completionTime: '2026-12-01T10:02:30Z',
  conditions: [condition('Finished', 'True')],
});

const run = (
  name: string,
  workflow: string,
  status?: IssueRunStatus,
  namespace = 'team',
): IssueRun => ({
  apiVersion: 'lorenz.dev/v1alpha1',
  kind: 'IssueRun',
  metadata: { name, namespace, uid: `uid-${name}` },
  spec: { workflowRef: { name: workflow }, issue: { identifier: name, title: name } },
  ...(status ? { status } : {}),
});
const workflow = (name: string, namespace = 'team'): Workflow => ({
  metadata: { name, namespace },
  spec: {},
});

describe('runEnding', () => {
  it.each([
    [
      'running → succeeded',
      running,
      ended('Succeeded', 'Succeeded'),
      { phase: 'Succeeded', reason: 'Succeeded', durationSeconds: 150 },
    ],
    [
      'running → failed',
      running,
      ended('Failed', 'HookFailed'),
      { phase: 'Failed', reason: 'HookFailed', durationSeconds: 150 },
    ],
    [
      'no status → failed without a Pod',
      undefined,
      { ...ended('Failed', 'WorkflowInvalid'), startTime: undefined },
      { phase: 'Failed', reason: 'WorkflowInvalid' },
    ],
    [
      'finished → finished (a rewrite)',
      ended('Failed', 'HookFailed'),
      ended('Failed', 'HookFailed'),
      undefined,
    ],
    ['running → running', running, { ...running, reason: 'Running' }, undefined],
    [
      'free text as reason',
      running,
      ended('Failed', 'the pod: died'),
      { phase: 'Failed', reason: 'Other', durationSeconds: 150 },
    ],
  ] as const)('%s', (_name, previous, next, expected) => {
    expect(runEnding(previous, next as IssueRunStatus)).toEqual(expected);
  });

  it('keeps reason codes and replaces anything else', () => {
    expect(
      ['Succeeded', 'PodDeleted', 'SshHostUnreachable', '', 'a b', 'x'.repeat(80), undefined].map(
        reasonLabel,
      ),
    ).toEqual([
      'Succeeded',
      'PodDeleted',
      'SshHostUnreachable',
      'Other',
      'Other',
      'Other',
      'Other',
    ]);
  });
});

describe('tokenGrowth', () => {
  it('counts a cost that grows, never one that goes back', () => {
    const usage = (cost: string) => ({ inputTokens: 1, outputTokens: 1, totalTokens: 2, cost });
    const first = tokenGrowth({ input: 0, output: 0 }, usage('0.25'));
    expect(first.delta.cost).toBe(0.25);
    const back = tokenGrowth(first.counted, usage('0.1'));
    expect(back.delta.cost).toBe(0);
    expect(tokenGrowth(back.counted, usage('0.75')).delta.cost).toBe(0.5);
  });

  // [case, counted before as [input, output], the report, the growth, counted after]
  it.each<[string, Pair, Pair, Pair, Pair]>([
    ['first report', [0, 0], [10, 5], [10, 5], [10, 5]],
    ['grown', [10, 5], [17, 8], [7, 3], [17, 8]],
    ['re-read from the start (an early turn again)', [17, 8], [10, 5], [0, 0], [17, 8]],
    ['past what was counted again', [17, 8], [20, 8], [3, 0], [20, 8]],
  ])('%s', (_name, [input, output], [inputTokens, outputTokens], delta, after) => {
    expect(
      tokenGrowth(
        { input, output },
        { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens },
      ),
    ).toEqual({
      delta: { input: delta[0], output: delta[1], cost: 0 },
      counted: { input: after[0], output: after[1], cost: 0 },
    });
  });
});

type Pair = [number, number];

describe('runningCounts', () => {
  it('counts runs in phase Running per namespace and Workflow, idle Workflows at 0', () => {
    const counts = runningCounts(
      [
        run('a', 'wf', running),
        run('b', 'wf', running),
        run('c', 'wf', ended('Succeeded', 'Succeeded')),
        run('d', 'wf', { phase: 'Pending' }),
        run('e', 'other', running, 'elsewhere'),
        run('f', 'wf'),
      ],
      [workflow('wf'), workflow('idle')],
    );
    expect([...counts.values()]).toEqual([
      { namespace: 'team', workflow: 'wf', count: 2 },
      { namespace: 'team', workflow: 'idle', count: 0 },
      { namespace: 'elsewhere', workflow: 'other', count: 1 },
    ]);
  });
});

/** The value of one sample of the Prometheus text, 0 when the series is absent. */
const sample = (text: string, series: string): number => {
  const line = text.split('\n').find((entry) => entry.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
};

describe('runMetrics', () => {
  it('registers once per registry and counts what the controller tells it', async () => {
    const registry = new Registry();
    const metrics = runMetrics(registry);
    expect(runMetrics(registry)).toBe(metrics);
    let leading = true;
    metrics.trackRuns({
      runs: () => [run('a', 'wf', running)],
      workflows: () => [workflow('wf'), workflow('idle')],
      leading: () => leading,
    });

    const target = run('a', 'wf');
    metrics.statusWritten(target, running, ended('Failed', 'HookFailed'));
    metrics.statusWritten(target, ended('Failed', 'HookFailed'), ended('Failed', 'HookFailed'));
    metrics.hookRecorded('wf', {
      status: 'started',
      hookName: 'before_run',
      command: '',
      cwd: '',
      slot: 0,
    });
    metrics.hookRecorded('wf', {
      status: 'completed',
      hookName: 'before_run',
      command: '',
      cwd: '',
      slot: 0,
      exitCode: 0,
      durationMs: 1500,
    });
    const pod = { uid: 'pod-1', namespace: 'team', workflow: 'wf' };
    const usage = (inputTokens: number, outputTokens: number) => ({
      inputTokens,
      outputTokens,
      totalTokens: 0,
    });
    metrics.tokensRead(pod, usage(10, 5));
    metrics.tokensRead(pod, usage(10, 5));
    metrics.tokensRead(pod, usage(17, 8));
    // A Pod first met after a restart: only what exceeds its run's recorded usage counts.
    metrics.tokensCounted('pod-2', usage(25, 10));
    metrics.tokensRead({ ...pod, uid: 'pod-2' }, usage(30, 10));
    // Once counting began, what a status says is no seed any more.
    metrics.tokensCounted('pod-2', usage(0, 0));
    metrics.tokensRead({ ...pod, uid: 'pod-2' }, usage(30, 10));
    metrics.polled(workflow('wf'), 'error');
    metrics.polled(workflow('wf'), 'ok');
    metrics.polled(workflow('wf'), 'ok');

    const text = await registry.metrics();
    const expected: Array<[string, number]> = [
      [
        'lorenz_issueruns_finished_total{namespace="team",workflow="wf",phase="Failed",reason="HookFailed"}',
        1,
      ],
      ['lorenz_issuerun_duration_seconds_count{workflow="wf",phase="Failed"}', 1],
      ['lorenz_issuerun_duration_seconds_sum{workflow="wf",phase="Failed"}', 150],
      ['lorenz_hook_duration_seconds_count{workflow="wf",hook="before_run",status="completed"}', 1],
      ['lorenz_hook_duration_seconds_sum{workflow="wf",hook="before_run",status="completed"}', 1.5],
      [
        'lorenz_agent_tokens_total{namespace="team",workflow="wf",model="unknown",kind="input"}',
        22,
      ],
      [
        'lorenz_agent_tokens_total{namespace="team",workflow="wf",model="unknown",kind="output"}',
        8,
      ],
      ['lorenz_tracker_polls_total{namespace="team",workflow="wf",result="ok"}', 2],
      ['lorenz_tracker_polls_total{namespace="team",workflow="wf",result="error"}', 1],
      ['lorenz_tracker_polls_total{namespace="team",workflow="wf",result="skipped"}', 0],
      ['lorenz_issueruns_running{namespace="team",workflow="wf"}', 1],
      ['lorenz_issueruns_running{namespace="team",workflow="idle"}', 0],
    ];
    for (const [series, value] of expected)
      expect([series, sample(text, series)]).toEqual([series, value]);
    // Every result's series is there from the first poll (0 is a sample, not "no data").
    expect(text).toContain(
      'lorenz_tracker_polls_total{namespace="team",workflow="wf",result="skipped"} 0',
    );
    expect(text).toContain('lorenz_issueruns_running{namespace="team",workflow="idle"} 0');

    // A standby reports no running series: summed over replicas, runs are not doubled.
    leading = false;
    expect(await registry.metrics()).not.toMatch(/^lorenz_issueruns_running\{/m);
  });
});
