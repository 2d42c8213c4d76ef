// The table runners of the reconciler tests: a row is the objects in the caches and a list of
// steps; each step changes the world, reconciles once and checks what that reconcile did.
import { expect } from 'vitest';
import {
  Reasons,
  type IssueRun,
  type IssueRunStatus,
  type Workflow,
  type WorkflowStatus,
} from '../../../src/api/index.js';
import { createIssueRunReconciler } from '../../../src/controller/issuerun/reconciler.js';
import {
  ISSUERUNS,
  WORKFLOWS,
  type ConfigMapObject,
  type PodObject,
} from '../../../src/controller/shared/resources.js';
import { CONFIGMAPS, PODS } from '../../../src/controller/runtime/client.js';
import { createWorkflowReconciler } from '../../../src/controller/workflow/reconciler.js';
import {
  FakeClock,
  FakeInformer,
  FakeKubeClient,
  FakeLogFollowers,
  fakeWorkflowConfigLoader,
  type AnswerRule,
  type LogFields,
} from './controller.js';
import {
  NS,
  RUN,
  RUN_UID,
  SNAPSHOT,
  T0,
  WORKFLOW,
  WORKFLOW_UID,
  conditionSummary,
  podName,
  podUid,
  sha256,
  workflow,
  workflowText,
  writtenStatus,
} from './objects.js';

type Result = { requeueAfter?: number } | void;

export interface Want<Summary> {
  /** Every API request of this reconcile, in order (see Action.summary). */
  actions: string[];
  /** Fields of the status written by this reconcile: given exactly when it writes one. */
  status?: Partial<Summary>;
  result?: { requeueAfter?: number };
  /** The reconcile rejects with this. */
  error?: RegExp;
  /** By action summary: what the body of that request holds (toMatchObject). */
  bodies?: Record<string, unknown>;
}

/** A reconcile that does nothing at all. */
export const nothing: { actions: string[] } = { actions: [] };
/** A reconcile that makes no request and asks to run again in `ms`. */
export const requeue = (ms: number): { actions: string[]; result: { requeueAfter: number } } => ({
  actions: [],
  result: { requeueAfter: ms },
});
interface BaseStep<Summary> {
  /** The clock moves this far before the reconcile. */
  advanceMs?: number;
  /** More answers of the fake apiserver, from this step on. */
  answers?: AnswerRule[];
  want: Want<Summary>;
}

async function check<S, Summary>(
  index: number,
  client: FakeKubeClient,
  reconcile: () => Promise<Result>,
  summarize: (status: S) => Summary,
  want: Want<Summary>,
): Promise<void> {
  const from = client.actions.length;
  let result: Result = undefined;
  let error: unknown;
  try {
    result = await reconcile();
  } catch (caught) {
    error = caught;
  }
  if (want.error) {
    expect(error, `step ${index} rejects`).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(want.error);
  } else {
    expect(error, `step ${index} does not reject`).toBeUndefined();
  }
  expect({ step: index, actions: client.summaries(from), result }).toEqual({
    step: index,
    actions: want.actions,
    result: want.result,
  });
  for (const [summary, body] of Object.entries(want.bodies ?? {})) {
    const action = client.actions.slice(from).find((entry) => entry.summary === summary);
    expect(action?.body, `the body of ${summary}`).toMatchObject(body as object);
  }
  const written = writtenStatus<S>(client, from);
  expect(written !== undefined, `step ${index} writes a status`).toBe(want.status !== undefined);
  if (written && want.status) expect(summarize(written)).toMatchObject(want.status);
}

/** The IssueRun status fields the tables check. */
export function runSummary(status: IssueRunStatus) {
  return {
    phase: status.phase,
    reason: status.reason,
    message: status.message,
    conditions: conditionSummary(status.conditions, [
      'Succeeded',
      'Finished',
      'Reconciling',
      'Stalled',
    ]),
    slots: (status.slots ?? []).map((slot) => `${slot.podName} ${slot.phase}/${slot.reason}`),
    inputsConfigMap: status.inputsConfigMap,
    configDigest: status.configDigest,
    startTime: status.startTime,
    completionTime: status.completionTime,
    duration: status.duration,
    turn: status.turn,
    usage: status.usage,
    branch: status.git?.branch,
    workspaceSource: status.workspaceSource,
    hosts: (status.slots ?? []).map((slot) => slot.host ?? null),
  };
}
export type RunSummary = ReturnType<typeof runSummary>;

/** The four IssueRun conditions, as runSummary shows them, of a run in each kind of state. */
export const runConditions = {
  progressing: (reason: string) => [
    `Succeeded=Unknown/${reason}`,
    `Finished=False/${reason}`,
    'Reconciling=True/Progressing',
    'Stalled=False/Progressing',
  ],
  stalled: (reason: string) => [
    `Succeeded=Unknown/${reason}`,
    `Finished=False/${reason}`,
    `Reconciling=False/${reason}`,
    `Stalled=True/${reason}`,
  ],
  finished: (succeeded: boolean, reason: string) => [
    `Succeeded=${succeeded ? 'True' : 'False'}/${reason}`,
    `Finished=True/${reason}`,
    'Reconciling=False/Reconciled',
    succeeded ? 'Stalled=False/Reconciled' : `Stalled=True/${reason}`,
  ],
};

export interface RunStep extends BaseStep<RunSummary> {
  /** Replaces the cached IssueRun (null: removes it). */
  run?: IssueRun | null;
  /** Replaces the cached Pods. */
  pods?: PodObject[];
  /** Log states read so far, by slot (and attempt, 1 unless given). */
  logs?: Array<LogFields & { slot: number; attempt?: number }>;
  /** Pods whose log state is dropped after this reconcile. */
  forgotten?: string[];
  /** Annotations every Pod this reconcile creates carries. */
  podAnnotations?: Record<string, string>;
}

export interface RunRow {
  name: string;
  run?: IssueRun;
  /** null: no Workflow; by default a reconciled one with a good snapshot. */
  workflow?: Workflow | null;
  pods?: PodObject[];
  /** The WORKFLOW.md in the snapshot the Workflow points at. */
  snapshot?: string;
  /** The controller serves agent tools at this URL (off when absent). */
  toolsUrl?: string;
  /** Other IssueRuns in the cache (SSH workers count their slots). */
  otherRuns?: IssueRun[];
  steps: RunStep[];
}

const ownedByRun = {
  apiVersion: 'lorenz.dev/v1alpha1',
  kind: 'IssueRun',
  name: RUN,
  uid: RUN_UID,
  controller: true,
};

/** The IssueRun reconciler's requests, as Action summaries, and the stored inputs' answer. */
export const runActions = {
  status: `PATCH issueruns/${RUN}/status`,
  createInputs: `POST configmaps/${RUN}-inputs`,
  getInputs: `GET configmaps/${RUN}-inputs`,
  createPod: (slot: number) => `POST pods/${podName(slot)}`,
  getPod: (slot: number) => `GET pods/${podName(slot)}`,
  storedInputs: {
    match: `GET configmaps/${RUN}-inputs`,
    answer: {
      body: {
        metadata: {
          annotations: { 'lorenz.dev/inputs-digest': 'sha256:stored' },
          ownerReferences: [ownedByRun],
        },
      },
    },
  } satisfies AnswerRule,
  /** The run's own Pod, as a GET after a 409 finds it. */
  ownPod: (slot: number): AnswerRule => ({
    match: `GET pods/${podName(slot)}`,
    answer: { body: { metadata: { name: podName(slot), ownerReferences: [ownedByRun] } } },
  }),
};
/** A created Pod's body that has no volume of this name. */
export const withoutVolume = (name: string) => ({
  spec: {
    volumes: expect.not.arrayContaining([expect.objectContaining({ name })]) as unknown,
  },
});
/** A slot as runSummary shows it. */
export const slotSummary = (slot: number, phaseAndReason: string): string =>
  `${podName(slot)} ${phaseAndReason}`;
/** A reconcile that writes the run status and makes no other request. */
export const runWrites = (
  status: Partial<RunSummary>,
  result?: Want<RunSummary>['result'],
): Want<RunSummary> => ({ actions: [runActions.status], status, ...(result ? { result } : {}) });
/** The write of a failed attempt of slot 0 whose retry is due `ms` from now. */
export const retryScheduled = (ms: number): Want<RunSummary> =>
  runWrites(
    {
      phase: 'Pending',
      reason: Reasons.RetryScheduled,
      conditions: runConditions.progressing(Reasons.RetryScheduled),
      slots: [slotSummary(0, 'Pending/RetryScheduled')],
    },
    { requeueAfter: ms },
  );
/** A reconcile once slot 0's log has been read to its end (its attempt's outcome is known). */
export const afterLogRead = (want: Want<RunSummary>): RunStep => ({
  logs: [{ slot: 0, completed: true }],
  want,
});
/** The steps of a row with a single reconcile. */
export const runOnce = (want: Want<RunSummary>, step: Omit<RunStep, 'want'> = {}): RunStep[] => [
  { ...step, want },
];

export const RUN_OPTIONS = {
  operatorImage: 'ghcr.io/lorenz-dev/lorenz:test',
  progressIntervalMs: 4000,
  eventsWaitMs: 20,
  podStatus: { imagePullGraceMs: 60_000, pendingTimeoutMs: 300_000 },
};

/** What the IssueRun reconciler's informers hold, and how it loads WORKFLOW.md, on fakes. */
export interface FakeRunWorld {
  runs: IssueRun[];
  workflows: Workflow[];
  pods: PodObject[];
  loadWorkflowConfig: Parameters<typeof createIssueRunReconciler>[0]['loadWorkflowConfig'];
  toolsUrl?: string;
}

/** The IssueRun reconciler over fakes, at T0 on a fake clock, with the fakes to drive it. */
export function fakeRunReconciler(world: FakeRunWorld) {
  const clock = new FakeClock(T0);
  const client = new FakeKubeClient();
  const issueRuns = new FakeInformer<IssueRun>(ISSUERUNS, world.runs);
  const workflows = new FakeInformer<Workflow>(WORKFLOWS, world.workflows);
  const pods = new FakeInformer<PodObject>(PODS, world.pods);
  const followers = new FakeLogFollowers();
  const reconcile = createIssueRunReconciler({
    ...RUN_OPTIONS,
    client,
    issueRuns,
    workflows,
    pods,
    followers,
    loadWorkflowConfig: world.loadWorkflowConfig,
    now: clock.now,
    toolsUrl: world.toolsUrl,
  });
  return { clock, client, issueRuns, pods, followers, reconcile };
}

/** The log follower of the run's Pod for `slot` and `attempt`. */
export const followerOf = (slot: number, attempt = 1) => ({
  namespace: NS,
  podName: podName(slot, attempt),
  podUid: podUid(slot, attempt),
  runKey: `${NS}/${RUN}`,
  runUid: RUN_UID,
  slot,
  attempt,
});

export async function playRun(row: RunRow): Promise<void> {
  const config = fakeWorkflowConfigLoader({ [SNAPSHOT]: row.snapshot ?? workflowText() });
  const { clock, client, issueRuns, pods, followers, reconcile } = fakeRunReconciler({
    runs: [...(row.run ? [row.run] : []), ...(row.otherRuns ?? [])],
    workflows: row.workflow === null ? [] : [row.workflow ?? workflow()],
    pods: row.pods ?? [],
    loadWorkflowConfig: config.load,
    toolsUrl: row.toolsUrl,
  });
  for (const [index, step] of row.steps.entries()) {
    clock.advance(step.advanceMs ?? 0);
    if (step.run === null) issueRuns.replaceAll([]);
    else if (step.run) issueRuns.put(step.run);
    if (step.pods) pods.replaceAll(step.pods);
    for (const { slot, attempt = 1, ...fields } of step.logs ?? []) {
      followers.seed(followerOf(slot, attempt), fields);
    }
    client.answer(...(step.answers ?? []));
    const from = client.actions.length;
    await check(index, client, () => reconcile(`${NS}/${RUN}`), runSummary, step.want);
    for (const action of client.actions.slice(from)) {
      if (action.method !== 'POST' || action.resource !== 'pods') continue;
      const created = action.body as PodObject;
      expect(created.metadata?.ownerReferences).toMatchObject([
        { uid: step.run?.metadata.uid ?? row.run?.metadata.uid, controller: true },
      ]);
      expect(created.metadata?.annotations).toMatchObject(step.podAnnotations ?? {});
    }
    for (const pod of step.forgotten ?? []) {
      expect(followers.byName(pod), `the log state of ${pod}`).toBeUndefined();
    }
  }
}

/** The Workflow status fields the tables check. */
export function workflowSummary(status: WorkflowStatus) {
  return {
    observedGeneration: status.observedGeneration,
    message: status.message,
    conditions: conditionSummary(status.conditions, [
      'Ready',
      'ConfigValid',
      'Reconciling',
      'Stalled',
    ]),
    configDigest: status.configDigest,
    configGeneration: status.configGeneration,
    lastGoodConfigMap: status.lastGoodConfigMap,
    runs: status.runs,
  };
}
export type WorkflowSummary = ReturnType<typeof workflowSummary>;

export interface WorkflowStep extends BaseStep<WorkflowSummary> {
  /** Replaces the cached Workflow (null: removes it). */
  workflow?: Workflow | null;
  /** Replaces the cached IssueRuns. */
  issueRuns?: IssueRun[];
  /** How many good configs this reconcile hands to onConfig (0 unless given). */
  configs?: number;
}

export interface WorkflowRow {
  name: string;
  workflow?: Workflow;
  configMaps?: ConfigMapObject[];
  issueRuns?: IssueRun[];
  steps: WorkflowStep[];
}

export const COUNTS_INTERVAL_MS = 8000;

export async function playWorkflow(row: WorkflowRow): Promise<void> {
  const clock = new FakeClock(T0);
  const client = new FakeKubeClient();
  const workflows = new FakeInformer<Workflow>(WORKFLOWS, row.workflow ? [row.workflow] : []);
  const issueRuns = new FakeInformer<IssueRun>(ISSUERUNS, row.issueRuns ?? []);
  const configMaps = new FakeInformer<ConfigMapObject>(CONFIGMAPS, row.configMaps ?? []);
  const configs: string[] = [];
  const reconcile = createWorkflowReconciler({
    client,
    workflows,
    issueRuns,
    configMaps,
    now: clock.now,
    countsIntervalMs: COUNTS_INTERVAL_MS,
    onConfig: (_workflow, loaded) => configs.push(loaded.config.agent.kind),
  });
  for (const [index, step] of row.steps.entries()) {
    clock.advance(step.advanceMs ?? 0);
    if (step.workflow === null) workflows.replaceAll([]);
    else if (step.workflow) workflows.put(step.workflow);
    if (step.issueRuns) issueRuns.replaceAll(step.issueRuns);
    client.answer(...(step.answers ?? []));
    const [from, configsFrom] = [client.actions.length, configs.length];
    await check(index, client, () => reconcile(`${NS}/${WORKFLOW}`), workflowSummary, step.want);
    expect(configs.length - configsFrom, `step ${index} onConfig calls`).toBe(step.configs ?? 0);
    // A snapshot is immutable, named by the digest of its text and owned by the Workflow.
    for (const action of client.actions.slice(from)) {
      if (action.method !== 'POST' || action.resource !== 'configmaps') continue;
      const snapshot = action.body as ConfigMapObject & { immutable?: boolean };
      const text = snapshot.data?.['WORKFLOW.md'] ?? '';
      expect(snapshot).toMatchObject({
        metadata: {
          name: `${WORKFLOW}-config-${sha256(text).slice(0, 8)}`,
          ownerReferences: [{ kind: 'Workflow', uid: WORKFLOW_UID, controller: true }],
        },
        immutable: true,
      });
    }
  }
}
