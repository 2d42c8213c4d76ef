import {
  Reasons,
  type IssueRun,
  type Workflow,
  type WorkspaceSourceStatus,
} from '../../api/index.js';
import type { KubeClient } from '../runtime/client.js';
import type { RunnableWorkflow } from '../shared/config-snapshot.js';
import type { PodObject } from '../shared/resources.js';
import { decideBranch, type BranchDecision } from './git-branch.js';
import { missingGitCredentials } from './git-credentials.js';
import { REQUEUE_MS } from './requeue.js';
import { firstAttemptSlots, planSsh, type SshPlan } from './ssh-placement.js';
import { runState, type RunState } from './status.js';
import { missingStorageClass } from './storage-class.js';
import { missingLocalQueue } from './kueue-queues.js';
import { refuseSnapshotSource, requestedSource, sourceStatus } from './snapshot-source.js';

/**
 * What may keep a run from starting, in the order they are asked: the Workflow exists, is
 * not suspended and has a good configuration; Pods created a moment ago are in the cache;
 * the branch can be named; the git credentials, the StorageClass, the snapshot source and the LocalQueue exist; the SSH hosts
 * have the key and room. The first that fails is the verdict; the reconciler writes it.
 */
export type StartVerdict =
  | {
      start: true;
      workflow: Workflow;
      runnable: RunnableWorkflow;
      branch: Exclude<BranchDecision, { kind: 'unresolved' }>;
      ssh: Exclude<SshPlan, { kind: 'wait' | 'fail' }>;
      /** What the workspace starts from: recorded at the first start, kept from then on. */
      source: WorkspaceSourceStatus;
    }
  | {
      start: false;
      /**
       * What the run's status says: stalled (waits on the user), pending (waits on the
       * cluster), failed (the run ends), unwritten (nothing to say: look again soon).
       */
      hold: 'stalled' | 'pending' | 'failed' | 'unwritten';
      reason: string;
      message: string;
      /** When to look again; absent: when the run or its Workflow changes. */
      requeueAfter?: number;
    };

export type StartRefusal = Extract<StartVerdict, { start: false }>;

export interface StartPreconditionDeps {
  client: KubeClient;
  workflow: (run: IssueRun) => Workflow | undefined;
  loadWorkflowConfig: (namespace: string, configMap: string) => Promise<RunnableWorkflow>;
  /** True while Pods this controller created for the run are not in the cache yet. */
  podsNotCached: (run: IssueRun, cachedPods: ReadonlySet<string>) => boolean;
  /** The namespace's runs as freshly as the controller knows them (SSH host load). */
  runs: (namespace: string) => readonly IssueRun[];
}

const refuse = (
  hold: StartRefusal['hold'],
  reason: string,
  message: string,
  requeueAfter?: number,
): StartRefusal => ({
  start: false,
  hold,
  reason,
  message,
  ...(requeueAfter === undefined ? {} : { requeueAfter }),
});

/** The first precondition a run's start fails, or everything the start needs. */
export async function checkStart(
  deps: StartPreconditionDeps,
  run: IssueRun,
  pods: readonly PodObject[],
): Promise<StartVerdict> {
  const workflow = deps.workflow(run);
  if (!workflow) {
    const message = `Workflow ${run.spec.workflowRef.name} not found`;
    return refuse('stalled', Reasons.WorkflowNotFound, message);
  }
  if (workflow.spec.suspend && pods.length === 0) {
    return refuse('pending', Reasons.WorkflowSuspended, 'the Workflow is suspended');
  }
  const snapshot = workflow.status?.lastGoodConfigMap;
  if (!snapshot) {
    const why = workflow.status?.message ?? 'not reconciled yet';
    const message = `Workflow ${workflow.metadata.name} has no valid configuration: ${why}`;
    return refuse('stalled', Reasons.WorkflowInvalid, message);
  }
  // Created a moment ago and not in the cache yet: never create twice.
  if (deps.podsNotCached(run, new Set(pods.map((pod) => pod.metadata?.name ?? '')))) {
    const message = 'Pods created a moment ago are not in the cache yet';
    return refuse('unwritten', 'PodsNotCached', message, REQUEUE_MS.podsNotCached);
  }
  const runnable = await deps.loadWorkflowConfig(run.metadata.namespace ?? '', snapshot);
  const config = runnable.loaded.config;
  const branch = decideBranch(config.workspace.git, run);
  if (branch.kind === 'unresolved') return refuse('failed', branch.reason, branch.message);
  // Secrets and StorageClasses are not watched: a missing one is looked for again.
  if (pods.length === 0 && config.workspace.git) {
    const missing = await missingGitCredentials(deps.client, workflow);
    if (missing !== null) {
      const reason = Reasons.GitCredentialsNotFound;
      return refuse('stalled', reason, missing, REQUEUE_MS.secretMissing);
    }
  }
  if (pods.length === 0) {
    const missing = await missingStorageClass(deps.client, workflow);
    if (missing !== null) {
      const reason = Reasons.StorageClassNotFound;
      return refuse('stalled', reason, missing, REQUEUE_MS.storageClassMissing);
    }
  }
  // Only before the first claim is made: later attempts reuse it, whatever became of the
  // snapshot (or of the Workflow's warm snapshot: a later warm build never touches a run).
  if (pods.length === 0 && !run.status?.workspaceSource) {
    const refused = await refuseSnapshotSource(deps.client, run, workflow, config);
    if (refused !== null) {
      const { reason, message } = refused;
      return refuse('stalled', reason, message, REQUEUE_MS.snapshotWaiting);
    }
  }
  const queue = pods.length === 0 ? await missingLocalQueue(deps.client, run, workflow) : null;
  if (queue !== null) {
    return refuse('stalled', queue.reason, queue.message, REQUEUE_MS.localQueueMissing);
  }
  const ssh = await planSsh({
    client: deps.client,
    workflow,
    config,
    run,
    slots: firstAttemptSlots(run, config),
    runs: () => deps.runs(run.metadata.namespace ?? ''),
  });
  if (ssh.kind === 'fail') return refuse('failed', ssh.reason, ssh.message);
  if (ssh.kind === 'wait') {
    return refuse(ssh.stalled ? 'stalled' : 'pending', ssh.reason, ssh.message, ssh.requeueMs);
  }
  const source = run.status?.workspaceSource ?? sourceStatus(requestedSource(run, workflow));
  return { start: true, workflow, runnable, branch, ssh, source };
}

/** The status a refusal writes; null for one that writes nothing. */
export function refusalState(verdict: StartRefusal): RunState | null {
  const { reason, message } = verdict;
  switch (verdict.hold) {
    case 'stalled':
      return { kind: 'stalled', reason, message };
    case 'pending':
      return runState('Pending', reason, message);
    case 'failed':
      return { kind: 'finished', succeeded: false, reason, message };
    case 'unwritten':
      return null;
  }
}
