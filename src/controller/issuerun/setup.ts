import type { Logger } from 'pino';
import { errorMessage } from '../../workflow/errors.js';
import type { IssueRun, Workflow } from '../../api/index.js';
import {
  createEventRecorder,
  createLifecycleEventWriter,
  warnRefusedEvent,
} from '../events/recorder.js';
import type { KubeClient } from '../runtime/client.js';
import { PODS } from '../runtime/client.js';
import { objectKey } from '../runtime/informer.js';
import type { Manager } from '../runtime/manager.js';
import { LABEL_MANAGED_BY, MANAGED_BY } from '../shared/constants.js';
import type { PodLogLineSink } from '../shared/log-sink.js';
import type { PodTemplatePolicy } from '../shared/pod-template-check.js';
import { runMetrics } from '../shared/run-metrics.js';
import { ISSUERUNS, WORKFLOWS, type PodObject } from '../shared/resources.js';
import { createLogFollowers, type PodLogState } from './log-follower.js';
import type { ObjectIdentity } from '../shared/owner.js';
import type { PodStatusOptions } from './pod-status.js';
import { createIssueRunReconciler, DEFAULT_PROGRESS_INTERVAL_MS } from './reconciler.js';
import { createRunStatusStore, type RunStatusStore } from './status-store.js';
import { createWorkflowConfigCache } from '../shared/config-snapshot.js';
import type { PriceTableSource } from '../shared/price-table-source.js';
import { budgetTimeZone } from '../shared/spend.js';
import { composeRunBudget } from '../shared/run-budget.js';

export interface IssueRunControllerOptions {
  /** The client the reconciler writes with (main wraps it to count writes). */
  client: KubeClient;
  /** Names this replica in the Events it writes. */
  identity: string;
  logger: Logger;
  operatorImage: string;
  podTemplatePolicy: PodTemplatePolicy;
  progressIntervalMs?: number | undefined;
  podStatus?: Partial<Omit<PodStatusOptions, 'now'>> | undefined;
  /** How long an ended Pod's log may be refused before its records come from its summary. */
  logLostAfterMs?: number | undefined;
  /** The agent-tools gateway URL run Pods use; absent: tools are off. */
  toolsUrl?: string | undefined;
  /** Gets every line read from a run Pod's log (the archive); none when absent. */
  onLogLine?: PodLogLineSink | undefined;
  /** The price table (`--price-table`); absent: costs are not counted. */
  priceTable?: PriceTableSource | undefined;
  /** The clock budget days are counted by (tests move it); the system's otherwise. */
  now?: (() => Date) | undefined;
}

/**
 * Reconciles at once: many runs start together, and each waits on API round trips (its
 * creates, then its status write). At 32 a burst of 500 waited for workers: with 96, over
 * HTTP/2's one connection, the last Pod came 3.7–5.4 s after the first create instead of
 * 6.3–6.7 s, create→Pod p99 2.1–2.9 s instead of 4.6–5.0 (bench:reconcile, 2026-12-06, load 4–7).
 */
const CONCURRENCY = 96;

/** The controller of the run Pod a Pod belongs to, as a queue key. */
function ownerRunKey(pod: PodObject): string | undefined {
  const owner = pod.metadata?.ownerReferences?.find(
    (reference) => reference.controller && reference.kind === 'IssueRun',
  );
  return owner ? `${pod.metadata?.namespace}/${owner.name}` : undefined;
}

/** Where a Pod's log record stands, as its Event names it: Pod, slot, attempt and record. */
function recordPlace(state: { podName: string; slot: number; attempt: number }, seq: number) {
  return { podName: state.podName, slot: state.slot, attempt: state.attempt, seq, now: new Date() };
}

/**
 * The IssueRun controller with what it watches (kubebuilder's SetupWithManager): its runs,
 * the Pods they own (only Lorenz's, by label), and Workflows, whose changes wake the runs
 * still waiting on them. Returns what the manager cannot stop by itself: the log streams.
 */
// eslint-disable-next-line max-lines-per-function -- a factory: the closures it returns share the state it keeps
export function setupIssueRunController(
  manager: Manager,
  options: IssueRunControllerOptions,
): { stop(): void; store: RunStatusStore } {
  const { client, logger } = options;
  const issueRuns = manager.informer<IssueRun>(ISSUERUNS);
  const workflows = manager.informer<Workflow>(WORKFLOWS);
  const pods = manager.informer<PodObject>(PODS, {
    labelSelector: `${LABEL_MANAGED_BY}=${MANAGED_BY}`,
  });

  let enqueue: (key: string) => void = () => {};
  const events = createEventRecorder({ client, reportingInstance: options.identity });
  const metrics = runMetrics(manager.metrics.registry);
  metrics.trackRuns({
    runs: () => issueRuns.list(),
    workflows: () => workflows.list(),
    leading: () => manager.isLeader(),
  });
  /** The Pod's own run only: one deleted and re-created under its name is another run. */
  const runOf = (state: PodLogState): IssueRun | undefined => {
    const run = issueRuns.get(state.namespace, state.runKey.slice(state.namespace.length + 1));
    return run?.metadata.uid && run.metadata.uid === state.runUid ? run : undefined;
  };
  const ownRun = (state: PodLogState): ObjectIdentity | undefined => {
    const run = runOf(state);
    if (!run?.metadata.uid) return undefined;
    return { name: run.metadata.name ?? '', namespace: state.namespace, uid: run.metadata.uid };
  };
  const followers = createLogFollowers({
    client,
    logger,
    ...(options.logLostAfterMs === undefined ? {} : { logLostAfterMs: options.logLostAfterMs }),
    ...(options.onLogLine ? { onLine: options.onLogLine } : {}),
    onHook: async (state, record) => {
      const run = ownRun(state);
      if (!run) return;
      const created = await events.recordHook({
        run,
        ...recordPlace(state, record.seq),
        message: record.message,
        ...(record.recovered ? { recovered: true } : {}),
      });
      // Once per record: a log replayed after a restart meets its Event (created false).
      const workflow = runOf(state)?.spec.workflowRef.name;
      if (created && workflow !== undefined) metrics.hookRecorded(workflow, record.message);
    },
    onGit: async (state, record) => {
      const run = ownRun(state);
      if (!run) return;
      await events.recordGit({ run, ...recordPlace(state, record.seq), message: record.message });
    },
    onProgress: (state) => enqueue(state.runKey),
    // What the run's status holds for the Pod was counted by an earlier controller: read
    // before this one's first status write (which starts from an empty log).
    onFollow: (state) => {
      const slot = runOf(state)?.status?.slots?.find((entry) => entry.podName === state.podName);
      if (slot?.usage) metrics.tokensCounted(state.podUid, slot.usage);
    },
    onUsage: (state, usage) => {
      const run = runOf(state);
      if (!run) return;
      const pod = { uid: state.podUid, namespace: state.namespace };
      metrics.tokensRead({ ...pod, workflow: run.spec.workflowRef.name }, usage);
    },
  });
  const lifecycleEvents = createLifecycleEventWriter({
    client,
    reportingInstance: options.identity,
    onRefused: warnRefusedEvent(logger),
  });
  // One store for the run statuses of this process: the review controller writes through it
  // too, so neither wipes the other's writes.
  const now = options.now ?? (() => new Date());
  const store = createRunStatusStore({
    client,
    issueRuns,
    now,
    budgetTimeZone: (run) =>
      budgetTimeZone(workflows.get(run.metadata.namespace, run.spec.workflowRef.name)),
    progressIntervalMs: options.progressIntervalMs ?? DEFAULT_PROGRESS_INTERVAL_MS,
    events: lifecycleEvents,
    onWritten: metrics.statusWritten,
    // A start's status that could not be written: the run starts again from what the
    // apiserver holds (its objects exist, so nothing is made twice).
    onDeferredFailed: (key, error) => {
      logger.warn(
        { key, err: errorMessage(error) },
        'writing a start status failed; reconciling again',
      );
      enqueue(key);
    },
  });
  const controller = manager.controller({
    name: 'issuerun',
    concurrency: CONCURRENCY,
    reconcile: createIssueRunReconciler({
      store,
      client,
      issueRuns,
      workflows,
      pods,
      followers,
      loadWorkflowConfig: createWorkflowConfigCache(client),
      operatorImage: options.operatorImage,
      podTemplatePolicy: options.podTemplatePolicy,
      now,
      logger,
      budgetFor: async (run, workflow, config) =>
        composeRunBudget({
          config,
          workflow,
          run,
          runs: () => store.freshRuns(run.metadata.namespace ?? ''),
          prices: await options.priceTable?.current(),
          now: now(),
        }),
      ...(options.progressIntervalMs === undefined
        ? {}
        : { progressIntervalMs: options.progressIntervalMs }),
      ...(options.podStatus ? { podStatus: options.podStatus } : {}),
      toolsUrl: options.toolsUrl,
      onStatusWritten: metrics.statusWritten,
      lifecycleEvents,
    }),
  });
  enqueue = (key) => controller.enqueue(key);

  const onRun = (run: IssueRun) => enqueue(objectKey(run));
  issueRuns.onAdd(onRun);
  issueRuns.onUpdate((_old, run) => onRun(run));
  issueRuns.onDelete(onRun);
  const onPod = (pod: PodObject) => {
    const key = ownerRunKey(pod);
    if (key) enqueue(key);
  };
  pods.onAdd(onPod);
  pods.onUpdate((_old, pod) => onPod(pod));
  pods.onDelete((pod) => {
    onPod(pod);
    if (pod.metadata?.uid) metrics.forgetPod(pod.metadata.uid);
  });
  // Runs waiting on a Workflow (not found, no valid config yet) look again when it changes.
  const onWorkflow = (workflow: Workflow) => {
    for (const run of issueRuns.list(workflow.metadata.namespace)) {
      if (run.spec.workflowRef.name === workflow.metadata.name && !run.status?.podName) onRun(run);
    }
  };
  workflows.onAdd(onWorkflow);
  workflows.onUpdate((_old, workflow) => onWorkflow(workflow));
  workflows.onDelete(onWorkflow);

  // A replica that no longer leads writes no Events: the next leader reads the logs again.
  manager.onLeadershipLost(() => followers.stopAll());
  return { stop: () => followers.stopAll(), store };
}
