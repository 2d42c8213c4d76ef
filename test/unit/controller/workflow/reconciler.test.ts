// Table-driven tests of the Workflow reconciler (cert-manager style): each row puts objects
// in fake caches, runs one or more reconciles, and checks the API requests each made, the
// status it wrote and the result it returned (see fakes/tables.ts).
import { describe, expect, it } from 'vitest';
import type { Workflow } from '../../../../src/api/index.js';
import type { ConfigMapObject } from '../../../../src/controller/shared/resources.js';
import { conflict, failWith } from '../../../support/fakes/controller.js';
import {
  NS,
  WORKFLOW,
  at,
  finishedStatus,
  issueRun,
  sha256,
  startedStatus,
  workflow,
  workflowText,
} from '../../../support/fakes/objects.js';
import {
  COUNTS_INTERVAL_MS,
  nothing,
  playWorkflow,
  requeue,
  type Want,
  type WorkflowRow,
  type WorkflowStep,
  type WorkflowSummary,
} from '../../../support/fakes/tables.js';

const STATUS = `PATCH workflows/${WORKFLOW}/status`;
const TEXT = workflowText();
const OTHER_TEXT = workflowText({ prompt: 'Fix {{ issue.identifier }}.' });
const BAD_YAML = '---\ntracker: [unclosed\n---\nWork.';
const snapshotOf = (text: string) => `${WORKFLOW}-config-${sha256(text).slice(0, 8)}`;
const createSnapshot = (text: string) => `POST configmaps/${snapshotOf(text)}`;

/** A Workflow never reconciled yet (no status), at a generation. */
const fresh = (spec: Partial<Workflow['spec']> = {}, generation = 1): Workflow => {
  const object = workflow(spec, null);
  return { ...object, metadata: { ...object.metadata, generation } };
};
const fromConfigMap = (key = 'WORKFLOW.md') =>
  fresh({ workflow: undefined, workflowFrom: { configMapKeyRef: { name: 'wf-source', key } } });
const source: ConfigMapObject = {
  metadata: { name: 'wf-source', namespace: NS, resourceVersion: '3' },
  data: { 'WORKFLOW.md': OTHER_TEXT },
};

/** Ready, ConfigValid, Reconciling and Stalled, as workflowSummary shows them. */
const conditions = (ready: string, configValid: string, stalled = 'False/Reconciled') => [
  `Ready=${ready}`,
  `ConfigValid=${configValid}`,
  'Reconciling=False/Reconciled',
  `Stalled=${stalled}`,
];
const noRuns = { active: 0, succeeded: 0, failed: 0 };
/** The status of a Workflow running `text`, loaded from generation 1 unless `more` says. */
const ready = (text: string, more: Partial<WorkflowSummary> = {}): Partial<WorkflowSummary> => ({
  observedGeneration: 1,
  message: 'ready',
  conditions: conditions('True/Reconciled', 'True/ConfigValid'),
  configDigest: `sha256:${sha256(text)}`,
  configGeneration: more.observedGeneration ?? 1,
  lastGoodConfigMap: snapshotOf(text),
  runs: noRuns,
  ...more,
});
/** The status of a Workflow that never had a good config. */
const stalled = (reason: string, message: string): Partial<WorkflowSummary> => ({
  message: expect.stringContaining(message),
  conditions: conditions(`False/${reason}`, `False/${reason}`, `True/${reason}`),
  configDigest: undefined,
  configGeneration: undefined,
  lastGoodConfigMap: undefined,
});
/** A valid Workflow's tracker is polled every polling.interval_ms (30 s by default). */
const POLL_MS = 30_000;
/** The first reconcile of a valid Workflow: snapshot, then status, then its next poll. */
const snapshotted = (text: string, status = ready(text)): WorkflowStep => ({
  want: { actions: [createSnapshot(text), STATUS], status, result: { requeueAfter: POLL_MS } },
  configs: 1,
});
const writes = (status: Partial<WorkflowSummary>, nextPollMs?: number): Want<WorkflowSummary> => ({
  actions: [STATUS],
  status,
  ...(nextPollMs === undefined ? {} : { result: { requeueAfter: nextPollMs } }),
});
const once = (want: Want<WorkflowSummary>, step: Omit<WorkflowStep, 'want'> = {}) => [
  { ...step, want },
];

const runs = [
  issueRun({ name: 'active', status: startedStatus() }),
  issueRun({ name: 'succeeded', status: finishedStatus(1000) }),
  issueRun({ name: 'failed', status: { ...finishedStatus(1000), phase: 'Failed' } }),
  issueRun({ name: 'never-reconciled' }),
  issueRun({ name: 'of-another-workflow', spec: { workflowRef: { name: 'other' } } }),
];
const counted = { active: 2, succeeded: 1, failed: 1 };

const rows: WorkflowRow[] = [
  { name: 'Workflow gone from the cache: nothing', steps: once(nothing) },
  {
    name: 'Workflow being deleted: nothing',
    workflow: { ...fresh(), metadata: { ...fresh().metadata, deletionTimestamp: at(-1000) } },
    steps: once(nothing),
  },
  {
    name: 'inline valid WORKFLOW.md: snapshot created, ConfigValid and Ready; then quiet',
    workflow: fresh(),
    steps: [snapshotted(TEXT), { advanceMs: 1000, want: requeue(POLL_MS - 1000), configs: 1 }],
  },
  {
    name: 'WORKFLOW.md from a ConfigMap: snapshot of its text',
    workflow: fromConfigMap(),
    configMaps: [source],
    steps: [snapshotted(OTHER_TEXT)],
  },
  {
    name: 'source ConfigMap missing: ConfigMapNotFound, not Ready, Stalled',
    workflow: fromConfigMap(),
    steps: once(writes(stalled('ConfigMapNotFound', 'ConfigMap wf-source not found'))),
  },
  {
    name: 'source ConfigMap without the key: ConfigMapNotFound',
    workflow: fromConfigMap('other.md'),
    configMaps: [source],
    steps: once(writes(stalled('ConfigMapNotFound', 'has no key other.md'))),
  },
  {
    name: 'neither spec.workflow nor spec.workflowFrom: ConfigInvalid',
    workflow: fresh({ workflow: undefined }),
    steps: once(writes(stalled('ConfigInvalid', 'neither spec.workflow nor spec.workflowFrom'))),
  },
  {
    name: 'invalid YAML from the start: ConfigInvalid, no snapshot',
    workflow: fresh({ workflow: BAD_YAML }),
    steps: once(writes(stalled('ConfigInvalid', 'invalid YAML'))),
  },
  {
    name: 'invalid YAML after a good one: ConfigValid False, Ready kept on the last good snapshot',
    workflow: fresh(),
    steps: [
      snapshotted(TEXT),
      {
        advanceMs: 1000,
        workflow: fresh({ workflow: BAD_YAML }, 2),
        want: writes(
          {
            ...ready(TEXT),
            observedGeneration: 2,
            // The config in force is still generation 1's (kubectl get lwf -o wide shows it).
            configGeneration: 1,
            message: expect.stringContaining('invalid YAML'),
            conditions: conditions(
              'True/ConfigInvalid',
              'False/ConfigInvalid',
              'True/ConfigInvalid',
            ),
          },
          POLL_MS - 1000,
        ),
        // The last good settings stay in force: the polls go on with them.
      },
      // Fixed: a new snapshot, and Ready again.
      {
        advanceMs: 1000,
        workflow: fresh({ workflow: OTHER_TEXT }, 3),
        configs: 1,
        want: {
          ...snapshotted(OTHER_TEXT, ready(OTHER_TEXT, { observedGeneration: 3 })).want,
          // The poll schedule runs on from the first good spec.
          result: { requeueAfter: POLL_MS - 2000 },
        },
      },
    ],
  },
  {
    name: 'podTemplate refused: WorkflowInvalid, no snapshot',
    workflow: fresh({
      podTemplate: {
        spec: {
          containers: [{ name: 'agent', image: 'x', securityContext: { privileged: true } }],
        },
      },
    }),
    steps: once(writes(stalled('WorkflowInvalid', 'privileged containers are refused'))),
  },
  {
    name: 'podTemplate refused after a good config: Ready kept on the last good snapshot',
    workflow: fresh(),
    steps: [
      snapshotted(TEXT),
      {
        advanceMs: 1000,
        workflow: fresh({ podTemplate: { spec: { containers: [{ name: 'sidecar' }] } } }, 2),
        want: writes(
          {
            ...ready(TEXT),
            observedGeneration: 2,
            // The config in force is still generation 1's (kubectl get lwf -o wide shows it).
            configGeneration: 1,
            message: expect.stringContaining('a container named "agent" is required'),
            conditions: conditions(
              'True/WorkflowInvalid',
              'False/WorkflowInvalid',
              'True/WorkflowInvalid',
            ),
          },
          POLL_MS - 1000,
        ),
      },
    ],
  },
  {
    name: 'suspended: config snapshotted and valid, Ready True Suspended (what was asked for)',
    workflow: fresh({ suspend: true }),
    steps: [
      snapshotted(
        TEXT,
        ready(TEXT, { conditions: conditions('True/Suspended', 'True/ConfigValid') }),
      ),
    ],
  },
  {
    name: 'snapshot create answers 409: the snapshot exists, used as is',
    workflow: fresh(),
    steps: [{ ...snapshotted(TEXT), answers: [conflict('POST configmaps/*')] }],
  },
  {
    name: 'run counts alone: written once the counts interval has passed, not before',
    workflow: fresh(),
    steps: [
      snapshotted(TEXT),
      { advanceMs: 1000, issueRuns: runs, want: requeue(COUNTS_INTERVAL_MS), configs: 1 },
      { advanceMs: 5000, want: requeue(COUNTS_INTERVAL_MS - 5000), configs: 1 },
      {
        advanceMs: 3000,
        want: writes(ready(TEXT, { runs: counted }), POLL_MS - 9000),
        configs: 1,
      },
      { advanceMs: 1000, want: requeue(POLL_MS - 10_000), configs: 1 },
    ],
  },
  {
    name: 'run counts with a spec change: written at once',
    workflow: fresh(),
    steps: [
      snapshotted(TEXT),
      {
        advanceMs: 1000,
        issueRuns: runs,
        workflow: fresh({ suspend: true }, 2),
        configs: 1,
        want: writes(
          ready(TEXT, {
            observedGeneration: 2,
            runs: counted,
            conditions: conditions('True/Suspended', 'True/ConfigValid'),
          }),
          POLL_MS - 1000,
        ),
      },
    ],
  },
];

const BOARD = [
  '---',
  'tracker:',
  '  kind: memory',
  '  issues: [{ id: "1", identifier: "ENG-1", title: "t", state: "Todo" }]',
  'agent: { kind: codex }',
  '---',
  'Work on {{ issue.identifier }}.',
].join('\n');

describe('Workflow reconciler', () => {
  it.each(rows)('$name', playWorkflow);

  it('goes on polling with the last good settings while the spec is bad', () =>
    playWorkflow({
      name: 'bad reload, polls go on',
      workflow: fresh({ workflow: BOARD }),
      steps: [
        {
          want: {
            actions: [createSnapshot(BOARD), 'POST issueruns/wf-eng-1', STATUS],
            status: { lastGoodConfigMap: snapshotOf(BOARD) },
            result: { requeueAfter: POLL_MS },
          },
          configs: 1,
        },
        {
          advanceMs: POLL_MS,
          workflow: fresh({ workflow: BAD_YAML }, 2),
          answers: [
            {
              match: `GET configmaps/${snapshotOf(BOARD)}`,
              answer: { body: { data: { 'WORKFLOW.md': BOARD } } },
            },
          ],
          want: {
            // The snapshot is read, and the poll dispatches from it (the run exists: 409 is
            // not asked here, the fake accepts the create again).
            actions: [`GET configmaps/${snapshotOf(BOARD)}`, 'POST issueruns/wf-eng-1', STATUS],
            status: {
              lastGoodConfigMap: snapshotOf(BOARD),
              conditions: conditions(
                'True/ConfigInvalid',
                'False/ConfigInvalid',
                'True/ConfigInvalid',
              ),
            },
            result: { requeueAfter: POLL_MS },
          },
        },
      ],
    }));

  // Regression: a failed snapshot create (500, 403, a timeout) was reported as
  // ConfigValid=False although the config is fine, and the key was not retried. It is an
  // error of the reconcile now: the workqueue retries it with backoff.
  it('returns an API error of the snapshot create for a retry, writing no status', () =>
    playWorkflow({
      name: 'snapshot create fails',
      workflow: fresh(),
      steps: once(
        { actions: [createSnapshot(TEXT)], error: /500/ },
        { answers: [failWith('POST configmaps/*', 500)] },
      ),
    }));

  // Regression: the deadline of a pending counts-only write outlived counts that went back,
  // so a much later counts-only change was written at once instead of batched.
  it('waits the counts interval again after counts went back and changed anew', () =>
    playWorkflow({
      name: 'counts back and forth',
      workflow: fresh(),
      steps: [
        snapshotted(TEXT),
        { advanceMs: 1000, issueRuns: runs, want: requeue(COUNTS_INTERVAL_MS), configs: 1 },
        { advanceMs: 1000, issueRuns: [], want: requeue(POLL_MS - 2000), configs: 1 },
        // Past the poll time: polled again (a quiet tracker, nothing written for it).
        { advanceMs: 60_000, issueRuns: runs, want: requeue(COUNTS_INTERVAL_MS), configs: 1 },
      ],
    }));
});
