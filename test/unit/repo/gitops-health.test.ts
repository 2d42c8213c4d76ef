import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { Reasons } from '../../../src/api/index.js';
import { endedState, stoppedState } from '../../../src/controller/issuerun/endings.js';
import {
  runConditions,
  type RunState,
  type SlotView,
} from '../../../src/controller/issuerun/status.js';
import type { IssueRun } from '../../../src/api/index.js';
import { workflowConditions } from '../../../src/controller/workflow/workflow-conditions.js';
import type { Evaluation } from '../../../src/controller/workflow/evaluate.js';
import { loadWorkflowText } from '../../../src/template/load-workflow.js';
import { writeInput } from '../../support/child-input.js';

/**
 * Health as GitOps tools compute it, by their own code (hack/gitops-health: kstatus from
 * sigs.k8s.io/cli-utils as Flux and kpt use it, and gopher-lua running the chart's Argo CD
 * health checks as Argo CD does), on status objects the controller's own condition code
 * writes.
 */
const run = promisify(execFile);
const root = join(import.meta.dirname, '../../..');
const LUA = {
  IssueRun: join(root, 'charts/lorenz/argocd/lorenz.dev/IssueRun/health.lua'),
  Workflow: join(root, 'charts/lorenz/argocd/lorenz.dev/Workflow/health.lua'),
};
let judge: string;

beforeAll(async () => {
  judge = (await run(join(root, 'hack/gitops-health.sh'), { timeout: 300_000 })).stdout.trim();
}, 300_000);

interface Health {
  status: string;
  message: string;
}

async function judged(args: string[], objects: object[]): Promise<Health[]> {
  const child = run(judge, args);
  const [{ stdout }] = await Promise.all([
    child,
    writeInput(child.child.stdin, JSON.stringify(objects)),
  ]);
  return JSON.parse(stdout) as Health[];
}

const NOW = new Date('2026-11-30T12:00:00Z');

function issueRun(state: RunState, observed = 1) {
  return {
    apiVersion: 'lorenz.dev/v1alpha1',
    kind: 'IssueRun',
    metadata: { name: 'run', namespace: 'ns', generation: 1 },
    status: { observedGeneration: observed, conditions: runConditions(undefined, state, 1, NOW) },
  };
}

/** The endings of a run whose issue is `state`, as the reconciler decides them (endings.ts). */
const STATES = { activeStates: ['Todo', 'In Progress'], terminalStates: ['Done', 'Cancelled'] };
function stopped(state: string, turns: number, note?: string): RunState {
  const run = {
    metadata: { name: 'run', annotations: note ? { 'lorenz.dev/stop-note': note } : {} },
    spec: {
      workflowRef: { name: 'wf' },
      issue: { identifier: 'ENG-1', state },
      cancelRequested: true,
    },
  } as IssueRun;
  const cancelled = { phase: 'Failed', reason: 'Cancelled', message: '', finished: true } as const;
  const view = {
    slot: 0,
    attempt: 1,
    podName: 'run-0-1',
    outcome: { ...cancelled, summary: null },
    log: { turns },
  } as SlotView;
  return stoppedState(run, [view], [], STATES);
}
function ended(state: string): RunState {
  const run = {
    metadata: { name: 'run' },
    spec: { workflowRef: { name: 'wf' }, issue: { identifier: 'ENG-1', state } },
  } as IssueRun;
  const outcome = {
    phase: 'Succeeded',
    reason: 'Succeeded',
    message: '',
    finished: true,
    summary: null,
  } as const;
  const view: SlotView = { slot: 0, attempt: 1, podName: 'run-0-1', outcome };
  return endedState(
    run,
    { kind: 'finished', succeeded: true, reason: Reasons.Succeeded, message: 'the run succeeded' },
    [view],
    STATES,
  );
}
const MOVED =
  'ENG-1 moved to Backlog (out of the active states) while the run worked on it; the memory tracker does not say who moved it';

const RUNS: Array<[string, ReturnType<typeof issueRun>, string, string]> = [
  [
    'pending',
    issueRun({
      kind: 'progressing',
      phase: 'Pending',
      reason: Reasons.Pending,
      message: 'creating',
    }),
    'InProgress',
    'Progressing',
  ],
  [
    'running',
    issueRun({ kind: 'progressing', phase: 'Running', reason: Reasons.Running, message: 'hooks' }),
    'InProgress',
    'Progressing',
  ],
  [
    'waiting on a suspended Workflow',
    issueRun({
      kind: 'progressing',
      phase: 'Pending',
      reason: Reasons.WorkflowSuspended,
      message: 'the Workflow is suspended',
    }),
    'InProgress',
    'Suspended',
  ],
  [
    'succeeded',
    issueRun({ kind: 'finished', succeeded: true, reason: Reasons.Succeeded, message: 'ok' }),
    'Current',
    'Healthy',
  ],
  [
    'failed',
    issueRun({ kind: 'finished', succeeded: false, reason: Reasons.HookFailed, message: 'boom' }),
    'Failed',
    'Degraded',
  ],
  [
    'succeeded: its attempt ended with its issue Done',
    issueRun(ended('Done')),
    'Current',
    'Healthy',
  ],
  [
    'succeeded: stopped for Done after a completed turn',
    issueRun(stopped('Done', 1)),
    'Current',
    'Healthy',
  ],
  [
    'cancelled: a person moved its issue to Backlog',
    issueRun(stopped('Backlog', 1, MOVED)),
    'Failed',
    'Degraded',
  ],
  [
    'cancelled: its issue closed before any turn completed',
    issueRun(stopped('Done', 0)),
    'Failed',
    'Degraded',
  ],
  [
    'stalled without its Workflow',
    issueRun({
      kind: 'stalled',
      reason: Reasons.WorkflowNotFound,
      message: 'Workflow x not found',
    }),
    'Failed',
    'Degraded',
  ],
  [
    'a spec the controller has not seen yet',
    issueRun({ kind: 'finished', succeeded: true, reason: Reasons.Succeeded, message: 'ok' }, 0),
    'InProgress',
    'Progressing',
  ],
];

const GOOD = loadWorkflowText('---\ntracker:\n  kind: memory\n---\nprompt\n', 'WORKFLOW.md');
const good: Evaluation = { ok: true, spec: { source: 'spec.workflow', loaded: GOOD } as never };
const bad: Evaluation = {
  ok: false,
  problem: { reason: Reasons.ConfigInvalid, message: 'workflow_parse_error: line 2' },
};

function workflow(evaluation: Evaluation, lastGood: string | undefined, suspend = false) {
  return {
    apiVersion: 'lorenz.dev/v1alpha1',
    kind: 'Workflow',
    metadata: { name: 'wf', namespace: 'ns', generation: 2 },
    spec: { suspend },
    status: {
      observedGeneration: 2,
      conditions: workflowConditions({
        current: undefined,
        generation: 2,
        evaluation,
        lastGoodConfigMap: lastGood,
        suspended: suspend,
        now: NOW,
      }),
    },
  };
}

const WORKFLOWS: Array<[string, ReturnType<typeof workflow>, string, string]> = [
  ['ready', workflow(good, 'wf-config-1'), 'Current', 'Healthy'],
  ['never loaded', workflow(bad, undefined), 'Failed', 'Degraded'],
  ['a bad edit, running the last good config', workflow(bad, 'wf-config-1'), 'Failed', 'Degraded'],
  ['suspended', workflow(good, 'wf-config-1', true), 'Current', 'Suspended'],
];

/**
 * A table's objects as kstatus (Flux, kpt) and the chart's Argo CD check (`lua`) judge them:
 * each row's statuses must be the two it names; the judgements are returned for their messages.
 */
async function judgeTable(
  table: Array<[name: string, object: object, kstatus: string, argo: string]>,
  lua: string,
): Promise<{ kstatus: Health[]; argo: Health[] }> {
  const objects = table.map(([, object]) => object);
  const kstatus = await judged(['kstatus'], objects);
  const argo = await judged(['lua', lua], objects);
  expect(
    table.map(([name], index) => `${name}: ${kstatus[index]?.status} ${argo[index]?.status}`),
  ).toEqual(table.map(([name, , k, a]) => `${name}: ${k} ${a}`));
  return { kstatus, argo };
}

describe('IssueRun health', () => {
  it('as kstatus (Flux, kpt) and the chart’s Argo CD check judge it', async () => {
    const { kstatus, argo } = await judgeTable(RUNS, LUA.IssueRun);
    // The failure says why, in both.
    expect(kstatus[4]?.message).toBe('boom');
    expect(argo[4]?.message).toBe('HookFailed: boom');
    // A completed issue says so; a cancellation says what moved the issue where.
    expect(argo[6]?.message).toBe(
      "IssueCompleted: ENG-1 reached Done (a terminal state) after the run's work: 1 turn completed in attempt 1",
    );
    expect(kstatus[7]?.message).toBe(`cancelled: ${MOVED}`);
    expect(argo[7]?.message).toBe(`Cancelled: cancelled: ${MOVED}`);
  });

  it('an object with no status yet is Progressing for Argo CD', async () => {
    const [health] = await judged(['lua', LUA.IssueRun], [{ metadata: { name: 'x' } }]);
    expect(health).toEqual({ status: 'Progressing', message: 'waiting for the controller' });
  });
});

describe('Workflow health', () => {
  it('as kstatus (Flux, kpt) and the chart’s Argo CD check judge it', async () => {
    const { argo } = await judgeTable(WORKFLOWS, LUA.Workflow);
    expect(argo[2]?.message).toBe(
      'ConfigInvalid: the spec is not applied: workflow_parse_error: line 2',
    );
  });
});
