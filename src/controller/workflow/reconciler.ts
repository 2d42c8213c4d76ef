import type { Logger } from 'pino';
import type { IssueRun, Workflow, WorkflowDispatch, WorkflowStatus } from '../../api/index.js';
import type { LoadedWorkflow } from '../../template/load-workflow.js';
import type { KubeClient } from '../runtime/client.js';
import { CONFIGMAPS, isConflict, resourcePath } from '../runtime/client.js';
import type { ReconcileResult } from '../runtime/controller.js';
import type { Informer } from '../runtime/informer.js';
import { liveObject, splitKey } from '../runtime/informer.js';
import { createWorkflowConfigCache, snapshotConfigMap } from '../shared/config-snapshot.js';
import type { PodTemplatePolicy } from '../shared/pod-template-check.js';
import { WORKFLOWS, type ConfigMapObject } from '../shared/resources.js';
import { createStatusWriter, type Cached } from '../shared/status-writer.js';
import { workflowConditions } from './workflow-conditions.js';
import { evaluateWorkflow, type LoadedSpec } from './evaluate.js';
import { runCounts } from './run-counts.js';
import { pollWorkflow, type PollResult } from './poll.js';
import { createTrackerCache, type TrackerCache, type TrackerFactory } from '../shared/trackers.js';
import { errorMessage } from '../../workflow/errors.js';
import { workflowLifecycleEvents } from '../events/lifecycle.js';
import type { LifecycleEventWriter } from '../events/recorder.js';
import type { PollOutcome } from '../shared/run-metrics.js';
import type { PriceTableSource } from '../shared/price-table-source.js';
import { dayBudget } from './daily-spend.js';

/** The Workflow status field the warm controller writes (a merge patch of it alone). */
export const WARM_STATUS_FIELD = 'warm';

/** How long a change of run counts alone may wait before it is written. */
export const DEFAULT_COUNTS_INTERVAL_MS = 10_000;

export interface WorkflowReconcilerDeps {
  client: KubeClient;
  workflows: Informer<Workflow>;
  issueRuns: Informer<IssueRun>;
  /** ConfigMaps that Workflows may read WORKFLOW.md from. */
  configMaps: Informer<ConfigMapObject>;
  now: () => Date;
  logger?: Logger;
  /** How often run counts alone may rewrite the status (they change with every run). */
  countsIntervalMs?: number;
  /** What run Pods may have beyond the restricted profile; the built-in policy otherwise. */
  podTemplatePolicy?: PodTemplatePolicy;
  /** Called with each good config (tests watch what the reconciler loaded). */
  onConfig?: (workflow: Workflow, loaded: LoadedWorkflow) => void;
  /** The controller's adapters, shared with the tools gateway; one of its own otherwise. */
  trackers?: TrackerCache;
  /** How adapters are built when the reconciler makes its own cache (tests: stand-ins). */
  trackerFor?: TrackerFactory;
  /** Writes the Workflow's Events (config rejected, tracker lost and back); none when absent. */
  lifecycleEvents?: LifecycleEventWriter;
  /** Told of each due poll's outcome (the metrics count them: shared/run-metrics.ts). */
  onPolled?: (workflow: Workflow, result: PollOutcome) => void;
  /** Finalizers the dispatched runs are created with (the archive's, while it is on). */
  runFinalizers?: readonly string[];
  /** The price table (`--price-table`): the day's cost; absent: tokens only. */
  prices?: PriceTableSource | undefined;
}

/**
 * Workflow reconciler, a ladder: fetch → guard (gone, being deleted) → evaluate the spec
 * (pure) → ensure the snapshot of a good spec → compute conditions (pure) → one status
 * write. A bad reload leaves the last good snapshot in force and says why.
 */
// eslint-disable-next-line max-lines-per-function -- a factory: the closures it returns share the state it keeps
export function createWorkflowReconciler(deps: WorkflowReconcilerDeps) {
  // status.warm is the warm controller's (src/controller/warm/): never written from here.
  const statuses = createStatusWriter<WorkflowStatus>(deps.client, WORKFLOWS, {
    leave: [WARM_STATUS_FIELD],
  });
  const countsInterval = deps.countsIntervalMs ?? DEFAULT_COUNTS_INTERVAL_MS;
  /** When a pending counts-only change becomes due, per Workflow. */
  const countsDue = new Map<string, number>();
  /** When each Workflow's tracker is polled next (ms since epoch); at once after a restart. */
  const pollDue = new Map<string, number>();
  /** Wakes per Workflow (pollNow): one during a poll makes the next poll due at once too. */
  const wakes = new Map<string, number>();
  const trackers = deps.trackers ?? createTrackerCache(deps.client, deps.trackerFor);
  const snapshots = createWorkflowConfigCache(deps.client);

  /** The configuration of the last good snapshot; undefined when there is none to read. */
  async function lastGoodConfig(namespace: string, configMap: string | undefined) {
    if (!configMap) return undefined;
    try {
      return (await snapshots(namespace, configMap)).loaded.config;
    } catch (error) {
      deps.logger?.warn(
        { configMap, err: errorMessage(error) },
        'cannot read the last good configuration',
      );
      return undefined;
    }
  }

  /** The immutable ConfigMap `<wf>-config-<digest>` of a good spec (create → 409: it exists). */
  async function ensureSnapshot(workflow: Workflow, spec: LoadedSpec): Promise<string> {
    const { name = '', namespace = '', uid = '' } = workflow.metadata;
    const snapshot = snapshotConfigMap({ name, namespace, uid }, spec.text);
    try {
      await deps.client.request({
        method: 'POST',
        path: resourcePath(CONFIGMAPS, namespace),
        body: snapshot,
      });
    } catch (error) {
      if (!isConflict(error)) throw error;
    }
    return snapshot.metadata?.name ?? '';
  }

  /**
   * Writes when the status changed. Counts follow every run, so a change of counts alone
   * waits out the interval: a burst of runs (or one short run, start to end) costs one write.
   */
  async function writeStatus(
    key: string,
    cached: Cached<WorkflowStatus>,
    next: WorkflowStatus,
    now: number,
  ): Promise<ReconcileResult> {
    if (!statuses.changed(key, cached, next)) {
      // Nothing to write (the counts went back, say): a later change starts a new wait.
      countsDue.delete(key);
      return;
    }
    const runsBefore = statuses.freshest(key, cached)?.runs;
    // Poll times alone do not make a write: a quiet tracker costs no API writes.
    const before = statuses.freshest(key, cached);
    const sameDispatch = next.dispatch &&
      before?.dispatch && {
        ...next.dispatch,
        lastPollTime: before.dispatch.lastPollTime,
        nextPollTime: before.dispatch.nextPollTime,
      };
    if (sameDispatch && !statuses.changed(key, cached, { ...next, dispatch: sameDispatch })) {
      countsDue.delete(key);
      return;
    }
    // The day's spend follows every run's usage too: it waits as counts do, unless the
    // day became spent (or a new day began), which dispatch must see at once.
    const sameDay =
      before?.budget?.day === next.budget?.day &&
      (before?.budget?.exhausted ?? false) === (next.budget?.exhausted ?? false);
    const countsOnly = !statuses.changed(key, cached, {
      ...next,
      runs: runsBefore,
      ...(sameDay ? { budget: before?.budget } : {}),
      ...(sameDispatch ? { dispatch: sameDispatch } : {}),
    });
    if (countsOnly) {
      const due = countsDue.get(key) ?? now + countsInterval;
      countsDue.set(key, due);
      if (now < due) return { requeueAfter: due - now };
    }
    countsDue.delete(key);
    const { namespace = '', name } = splitKey(key);
    await statuses.write(key, namespace, name, next, now, { before });
  }

  /**
   * A webhook said the tracker changed: the next reconcile of the key polls, whatever the
   * interval says (a Workflow never polled yet polls at once anyway).
   */
  function pollNow(key: string): void {
    wakes.set(key, (wakes.get(key) ?? 0) + 1);
    if (pollDue.has(key)) pollDue.set(key, 0);
  }

  async function reconcileWorkflow(key: string): Promise<ReconcileResult> {
    const { namespace = '', name } = splitKey(key);
    const workflow = liveObject(deps.workflows, key);
    if (!workflow) {
      statuses.forget(key);
      countsDue.delete(key);
      pollDue.delete(key);
      wakes.delete(key);
      trackers.forget(namespace, name);
      return;
    }
    const now = deps.now();
    const cached = { resourceVersion: workflow.metadata.resourceVersion, status: workflow.status };
    const current = statuses.freshest(key, cached);
    const generation = workflow.metadata.generation ?? 0;

    const evaluation = evaluateWorkflow(
      workflow,
      (ns, cm) => deps.configMaps.get(ns, cm),
      deps.podTemplatePolicy,
    );
    let snapshot = { configDigest: current?.configDigest, name: current?.lastGoodConfigMap };
    if (evaluation.ok) {
      const { spec } = evaluation;
      if (snapshot.configDigest !== spec.digest || !snapshot.name) {
        snapshot = { configDigest: spec.digest, name: await ensureSnapshot(workflow, spec) };
      }
      deps.onConfig?.(workflow, spec.loaded);
    }
    // A bad reload keeps the last good settings in force, for the polls too (read only
    // when a poll is due).
    const pollConfig = async () =>
      evaluation.ok
        ? evaluation.spec.loaded.config
        : await lastGoodConfig(namespace, snapshot.name);
    // A Workflow that never had a budget needs no last good config read to say so.
    const hadBudget = current?.budget !== undefined || workflow.spec.budget !== undefined;
    // One copy of the namespace's runs for the day and the counts (a list copies the cache).
    const namespaceRuns = deps.issueRuns.list(namespace);
    const day = dayBudget({
      workflow: { ...workflow, status: current },
      config: evaluation.ok || hadBudget ? await pollConfig() : undefined,
      runs: namespaceRuns,
      prices: await deps.prices?.current(),
      pricesProblem: deps.prices?.problem(),
      now,
    });
    const polled = await poll(key, workflow, pollConfig, current?.dispatch, now, day.spent);
    // A new day: the dispatch status says so before the next poll does.
    if (!day.spent && polled?.dispatch.budgetSpent) delete polled.dispatch.budgetSpent;

    const next: WorkflowStatus = {
      ...current,
      observedGeneration: generation,
      ...(snapshot.configDigest ? { configDigest: snapshot.configDigest } : {}),
      // Which generation's config runs: this one when it loads, else the one recorded before.
      ...(evaluation.ok ? { configGeneration: generation } : {}),
      ...(snapshot.name ? { lastGoodConfigMap: snapshot.name } : {}),
      conditions: workflowConditions({
        current: current?.conditions,
        generation,
        evaluation,
        lastGoodConfigMap: snapshot.name,
        suspended: workflow.spec.suspend === true,
        tracker: polled?.reachable,
        now,
      }),
      message: evaluation.ok ? 'ready' : evaluation.problem.message,
      runs: runCounts(namespaceRuns, name),
      ...(polled ? { dispatch: polled.dispatch } : {}),
    };
    if (day.status) next.budget = day.status;
    else delete next.budget;
    // Before the status, which records the change: see events/lifecycle.ts.
    await deps.lifecycleEvents?.(
      workflowLifecycleEvents(workflow, current?.conditions, next.conditions ?? []),
    );
    const written = await writeStatus(key, cached, next, now.getTime());
    const resume = day.resumeAt ? Math.max(0, day.resumeAt.getTime() - now.getTime()) : Infinity;
    const after = Math.min(
      written?.requeueAfter ?? Infinity,
      polled?.requeueAfterMs ?? Infinity,
      resume,
    );
    return Number.isFinite(after) ? { requeueAfter: after } : written;
  }

  return Object.assign(reconcileWorkflow, { pollNow });

  /** Polls the tracker when its time has come (the schedule is kept here, per Workflow). */
  async function poll(
    key: string,
    workflow: Workflow,
    configOf: () => Promise<LoadedWorkflow['config'] | undefined>,
    dispatch: WorkflowDispatch | undefined,
    now: Date,
    budgetSpent: boolean,
  ): Promise<PollResult | undefined> {
    const due = pollDue.get(key) ?? 0;
    if (now.getTime() < due) {
      return { dispatch: dispatch ?? {}, requeueAfterMs: due - now.getTime() };
    }
    const config = await configOf();
    if (!config) {
      deps.onPolled?.(workflow, 'skipped');
      return undefined;
    }
    const startup = !pollDue.has(key);
    const wokenBefore = wakes.get(key);
    const result = await pollWorkflow(
      workflow,
      config,
      undefined,
      {
        client: deps.client,
        issueRuns: deps.issueRuns,
        now: deps.now,
        trackerFor: (wf, settings) => trackers.get(wf, settings),
        ...(deps.logger ? { logger: deps.logger } : {}),
        ...(deps.runFinalizers ? { runFinalizers: deps.runFinalizers } : {}),
      },
      startup,
      budgetSpent,
    );
    // A wake while the tracker was read may be about a change the read came too early for.
    const wokenDuring = wakes.get(key) !== wokenBefore;
    pollDue.set(key, wokenDuring ? 0 : now.getTime() + result.requeueAfterMs);
    deps.onPolled?.(workflow, result.reachable?.ok === false ? 'error' : 'ok');
    return result;
  }
}
