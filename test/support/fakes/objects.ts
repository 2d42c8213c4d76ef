// Builders of the objects the reconciler tests put in the fake caches, shaped as the JSON
// client reads them from the apiserver, and summaries of what the reconcilers write.
import { createHash } from 'node:crypto';
import type { V1ContainerState, V1ContainerStatus } from '@kubernetes/client-node';
import type {
  Condition,
  InboxPending,
  InboxRequest,
  IssueRun,
  IssueRunStatus,
  SlotStatus,
  Workflow,
  WorkflowStatus,
} from '../../../src/api/index.js';
import type { PodObject } from '../../../src/controller/shared/resources.js';
import { encodeTerminationSummary, type TerminationSummary } from '../../../src/runner/summary.js';
import type { FakeKubeClient } from './controller.js';

export const NS = 'ns';
export const RUN = 'eng-1';
export const RUN_UID = 'uid-run-1';
/** The run's key in the controller's caches and work queue. */
export const RUN_KEY = `${NS}/${RUN}`;
export const WORKFLOW = 'wf';
export const WORKFLOW_UID = 'uid-wf-1';
/** The snapshot ConfigMap a reconciled Workflow points its runs at. */
export const SNAPSHOT = 'wf-config-0123abcd';
export const T0 = new Date('2026-03-01T10:00:00Z');

/** T0 moved by `ms`, as the apiserver writes times (RFC 3339, whole seconds). */
export const at = (ms: number): string =>
  new Date(T0.getTime() + ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

export const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** A WORKFLOW.md for the scripted agent. */
export function workflowText(
  options: { prompt?: string; ensembleSize?: number; maxRetryBackoffMs?: number } = {},
): string {
  return [
    '---',
    'tracker:',
    '  kind: memory',
    'agent:',
    '  kind: scripted',
    '  max_turns: 2',
    `  ensemble_size: ${options.ensembleSize ?? 1}`,
    ...(options.maxRetryBackoffMs === undefined
      ? []
      : [`  max_retry_backoff_ms: ${options.maxRetryBackoffMs}`]),
    'agents:',
    '  scripted:',
    '    bridge_command: node /lorenz-bin/scripted-agent.mjs',
    'hooks:',
    '  timeout_ms: 60000',
    '---',
    options.prompt ?? 'Work on {{ issue.identifier }}: {{ issue.title }}.',
  ].join('\n');
}

export const podTemplate = {
  spec: { containers: [{ name: 'agent', image: 'example.com/agent:1' }] },
};

/** A Workflow in the cache; by default reconciled, with a good snapshot (null: no status). */
export function workflow(
  spec: Partial<Workflow['spec']> = {},
  status: WorkflowStatus | null = { lastGoodConfigMap: SNAPSHOT, configDigest: 'sha256:x' },
): Workflow {
  return {
    apiVersion: 'lorenz.dev/v1alpha1',
    kind: 'Workflow',
    metadata: {
      name: WORKFLOW,
      namespace: NS,
      uid: WORKFLOW_UID,
      generation: 1,
      resourceVersion: '7',
    },
    spec: { workflow: workflowText(), podTemplate, ...spec },
    ...(status ? { status } : {}),
  };
}

/** A Workflow spec's workspace section: a 1Gi ReadWriteOnce claim of this StorageClass per slot. */
export const claimedWorkspace = (storageClassName: string): Partial<Workflow['spec']> => ({
  workspace: {
    volumeClaimTemplate: {
      spec: {
        storageClassName,
        accessModes: ['ReadWriteOnce'],
        resources: { requests: { storage: '1Gi' } },
      },
    },
  },
});

/** An IssueRun in the cache (resourceVersion older than anything the fake client returns). */
export function issueRun(
  options: {
    name?: string;
    status?: IssueRunStatus;
    spec?: Partial<IssueRun['spec']>;
    uid?: string;
    labels?: string[];
    deleting?: boolean;
  } = {},
): IssueRun {
  return {
    apiVersion: 'lorenz.dev/v1alpha1',
    kind: 'IssueRun',
    metadata: {
      name: options.name ?? RUN,
      namespace: NS,
      uid: options.uid ?? RUN_UID,
      generation: 1,
      resourceVersion: '5',
      ...(options.deleting ? { deletionTimestamp: at(-1000) } : {}),
    },
    spec: {
      workflowRef: { name: WORKFLOW },
      issue: {
        identifier: 'ENG-1',
        title: 'Fix the bug',
        state: 'Todo',
        labels: options.labels ?? [],
      },
      ...options.spec,
    },
    ...(options.status ? { status: options.status } : {}),
  };
}

export const podName = (slot: number, attempt = 1): string => `${RUN}-${slot}-${attempt}`;
export const podUid = (slot: number, attempt = 1): string =>
  attempt === 1 ? `uid-pod-${slot}` : `uid-pod-${slot}-${attempt}`;

export interface PodOptions {
  slot?: number;
  attempt?: number;
  phase: 'Pending' | 'Running' | 'Succeeded' | 'Failed';
  /** The agent container: not started, running, or terminated with the runner's summary. */
  agent?: 'waiting' | 'running' | TerminationSummary;
  /** A waiting reason of the agent container (ErrImagePull …). */
  waitingReason?: string;
  createdAgoMs?: number;
  deleting?: boolean;
  issueState?: string;
}

/** An agent container's status in this state; the other fields are what the controllers ignore. */
export const agentStatus = (state: V1ContainerState): V1ContainerStatus => ({
  name: 'agent',
  image: 'x',
  imageID: '',
  ready: false,
  restartCount: 0,
  state,
});

/** A run Pod owned by the run, as the pod builder labels it. */
export function runPod(options: PodOptions): PodObject {
  const slot = options.slot ?? 0;
  const attempt = options.attempt ?? 1;
  let state: V1ContainerState | undefined;
  if (options.waitingReason)
    state = { waiting: { reason: options.waitingReason, message: 'boom' } };
  else if (options.agent === 'running')
    state = { running: { startedAt: new Date(T0.getTime() - 5000) } };
  else if (typeof options.agent === 'object') {
    const exitCode = options.agent.succeeded ? 0 : 1;
    state = {
      terminated: {
        exitCode,
        reason: exitCode ? 'Error' : 'Completed',
        message: encodeTerminationSummary(options.agent),
      },
    };
  }
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: podName(slot, attempt),
      uid: podUid(slot, attempt),
      namespace: NS,
      resourceVersion: '9',
      creationTimestamp: new Date(T0.getTime() - (options.createdAgoMs ?? 10_000)),
      ...(options.deleting ? { deletionTimestamp: new Date(T0.getTime() - 1000) } : {}),
      labels: {
        'lorenz.dev/issuerun': RUN,
        'lorenz.dev/slot': String(slot),
        'lorenz.dev/attempt': String(attempt),
      },
      annotations: { 'lorenz.dev/issue-state': options.issueState ?? 'Todo' },
      ownerReferences: [
        {
          apiVersion: 'lorenz.dev/v1alpha1',
          kind: 'IssueRun',
          name: RUN,
          uid: RUN_UID,
          controller: true,
        },
      ],
    },
    status: {
      phase: options.phase,
      ...(state ? { containerStatuses: [agentStatus(state)] } : {}),
    },
  };
}

export function summary(fields: Partial<TerminationSummary> = {}): TerminationSummary {
  return { v: 1, slot: 0, succeeded: true, turns: 0, trail: [], records: 0, ...fields };
}

const condition = (type: string, status: Condition['status'], reason: string): Condition => ({
  type,
  status,
  reason,
  message: '',
  observedGeneration: 1,
  lastTransitionTime: at(-60_000),
});

/** The status of a run whose Pods were created (slots as listed, all not yet started). */
export function startedStatus(slots = 1, phase: 'Pending' | 'Running' = 'Pending'): IssueRunStatus {
  return {
    observedGeneration: 1,
    phase,
    reason: phase,
    message: 'waiting for the run Pod',
    attempt: 1,
    startTime: at(-60_000),
    podName: podName(slots - 1),
    inputsConfigMap: `${RUN}-inputs`,
    configDigest: 'sha256:x',
    slots: Array.from({ length: slots }, (_, slot) => ({
      slot,
      phase,
      reason: phase,
      message: 'the Pod is being created',
      podName: podName(slot),
      turns: 0,
    })),
    hooks: [],
    turn: 0,
    conditions: [
      condition('Succeeded', 'Unknown', phase),
      condition('Finished', 'False', phase),
      condition('Reconciling', 'True', 'Progressing'),
      condition('Stalled', 'False', 'Progressing'),
    ],
  };
}

/** The status of a run that finished `agoMs` before T0. */
export function finishedStatus(agoMs: number): IssueRunStatus {
  return {
    ...startedStatus(),
    phase: 'Succeeded',
    reason: 'Succeeded',
    completionTime: at(-agoMs),
    slots: [
      {
        slot: 0,
        phase: 'Succeeded',
        reason: 'Succeeded',
        message: 'the run succeeded',
        podName: podName(0),
        turns: 1,
      },
    ],
    conditions: [
      condition('Succeeded', 'True', 'Succeeded'),
      condition('Finished', 'True', 'Succeeded'),
      condition('Reconciling', 'False', 'Reconciled'),
      condition('Stalled', 'False', 'Reconciled'),
    ],
  };
}

/** `Type=Status/Reason` of each listed type, `Type=-` when absent: independent of list order. */
export function conditionSummary(
  conditions: readonly Condition[] | undefined,
  types: readonly string[],
): string[] {
  return types.map((type) => {
    const found = conditions?.find((entry) => entry.type === type);
    return found ? `${type}=${found.status}/${found.reason}` : `${type}=-`;
  });
}

/** The status of the last status PATCH among the actions since `from`, if any. */
export function writtenStatus<S>(client: FakeKubeClient, from = 0): S | undefined {
  const patch = client.actions
    .slice(from)
    .filter((action) => action.method === 'PATCH' && action.subresource === 'status')
    .at(-1);
  if (!patch) return undefined;
  const operations = patch.body as Array<{ op: string; path: string; value: unknown }>;
  const replace = operations.find((operation) => operation.path === '/status');
  if (replace) return replace.value as S;
  // Written field by field (a writer that leaves another's fields alone: the Workflow
  // reconciler and status.warm): every field it keeps is set, so they make the status.
  const fields = operations
    .filter((operation) => operation.op === 'add' && operation.path.startsWith('/status/'))
    .map((operation) => [operation.path.slice('/status/'.length), operation.value] as const);
  return fields.length > 0 ? (Object.fromEntries(fields) as S) : undefined;
}

/** A slot of a run's status on its attempt, with what it used (budgets' tests). */
export function usedSlot(attempt: number, usage?: SlotStatus['usage'], turns = 1): SlotStatus {
  return {
    slot: 0,
    phase: 'Running',
    reason: 'Running',
    message: '',
    podName: podName(0, attempt),
    attempt,
    turns,
    ...(usage ? { usage } : {}),
  };
}

/**
 * A pending permission request (a1-s0-1: slot 0, attempt 1, turn 1) asked at T0, its
 * deadline a minute later; `fields` replace any of it.
 */
export const permissionRequest = (fields: Partial<InboxPending> = {}): InboxPending => ({
  id: 'a1-s0-1',
  kind: 'permission',
  slot: 0,
  attempt: 1,
  turn: 1,
  title: 't',
  options: [],
  askedAt: at(0),
  deadline: at(60_000),
  ...fields,
});

/**
 * A permission request as the runner posts it to the tools gateway (a1-s0-1: slot 0, attempt
 * 1, turn 1, "Run the tests"), asked 2026-12-02T10:00Z with an hour to wait; `fields` replace
 * any of it.
 */
export const inboxRequest = (fields: Partial<InboxRequest> = {}): InboxRequest => ({
  id: 'a1-s0-1',
  kind: 'permission',
  slot: 0,
  attempt: 1,
  turn: 1,
  title: 'Run the tests',
  options: [],
  askedAt: '2026-12-02T10:00:00Z',
  deadline: '2026-12-02T11:00:00Z',
  ...fields,
});
