import type { Logger } from 'pino';
import {
  ISSUERUN_KIND,
  type IssueRun,
  type IssueRunStatus,
  type Workflow,
} from '../../api/index.js';
import type { KubeClient } from '../runtime/client.js';
import type { LifecycleEventWriter } from '../events/recorder.js';
import { isNotFound, resourcePath } from '../runtime/client.js';
import type { ReconcileContext, ReconcileResult } from '../runtime/controller.js';
import type { Informer } from '../runtime/informer.js';
import { liveObject, splitKey } from '../runtime/informer.js';
import type { PodTemplatePolicy } from '../shared/pod-template-check.js';
import { ISSUERUNS, type PodObject } from '../shared/resources.js';
import { ensureRunObjects, startOf } from './ensure.js';
import { createPodExpectations } from './expectations.js';
import type { LogFollowers } from './log-follower.js';
import {
  DEFAULT_POD_STATUS_OPTIONS,
  mapPodStatus,
  POD_STARTING,
  type PodStatusOptions,
} from './pod-status.js';
import {
  assignedSlots,
  cancelledSlots,
  deletedSlots,
  eventsFlushed,
  logsPending,
  observeSlots,
  runPods,
} from './slot-views.js';
import { runStateFromSlots, slotStatuses, type SlotView } from './status.js';
import type { RunnableWorkflow } from '../shared/config-snapshot.js';
import { planRetries } from './retry.js';
import { roundAttempt, startRound } from './review-round.js';
import { createAttemptStarter, createRetryDelay, deleteRunPod, isLive } from './attempts.js';
import { createDeletedNames, earlierRunPods } from './earlier-runs.js';
import { createTokenRevoker } from './tools-token.js';
import { decidedBranch } from './git-branch.js';
import { syncIssueState } from './issue-state-sync.js';
import { checkStart, refusalState, type StartPreconditionDeps } from './start-preconditions.js';
import { createRunStatusStore, runKey, type RunStatusStore } from './status-store.js';
import { DEFAULT_EVENTS_WAIT_MS, DEFAULT_PROGRESS_INTERVAL_MS, REQUEUE_MS } from './requeue.js';
import { ENDED_BEFORE_RECORDED, hasFinished, runUid } from './run-guards.js';
import { endedState, stoppedState, type IssueStates } from './endings.js';
import type { BudgetFor } from './attempt-budget.js';
import { newlyPreempted } from './kueue.js';
import { withKueueWords } from './kueue-queues.js';

export { CREATE_RETRY_BASE_MS, CREATE_RETRY_MAX_MS } from './attempts.js';

export interface IssueRunReconcilerDeps {
  client: KubeClient;
  issueRuns: Informer<IssueRun>;
  workflows: Informer<Workflow>;
  pods: Informer<PodObject>;
  followers: LogFollowers;
  loadWorkflowConfig: (namespace: string, configMap: string) => Promise<RunnableWorkflow>;
  operatorImage: string;
  /** What run Pods may have beyond the restricted profile; the built-in policy otherwise. */
  podTemplatePolicy?: PodTemplatePolicy;
  now: () => Date;
  logger?: Logger;
  podStatus?: Partial<Omit<PodStatusOptions, 'now'>>;
  /** Least time between two status writes of a running run (terminal ones go at once). */
  progressIntervalMs?: number;
  /** The agent-tools gateway URL run Pods use; absent: no token Secrets, no tools. */
  toolsUrl?: string | undefined;
  /** How long one reconcile waits for a run's Events to be written before it requeues. */
  eventsWaitMs?: number;
  /** Writes the Events of a run's life (dispatched, started, retry, end); none when absent. */
  lifecycleEvents?: LifecycleEventWriter;
  /** Told of each status written: the end it records is counted (shared/run-metrics.ts). */
  onStatusWritten?: (
    run: IssueRun,
    previous: IssueRunStatus | undefined,
    next: IssueRunStatus,
  ) => void;
  /** The status store, shared with the review controller (main wires one); made here if absent. */
  store?: RunStatusStore;
  /** An attempt's budget (shared/run-budget.ts); absent: run Pods get none. */
  budgetFor?: BudgetFor | undefined;
}

export { DEFAULT_EVENTS_WAIT_MS, DEFAULT_PROGRESS_INTERVAL_MS, REQUEUE_MS } from './requeue.js';

/**
 * The IssueRun reconciler, kubebuilder's ladder: fetch → guards (gone, finished,
 * cancelled, objects missing; a start's preconditions) → ensure inputs and Pods → follow logs → compute conditions →
 * patch status, only when it changed, and for a running run at most once per progress
 * interval.
 */
// eslint-disable-next-line max-lines-per-function -- a factory: the closures it returns share the state it keeps
export function createIssueRunReconciler(deps: IssueRunReconcilerDeps) {
  const store =
    deps.store ??
    createRunStatusStore({
      client: deps.client,
      issueRuns: deps.issueRuns,
      now: deps.now,
      progressIntervalMs: deps.progressIntervalMs ?? DEFAULT_PROGRESS_INTERVAL_MS,
      events: deps.lifecycleEvents,
      onWritten: deps.onStatusWritten,
    });
  const { statusOf, writePodless } = store;
  const patchStatus = store.patch;
  const expectations = createPodExpectations();
  /** Refused creates in a row, per run uid: the retry delay grows with them. */
  const createRetries = new Map<string, number>();
  const attempts = createAttemptStarter({
    ...deps,
    expectations,
    createRetries,
    runs: (namespace) => store.freshRuns(namespace),
    storeHosts: (run, attempt, hosts) => store.storeHosts(runKey(run), run, attempt, hosts),
  });
  const tokens = deps.toolsUrl === undefined ? undefined : createTokenRevoker(deps.client);
  const eventsWritten = (views: readonly SlotView[]) =>
    eventsFlushed(views, deps.eventsWaitMs ?? DEFAULT_EVENTS_WAIT_MS);
  const podStatusOptions = (): PodStatusOptions => ({
    ...DEFAULT_POD_STATUS_OPTIONS,
    ...deps.podStatus,
    now: deps.now(),
  });

  /** The uid of the run object last seen under each key: what to forget when it is gone. */
  const uids = new Map<string, string>();
  const deletedNames = createDeletedNames(deps.now);

  /** Drops what is kept in memory for a run object: it is done, or gone. */
  function forgetRun(uid: string) {
    // The status memory stays: the cache may still lag the final write.
    expectations.forget(uid);
    createRetries.delete(uid);
    deps.followers.forgetRun(uid);
  }

  /** Finished: nothing more to do but delete the run once its Workflow's TTL has passed. */
  async function finishedRun(key: string, run: IssueRun) {
    forgetRun(runUid(run));
    // A finished run's tokens open nothing any more.
    await tokens?.revoke(run);
    const workflow = deps.workflows.get(run.metadata.namespace, run.spec.workflowRef.name);
    const ttl = workflow?.spec.ttlSecondsAfterFinished;
    const completed = run.status?.completionTime;
    if (ttl === undefined || !completed) return;
    const remaining = new Date(completed).getTime() + ttl * 1000 - deps.now().getTime();
    if (remaining > 0) return { requeueAfter: remaining };
    try {
      // Foreground, as the poller removes runs: the name frees once the run's objects are
      // gone, so a run dispatched again under it never meets them.
      await deps.client.request({
        method: 'DELETE',
        path: resourcePath(ISSUERUNS, run.metadata.namespace, run.metadata.name),
        body: { propagationPolicy: 'Foreground' },
      });
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }

  const deletePod = (pod: PodObject) => deleteRunPod(deps.client, pod);

  const preconditions: StartPreconditionDeps = {
    client: deps.client,
    workflow: (run) => deps.workflows.get(run.metadata.namespace, run.spec.workflowRef.name),
    loadWorkflowConfig: deps.loadWorkflowConfig,
    podsNotCached: (run, cachedPods) =>
      expectations.unmet(runUid(run), cachedPods, deps.now().getTime()),
    runs: (namespace) => store.freshRuns(namespace),
  };

  /** The Workflow's active and terminal states; null when its configuration cannot be read. */
  async function issueStates(run: IssueRun): Promise<IssueStates | null> {
    const workflow = deps.workflows.get(run.metadata.namespace, run.spec.workflowRef.name);
    const snapshot = workflow?.status?.lastGoodConfigMap;
    if (!snapshot) return null;
    try {
      return (await deps.loadWorkflowConfig(run.metadata.namespace ?? '', snapshot)).loaded.config
        .tracker;
    } catch {
      return null;
    }
  }

  /** Cancelled: delete live Pods (their grace period runs after_run), then write the end. */
  async function cancelRun(
    key: string,
    run: IssueRun,
    pods: readonly PodObject[],
  ): Promise<ReconcileResult> {
    for (const pod of pods) {
      if (pod.metadata?.deletionTimestamp || !isLive(pod)) continue;
      await deletePod(pod);
    }
    const views = cancelledSlots(run, pods, deps.followers, podStatusOptions());
    if (pods.some(isLive) || views.some((view) => view.log?.streaming)) {
      return { requeueAfter: REQUEUE_MS.cancelling };
    }
    if (!(await eventsWritten(views))) return { requeueAfter: REQUEUE_MS.eventsPending };
    // Stopped because its issue was done is a success; otherwise it says what stopped it.
    const ending = stoppedState(run, views, pods, await issueStates(run));
    const result = await patchStatus(key, run, statusOf(run, views, ending), true);
    forgetRun(runUid(run));
    return result;
  }

  /**
   * Objects not ensured yet (no inputs or slots recorded): the preconditions
   * (start-preconditions.ts), then the branch and hosts into the status, then the objects.
   */
  async function startRun(
    key: string,
    run: IssueRun,
    pods: readonly PodObject[],
    /** The cached Pods controlled by an IssueRun of this name: an earlier run's may be among them. */
    namesakePods: readonly PodObject[],
    /** Aborted when this replica stops leading: the start's status is then not written. */
    signal: AbortSignal | undefined,
  ): Promise<ReconcileResult> {
    const verdict = await checkStart(preconditions, run, pods);
    if (!verdict.start) {
      const state = refusalState(verdict);
      if (state === null) return { requeueAfter: verdict.requeueAfter ?? 0 };
      const written = await writePodless(key, run, state);
      return verdict.requeueAfter === undefined ? written : { requeueAfter: verdict.requeueAfter };
    }
    const { workflow, runnable, branch, ssh, source } = verdict;
    const cachedPods = new Set(pods.map((pod) => pod.metadata?.name ?? ''));
    // The branch goes into the status before anything is rendered with it: whatever happens
    // next (a restart, a new WORKFLOW.md), every attempt reads this one back.
    let current = branch.kind === 'new' ? await store.storeBranch(key, run, branch.branch) : run;
    // So do the hosts: a restart must find them, not choose again.
    if (ssh.kind === 'ready' && ssh.fresh.length > 0) {
      current = await store.storeHosts(key, current, run.spec.attempt ?? 1, ssh.hosts);
    }
    const ensured = await ensureRunObjects({
      // The run as it came: only the branch was written since, nothing was rendered yet.
      ...startOf(deps, run, workflow, runnable, ssh),
      existingPods: cachedPods,
      earlierRunAbout: deletedNames.recentlyGone(key) || earlierRunPods(namesakePods, run),
      branch: decidedBranch(branch),
      source,
    });
    if (!ensured.ok) {
      const { reason, message } = ensured;
      if (ensured.final) {
        createRetries.delete(runUid(run));
        return writePodless(key, current, { kind: 'finished', succeeded: false, reason, message });
      }
      // Refused for now (quota, admission, a name taken): say so at once, and try again
      // later and later.
      const failures = createRetries.get(runUid(run)) ?? 0;
      createRetries.set(runUid(run), failures + 1);
      await writePodless(key, current, { kind: 'stalled', reason, message });
      return { requeueAfter: createRetryDelay(failures, ensured) };
    }
    createRetries.delete(runUid(run));
    expectations.expect(
      runUid(run),
      ensured.slots.map((entry) => entry.podName),
      deps.now().getTime(),
    );
    // A Pod that ended before its start was recorded (the controller died between the two)
    // is not judged here: its log holds hook records and Events still owed, and only
    // observeRun reads logs. Recorded as running, it ends there at once.
    let endedUnread = false;
    const views: SlotView[] = ensured.slots.map((entry) => {
      const pod = pods.find((candidate) => candidate.metadata?.name === entry.podName);
      const outcome = pod ? mapPodStatus(pod, podStatusOptions()) : POD_STARTING;
      if (!outcome?.finished) return { ...entry, outcome };
      endedUnread = true;
      return { ...entry, outcome: { ...outcome, ...ENDED_BEFORE_RECORDED } };
    });
    const { configDigest, inputsConfigMap } = ensured;
    const next = statusOf(current, views, runStateFromSlots(views), {
      configDigest,
      inputsConfigMap,
      workspaceSource: source,
    });
    // Written after this worker moves on (status-store.ts, patchLater): in a burst, the next
    // runs' Pod creates go to the apiserver before this status, whose write holds no worker.
    store.patchLater(key, current, next, signal);
    return endedUnread ? { requeueAfter: 0 } : undefined;
  }

  /** Running: map the Pods and logs to a status; the end is written at once. */
  async function observeRun(
    key: string,
    run: IssueRun,
    pods: readonly PodObject[],
  ): Promise<ReconcileResult> {
    await syncIssueState(deps.client, run, pods, deps.logger);
    const assigned = assignedSlots(run, pods);
    const observed = [
      ...observeSlots(run, pods, deps.followers, podStatusOptions()),
      ...deletedSlots(run, pods, deps.followers),
      ...assigned,
    ].sort((a, b) => a.slot - b.slot);
    const policy = await attempts.policyInputs(run);
    const plan = planRetries(
      run,
      observed,
      policy.capMs,
      deps.now(),
      policy.issueActive,
      policy.reviewing,
    );
    // An attempt whose host was recorded but whose Pod was never made starts now, there.
    for (const view of assigned) {
      plan.due.set(view.attempt, [...(plan.due.get(view.attempt) ?? []), view.slot]);
    }
    if (plan.retrying.length > 0) {
      // A failed attempt's records all go in before its slot moves on.
      if (logsPending(plan.retrying)) return { requeueAfter: REQUEUE_MS.logsDraining };
      if (!(await eventsWritten(plan.retrying))) return { requeueAfter: REQUEUE_MS.eventsPending };
    }
    // A review round is recorded before its Pods (as hosts are): a restart starts that one.
    const rounded =
      plan.reviewRound === undefined
        ? run
        : await store.update(key, run, (status) =>
            startRound(status, plan.reviewRound ?? 0, roundAttempt(plan)),
          );
    // What the ended attempts spent is in the status before the next one's budget is made.
    const current =
      plan.retrying.length > 0
        ? await store.countUsage(key, rounded, slotStatuses(plan.retrying))
        : rounded;
    const started = await attempts.startDue(current, pods, plan);
    if (plan.retrying.length > 0 || assigned.length > 0) {
      const views = started.views;
      const result = await patchStatus(
        key,
        run,
        statusOf(run, views, runStateFromSlots(views), started.created),
        true,
        // The ended attempts' last turns count before their slots move on.
        slotStatuses(plan.retrying),
      );
      const wake = Math.min(plan.wakeAt ?? Infinity, started.retryAt ?? Infinity);
      const after = Math.min(result?.requeueAfter ?? Infinity, wake - deps.now().getTime());
      return Number.isFinite(after) ? { requeueAfter: Math.max(after, 0) } : result;
    }
    // Kueue's reason for a queued slot is read from its Workload (kueue-queues.ts).
    const views = await withKueueWords(deps.client, run.metadata.namespace ?? '', observed, pods);
    const state = runStateFromSlots(views);
    if (state.kind === 'finished') {
      // Every record of every Pod must be in before the verdict: wait for the log reads.
      if (logsPending(views)) return { requeueAfter: REQUEUE_MS.logsDraining };
      if (!(await eventsWritten(views))) return { requeueAfter: REQUEUE_MS.eventsPending };
      const states = state.succeeded ? await issueStates(run) : null;
      const ending = endedState(run, state, views, states);
      const result = await patchStatus(key, run, statusOf(run, views, ending), true);
      forgetRun(runUid(run));
      return result;
    }
    // Progress (hook results, turns) waits out the interval, so that a short run costs few
    // writes; but the first Running goes at once: a run that is working must not show
    // Pending for its first seconds (a short one would otherwise never show Running at all).
    // A Pod status that changes with time asks to be seen again.
    const next = statusOf(run, views, state);
    const nowRunning = next.phase === 'Running' && run.status?.phase !== 'Running';
    // Kueue deletes a Pod it preempts: the slot must say so before the Pod is gone.
    const result = await patchStatus(key, run, next, nowRunning || newlyPreempted(run, views));
    const recheck = views
      .map((view) => view.outcome?.recheckAfterMs)
      .filter((ms): ms is number => ms !== undefined);
    const after = Math.min(result?.requeueAfter ?? Infinity, ...recheck);
    return Number.isFinite(after) ? { requeueAfter: after } : result;
  }

  return async function reconcileIssueRun(
    key: string,
    context?: ReconcileContext,
  ): Promise<ReconcileResult> {
    const { namespace = '', name } = splitKey(key);
    const cachedRun = liveObject(deps.issueRuns, key);
    if (!cachedRun) {
      store.forget(key);
      const uid = uids.get(key);
      if (uid !== undefined) forgetRun(uid);
      if (uid !== undefined) tokens?.forget(uid);
      if (uid !== undefined) deletedNames.gone(key);
      uids.delete(key);
      return;
    }
    const previous = uids.get(key);
    if (previous !== undefined && previous !== runUid(cachedRun)) {
      // Deleted and made again between two looks: the earlier object is gone all the same.
      store.forget(key);
      forgetRun(previous);
      tokens?.forget(previous);
      deletedNames.gone(key);
    }
    uids.set(key, runUid(cachedRun));
    // The cache may not have our last status write yet: reason from the freshest status.
    const run = store.fresh(key, cachedRun);
    // From the cache's owner index: walking every Pod of the namespace made a burst quadratic.
    const pods = runPods(deps.pods.ownedBy(runUid(run)), run);

    if (hasFinished(run, pods, deps.now())) return finishedRun(key, run);
    if (run.spec.cancelRequested) return cancelRun(key, run, pods);
    if (!run.status?.inputsConfigMap || (run.status.slots ?? []).length === 0) {
      const namesakes = deps.pods.ownedByName(namespace, ISSUERUN_KIND, name);
      return startRun(key, run, pods, namesakes, context?.signal);
    }
    const cachedPods = new Set(pods.map((pod) => pod.metadata?.name ?? ''));
    if (expectations.unmet(runUid(run), cachedPods, deps.now().getTime())) {
      // Created a moment ago and not in the cache yet: not deleted.
      return { requeueAfter: REQUEUE_MS.podsNotCached };
    }
    return observeRun(key, run, pods);
  };
}
