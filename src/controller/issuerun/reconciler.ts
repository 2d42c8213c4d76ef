import type { V1Pod } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import {
  FINISHED,
  GROUP,
  ISSUERUN_PLURAL,
  Reasons,
  VERSION,
  findCondition,
  type IssueRun,
  type IssueRunStatus,
  type Workflow,
} from '../../api/index.js';
import { errorMessage } from '../../workflow/errors.js';
import type { KubeClient } from '../runtime/client.js';
import { PODS, isNotFound, resourcePath } from '../runtime/client.js';
import type { Informer, KubeObject } from '../runtime/informer.js';
import { splitKey } from '../runtime/informer.js';
import { AGENT_CONTAINER_NAME, ANNOTATION_ISSUE_STATE, LABEL_SLOT } from './constants.js';
import { ensureRunObjects } from './ensure.js';
import type { LogFollowers } from './log-follower.js';
import {
  DEFAULT_POD_STATUS_OPTIONS,
  mapPodStatus,
  type PodOutcome,
  type PodStatusOptions,
} from './pod-status.js';
import { runState, runStatus, runStateFromSlots, type RunState, type SlotView } from './status.js';
import type { RunnableWorkflow } from './workflow-config.js';
import { canonicalJson, createStatusWriter } from './status-writer.js';

export type PodObject = V1Pod & KubeObject;
export const ISSUERUNS = { group: GROUP, version: VERSION, plural: ISSUERUN_PLURAL };

export interface IssueRunReconcilerDeps {
  client: KubeClient;
  issueRuns: Informer<IssueRun>;
  workflows: Informer<Workflow>;
  pods: Informer<PodObject>;
  followers: LogFollowers;
  loadWorkflowConfig: (namespace: string, configMap: string) => Promise<RunnableWorkflow>;
  operatorImage: string;
  now: () => Date;
  logger?: Logger;
  podStatus?: Omit<PodStatusOptions, 'now'>;
  /** Least time between two status writes of a running run (terminal ones go at once). */
  progressIntervalMs?: number;
}

type Result = { requeueAfter?: number } | void;

/** The Pods the run owns, by its uid (labels may be shortened; ownership is exact). */
export function runPods(pods: readonly PodObject[], run: IssueRun): PodObject[] {
  return pods.filter((pod) =>
    (pod.metadata?.ownerReferences ?? []).some(
      (owner) => owner.uid === run.metadata.uid && owner.controller,
    ),
  );
}

const agentStarted = (pod: PodObject): boolean => {
  const state = pod.status?.containerStatuses?.find(
    (status) => status.name === AGENT_CONTAINER_NAME,
  )?.state;
  return Boolean(state?.running || state?.terminated);
};

/**
 * The IssueRun reconciler, kubebuilder's ladder: fetch → guards (gone, finished,
 * cancelled) → ensure inputs and Pods → follow logs → compute conditions → patch status,
 * only when it changed, and for a running run at most once per progress interval.
 */
export function createIssueRunReconciler(deps: IssueRunReconcilerDeps) {
  const statuses = createStatusWriter<IssueRunStatus>(deps.client, ISSUERUNS);
  const progressInterval = deps.progressIntervalMs ?? 5000;
  /** Pods created but maybe not in the cache yet (controller-runtime's "expectations"). */
  const expectedPods = new Map<string, { names: string[]; until: number }>();
  const podStatusOptions = { ...DEFAULT_POD_STATUS_OPTIONS, ...deps.podStatus };

  function forgetRun(key: string, pods: readonly PodObject[]): void {
    // The status memory stays: the cache may still lag the final write.
    expectedPods.delete(key);
    for (const pod of pods)
      deps.followers.forget(pod.metadata?.namespace ?? '', pod.metadata?.name ?? '');
  }

  async function patchStatus(
    key: string,
    run: IssueRun,
    next: IssueRunStatus,
    urgent: boolean,
  ): Promise<Result> {
    if (canonicalJson(next) === canonicalJson(run.status ?? {})) return;
    const now = deps.now().getTime();
    const since = now - statuses.lastWriteAt(key);
    if (!urgent && since < progressInterval) return { requeueAfter: progressInterval - since };
    const { namespace = '', name } = splitKey(key);
    await statuses.write(key, namespace, name, next, now);
  }

  async function finishedRun(
    key: string,
    run: IssueRun,
    pods: readonly PodObject[],
  ): Promise<Result> {
    forgetRun(key, pods);
    const workflow = deps.workflows.get(run.metadata.namespace, run.spec.workflowRef.name);
    const ttl = workflow?.spec.ttlSecondsAfterFinished;
    const completed = run.status?.completionTime;
    if (ttl === undefined || !completed) return;
    const remaining = new Date(completed).getTime() + ttl * 1000 - deps.now().getTime();
    if (remaining > 0) return { requeueAfter: remaining };
    try {
      await deps.client.request({
        method: 'DELETE',
        path: resourcePath(ISSUERUNS, run.metadata.namespace, run.metadata.name),
        body: { propagationPolicy: 'Background' },
      });
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }

  /** A status with no Pods behind it: waiting on the Workflow, or ended before any Pod. */
  function podlessStatus(run: IssueRun, state: RunState): IssueRunStatus {
    return runStatus({
      current: run.status,
      generation: run.metadata.generation,
      attempt: run.spec.attempt ?? 1,
      slots: [],
      state,
      now: deps.now(),
    });
  }

  async function startRun(key: string, run: IssueRun, pods: readonly PodObject[]): Promise<Result> {
    const workflow = deps.workflows.get(run.metadata.namespace, run.spec.workflowRef.name);
    const stalled = (reason: string, message: string) =>
      patchStatus(key, run, podlessStatus(run, { kind: 'stalled', reason, message }), true);
    if (!workflow)
      return stalled(Reasons.WorkflowNotFound, `Workflow ${run.spec.workflowRef.name} not found`);
    if (workflow.spec.suspend && pods.length === 0) {
      return patchStatus(
        key,
        run,
        podlessStatus(
          run,
          runState('Pending', Reasons.WorkflowSuspended, 'the Workflow is suspended'),
        ),
        true,
      );
    }
    const snapshot = workflow.status?.lastGoodConfigMap;
    if (!snapshot) {
      const why = workflow.status?.message ?? 'not reconciled yet';
      return stalled(
        Reasons.WorkflowInvalid,
        `Workflow ${workflow.metadata.name} has no valid configuration: ${why}`,
      );
    }
    const runnable = await deps.loadWorkflowConfig(run.metadata.namespace ?? '', snapshot);
    const existing = new Set(pods.map((pod) => pod.metadata?.name ?? ''));
    const expected = expectedPods.get(key);
    if (
      expected &&
      expected.until > deps.now().getTime() &&
      expected.names.some((name) => !existing.has(name))
    ) {
      // Created a moment ago; the Pod informer has not caught up yet. Never create twice.
      return { requeueAfter: 1000 };
    }
    const ensured = await ensureRunObjects({
      client: deps.client,
      run,
      workflow,
      runnable,
      operatorImage: deps.operatorImage,
      existingPods: existing,
    });
    if (ensured.ok) {
      expectedPods.set(key, {
        names: ensured.slots.map((entry) => entry.podName),
        until: deps.now().getTime() + 30_000,
      });
    }
    if (!ensured.ok) {
      const state: RunState = {
        kind: 'finished',
        succeeded: false,
        reason: ensured.reason,
        message: ensured.message,
      };
      return patchStatus(key, run, podlessStatus(run, state), true);
    }
    const views: SlotView[] = ensured.slots.map((entry) => {
      const pod = pods.find((candidate) => candidate.metadata?.name === entry.podName);
      return {
        ...entry,
        outcome: pod ? mapPodStatus(pod, { ...podStatusOptions, now: deps.now() }) : null,
      };
    });
    const next = runStatus({
      current: run.status,
      generation: run.metadata.generation,
      attempt: run.spec.attempt ?? 1,
      slots: views,
      state: runStateFromSlots(views),
      configDigest: ensured.configDigest,
      inputsConfigMap: ensured.inputsConfigMap,
      now: deps.now(),
    });
    return patchStatus(key, run, next, true);
  }

  /** Keeps the downward-API annotation in step with spec.issue.state (ends the turn loop). */
  async function syncIssueState(run: IssueRun, pods: readonly PodObject[]): Promise<void> {
    const state = run.spec.issue.state ?? '';
    for (const pod of pods) {
      if (
        pod.metadata?.deletionTimestamp ||
        pod.metadata?.annotations?.[ANNOTATION_ISSUE_STATE] === state
      )
        continue;
      try {
        await deps.client.request({
          method: 'PATCH',
          path: resourcePath(PODS, pod.metadata?.namespace, pod.metadata?.name),
          patchType: 'merge',
          body: { metadata: { annotations: { [ANNOTATION_ISSUE_STATE]: state } } },
        });
      } catch (error) {
        deps.logger?.warn(
          { err: errorMessage(error), pod: pod.metadata?.name },
          'cannot update the issue state',
        );
      }
    }
  }

  async function cancel(key: string, run: IssueRun, pods: readonly PodObject[]): Promise<Result> {
    for (const pod of pods) {
      if (
        pod.metadata?.deletionTimestamp ||
        (pod.status?.phase !== 'Running' && pod.status?.phase !== 'Pending')
      )
        continue;
      try {
        await deps.client.request({
          method: 'DELETE',
          path: resourcePath(PODS, pod.metadata?.namespace, pod.metadata?.name),
        });
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
    }
    const live = pods.filter(
      (pod) => pod.status?.phase === 'Running' || pod.status?.phase === 'Pending',
    );
    const views = slotViews(pods);
    // Deleted Pods are gone from the cache, but what their logs said (after_run) is not.
    for (const log of deps.followers.ofRun(key)) {
      if (views.some((view) => view.podName === log.podName)) continue;
      const outcome: PodOutcome = {
        phase: 'Failed',
        reason: 'Cancelled',
        message: 'the Pod was deleted',
        finished: true,
        summary: null,
      };
      views.push({ slot: log.slot, podName: log.podName, outcome, log });
    }
    views.sort((a, b) => a.slot - b.slot);
    if (live.length > 0 || views.some((view) => view.log?.streaming)) return { requeueAfter: 1000 };
    await Promise.all(views.map((view) => view.log?.flushed));
    const next = runStatus({
      current: run.status,
      generation: run.metadata.generation,
      attempt: run.spec.attempt ?? 1,
      slots: views,
      state: {
        kind: 'finished',
        succeeded: false,
        reason: Reasons.Cancelled,
        message: 'cancelled: spec.cancelRequested is true',
      },
      now: deps.now(),
    });
    const result = await patchStatus(key, run, next, true);
    forgetRun(key, pods);
    for (const view of views) deps.followers.forget(run.metadata.namespace ?? '', view.podName);
    return result;
  }

  function slotViews(pods: readonly PodObject[]): SlotView[] {
    const now = deps.now();
    return pods
      .map((pod) => {
        const name = pod.metadata?.name ?? '';
        const namespace = pod.metadata?.namespace ?? '';
        const slot = Number(pod.metadata?.labels?.[LABEL_SLOT] ?? 0);
        const outcome = mapPodStatus(pod, { ...podStatusOptions, now });
        let log = deps.followers.get(namespace, name);
        if (agentStarted(pod) || log) {
          const owner = pod.metadata?.ownerReferences?.find((reference) => reference.controller);
          const attempt = Number(pod.metadata?.labels?.['lorenz.dev/attempt'] ?? 1);
          log = deps.followers.ensure(
            {
              namespace,
              podName: name,
              runKey: `${namespace}/${owner?.name ?? ''}`,
              slot,
              attempt,
            },
            !outcome.finished && !pod.metadata?.deletionTimestamp,
          );
        }
        return { slot, podName: name, outcome, log };
      })
      .sort((a, b) => a.slot - b.slot);
  }

  return async function reconcileIssueRun(key: string): Promise<Result> {
    const { namespace = '', name } = splitKey(key);
    const cachedRun = deps.issueRuns.get(namespace, name);
    if (!cachedRun || cachedRun.metadata.deletionTimestamp) {
      statuses.forget(key);
      return;
    }
    // The cache may not have our last status write yet: reason from the freshest status.
    const cached = {
      resourceVersion: cachedRun.metadata.resourceVersion,
      status: cachedRun.status,
    };
    const run: IssueRun = { ...cachedRun, status: statuses.freshest(key, cached) };
    const pods = runPods(deps.pods.list(namespace), run);
    if (findCondition(run.status?.conditions, FINISHED)?.status === 'True')
      return finishedRun(key, run, pods);
    if (run.spec.cancelRequested) return cancel(key, run, pods);
    const expected = run.status?.slots?.length ?? 0;
    if (pods.length === 0 || pods.length < expected || !run.status?.inputsConfigMap) {
      return startRun(key, run, pods);
    }
    await syncIssueState(run, pods);
    const views = slotViews(pods);
    const state = runStateFromSlots(views);
    if (state.kind === 'finished') {
      // Every record of every Pod must be in before the verdict: wait for the log reads.
      if (
        views.some(
          (view) => view.log?.streaming || (view.log && !view.log.completed && !view.log.drained),
        )
      ) {
        return { requeueAfter: 500 };
      }
      await Promise.all(views.map((view) => view.log?.flushed));
    }
    const next = runStatus({
      current: run.status,
      generation: run.metadata.generation,
      attempt: run.spec.attempt ?? 1,
      slots: views,
      state,
      now: deps.now(),
    });
    // Only the end is written at once; progress (Pending → Running, hook results, turns)
    // waits out the interval, so that a short run costs few writes.
    const urgent = state.kind === 'finished';
    const result = await patchStatus(key, run, next, urgent);
    if (state.kind === 'finished') {
      forgetRun(key, pods);
      return result;
    }
    const recheck = views
      .map((view) => view.outcome?.recheckAfterMs)
      .filter((ms): ms is number => ms !== undefined);
    const after = Math.min(result?.requeueAfter ?? Infinity, ...recheck);
    return Number.isFinite(after) ? { requeueAfter: after } : result;
  };
}
