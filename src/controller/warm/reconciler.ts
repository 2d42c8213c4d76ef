import type { Logger } from 'pino';
import {
  Reasons,
  rfc3339,
  type IssueRun,
  type WarmStatus,
  type Workflow,
} from '../../api/index.js';
import { errorMessage, isLorenzError } from '../../workflow/errors.js';
import { LifecycleReasons, warmUpEvent } from '../events/lifecycle.js';
import type { LifecycleEventWriter } from '../events/recorder.js';
import type { KubeClient } from '../runtime/client.js';
import type { ReconcileResult } from '../runtime/controller.js';
import type { Informer } from '../runtime/informer.js';
import { liveObject } from '../runtime/informer.js';
import type { RunnableWorkflow } from '../shared/config-snapshot.js';
import { ANNOTATION_WARM_CONFIG_DIGEST } from '../shared/constants.js';
import type { PodTemplatePolicy } from '../shared/pod-template-check.js';
import type { PodObject } from '../shared/resources.js';
import {
  snapshotClassFor,
  snapshotClassProblem,
  snapshotsUnsupportedWhy,
} from '../shared/snapshot-support.js';
import { collectWarmSnapshots } from './collect.js';
import { warmConfigDigest } from './config-digest.js';
import {
  WARM_RETRY,
  decideWarm,
  warmUpResultOf,
  type WarmDecision,
  type WarmFacts,
} from './decide.js';
import { exponentialDelay } from '../runtime/backoff.js';
import { afterCreateDependsOnIssue } from './issue-independence.js';
import {
  createWarmSnapshot,
  createWarmUpObjects,
  deleteWarmUpObjects,
  lookUpWarmSnapshot,
} from './objects.js';
import { createWarmStatusWriter } from './status.js';

/** How often a snapshot being made, or one held by runs, is looked at again. */
export const WARM_POLL_MS = { snapshot: 5_000, collect: 30_000, clusterRefusal: 60_000 } as const;

export interface WarmReconcilerDeps {
  client: KubeClient;
  workflows: Informer<Workflow>;
  issueRuns: Informer<IssueRun>;
  /** Lorenz's Pods (managed-by): the warm-up Pods among them are the Workflow's own. */
  pods: Informer<PodObject>;
  loadWorkflowConfig: (namespace: string, configMap: string) => Promise<RunnableWorkflow>;
  operatorImage: string;
  podTemplatePolicy?: PodTemplatePolicy | undefined;
  now: () => Date;
  events?: LifecycleEventWriter | undefined;
  logger?: Logger | undefined;
  /** How long a superseded snapshot outlives its successor's readiness (gc.ts); tests: short. */
  gcGraceMs?: number | undefined;
}

type WarmUpEventArgs = Parameters<typeof warmUpEvent>;

// What this process keeps of a Workflow between passes; what must outlive a restart (the
// failures its backoff counts, the build) is in status.warm.
interface Memory {
  /** Warm snapshots may be left to collect (true on first sight: a restart forgets). */
  collect: boolean;
  /** A cluster refusal (no snapshot class) is asked again after this. */
  recheckAt: number;
}

type Ctx = {
  key: string;
  workflow: Workflow;
  warm: WarmStatus | undefined;
  runnable: RunnableWorkflow | undefined;
  facts: WarmFacts;
  memory: Memory;
  now: Date;
};

/** A warm-up that succeeded ends the failures in a row, and with them the backoff. */
const NO_FAILURES = { failures: undefined, failedAt: undefined } as const;

const min = (...values: (number | undefined)[]): ReconcileResult => {
  const defined = values.filter((value): value is number => value !== undefined);
  return defined.length === 0 ? undefined : { requeueAfter: Math.min(...defined) };
};

/**
 * The warm controller's reconciler, a ladder: fetch the Workflow → guard (gone, never warm)
 * → gather what is known (config, the warm-up's Pod and snapshot) → decide (decide.ts, pure)
 * → act on the one decision (status first when starting, objects after; events, status, then
 * deletions when recording) → collect superseded snapshots. It writes status.warm only.
 */
// eslint-disable-next-line max-lines-per-function -- a factory: the closures it returns share the state it keeps
export function createWarmReconciler(deps: WarmReconcilerDeps) {
  const statuses = createWarmStatusWriter(deps.client);
  const memories = new Map<string, Memory>();
  /** Warm-up Pods seen in the cache: one seen and gone was deleted. */
  const seen = new Set<string>();

  const memoryOf = (key: string): Memory => {
    let memory = memories.get(key);
    if (!memory) {
      memory = { collect: true, recheckAt: 0 };
      memories.set(key, memory);
    }
    return memory;
  };

  async function loadConfig(workflow: Workflow): Promise<RunnableWorkflow | undefined> {
    const configMap = workflow.status?.lastGoodConfigMap;
    if (!configMap) return undefined;
    try {
      return await deps.loadWorkflowConfig(workflow.metadata.namespace ?? '', configMap);
    } catch (error) {
      deps.logger?.warn({ configMap, err: errorMessage(error) }, 'warm: cannot read the config');
      return undefined;
    }
  }

  async function gather(key: string, workflow: Workflow, now: Date) {
    const warm = statuses.freshest(key, workflow);
    const runnable = await loadConfig(workflow);
    const config = runnable?.loaded.config;
    const namespace = workflow.metadata.namespace ?? '';
    const building = warm?.building;
    const cached = building === undefined ? undefined : deps.pods.get(namespace, building);
    // Only the Workflow's own Pod: one of that name owned by another is not its warm-up.
    const pod = cached?.metadata?.ownerReferences?.some((o) => o.uid === workflow.metadata.uid)
      ? cached
      : undefined;
    if (pod) seen.add(`${namespace}/${building}`);
    const result = pod ? warmUpResultOf(pod) : null;
    const facts: WarmFacts = {
      workflow,
      warm,
      configDigest: config ? warmConfigDigest(workflow, config) : undefined,
      hasGit: config?.workspace.git != null,
      unsupported: unsupportedWhy(workflow, runnable),
      pod,
      podSeen: seen.has(`${namespace}/${building}`),
      snapshot:
        result?.outcome === 'prepared' && building !== undefined
          ? await lookUpWarmSnapshot(deps.client, namespace, building)
          : undefined,
      failures: warm?.failures ?? 0,
      lastFailureAt: Date.parse(warm?.failedAt ?? '') || undefined,
      now: now.getTime(),
    };
    return { warm, runnable, facts };
  }

  async function reconcileWarm(key: string): Promise<ReconcileResult> {
    const workflow = liveObject(deps.workflows, key);
    if (!workflow) {
      // Its warm-up objects and snapshots are its own: the garbage collector takes them.
      statuses.forget(key);
      memories.delete(key);
      return;
    }
    // A Workflow that was never warm costs nothing: no config read, no list.
    if (!workflow.spec.workspace?.warm && statuses.freshest(key, workflow) === undefined) return;
    const memory = memoryOf(key);
    const now = deps.now();
    const { warm, runnable, facts } = await gather(key, workflow, now);
    const ctx: Ctx = { key, workflow, warm, runnable, facts, memory, now };
    const decision = decideWarm(facts);
    const acted = await act(ctx, decision);
    const collected = await collect(ctx, decision, acted.warm);
    return min(acted.requeueAfterMs, collected);
  }

  /** Writes status.warm; `events` go first (they record the change the status makes). */
  async function write(ctx: Ctx, next: WarmStatus | undefined, events: WarmUpEventArgs[] = []) {
    await deps.events?.(events.map((args) => warmUpEvent(...args)));
    await statuses.write(ctx.key, ctx.workflow, ctx.warm, next);
  }

  async function act(
    ctx: Ctx,
    decision: WarmDecision,
  ): Promise<{ warm: WarmStatus | undefined; requeueAfterMs?: number }> {
    const { workflow, warm } = ctx;
    const namespace = workflow.metadata.namespace ?? '';
    const keep = { warm };
    switch (decision.action) {
      case 'off':
        if (warm?.building !== undefined) {
          await deleteWarmUpObjects(deps.client, namespace, warm.building);
          const next = { ...warm, building: undefined };
          await write(ctx, next);
          return { warm: next };
        }
        return keep;
      case 'waitConfig':
        return keep;
      case 'waitPod':
        return decision.recheckAfterMs === undefined
          ? keep
          : { warm, requeueAfterMs: decision.recheckAfterMs };
      case 'idle':
        return {
          warm,
          ...(decision.requeueAfterMs === undefined
            ? {}
            : { requeueAfterMs: decision.requeueAfterMs }),
        };
      case 'refuse': {
        const next = {
          ...warm,
          reason: Reasons.WarmWorkspaceUnsupported,
          message: decision.message,
        };
        await write(ctx, next);
        return { warm: next };
      }
      case 'start':
        return start(ctx, decision);
      case 'create':
        await createObjects(ctx, decision.name, decision.unlessCommit);
        return keep;
      case 'snapshot': {
        await createWarmSnapshot(deps.client, workflow, decision.name);
        const next = {
          ...warm,
          message: `warm-up ${decision.name} prepared the tree (${decision.result.digest}): waiting for VolumeSnapshot ${decision.name} to be readyToUse`,
        };
        await write(ctx, next);
        return { warm: next, requeueAfterMs: WARM_POLL_MS.snapshot };
      }
      case 'waitSnapshot': {
        const next = {
          ...warm,
          message: `waiting for VolumeSnapshot ${decision.name} to be readyToUse${decision.error ? `: ${decision.error}` : ''}`,
        };
        await write(ctx, next);
        return { warm: next, requeueAfterMs: WARM_POLL_MS.snapshot };
      }
      case 'record':
        return record(ctx, decision);
    }
  }

  async function start(ctx: Ctx, decision: Extract<WarmDecision, { action: 'start' }>) {
    const { workflow, warm, memory, now } = ctx;
    // What the cluster must have for a snapshot, asked only when one is to be made.
    if (now.getTime() < memory.recheckAt) {
      return { warm, requeueAfterMs: memory.recheckAt - now.getTime() };
    }
    const problem = snapshotClassProblem(await snapshotClassFor(deps.client, workflow));
    if (problem !== null) {
      memory.recheckAt = now.getTime() + WARM_POLL_MS.clusterRefusal;
      const next = {
        ...warm,
        reason: Reasons.WarmWorkspaceUnsupported,
        message: `the workspace cannot be warmed: ${problem}`,
      };
      await write(ctx, next);
      return { warm: next, requeueAfterMs: WARM_POLL_MS.clusterRefusal };
    }
    const full = decision.unlessCommit === undefined;
    const next: WarmStatus = {
      ...warm,
      build: decision.build,
      building: decision.name,
      reason: Reasons.WarmUpRunning,
      message: `warm-up ${decision.name} started: ${decision.why}`,
    };
    // The build is recorded before its objects are made: they are named by it.
    // A refresh that finds the head where it was is routine: only a full warm-up is news.
    const events: WarmUpEventArgs[] = full
      ? [[workflow, LifecycleReasons.WarmUpStarted, decision, next.message ?? '']]
      : [];
    await write(ctx, next, events);
    await createObjects({ ...ctx, warm: next }, decision.name, decision.unlessCommit);
    return { warm: next };
  }

  async function createObjects(ctx: Ctx, name: string, unlessCommit: string | undefined) {
    if (!ctx.runnable || ctx.facts.configDigest === undefined) return;
    try {
      await createWarmUpObjects({
        client: deps.client,
        workflow: ctx.workflow,
        runnable: ctx.runnable,
        name,
        configDigest: ctx.facts.configDigest,
        unlessCommit,
        operatorImage: deps.operatorImage,
        policy: deps.podTemplatePolicy,
      });
    } catch (error) {
      // A template the pod builder refuses would be refused again: the warm-up fails.
      if (!isLorenzError(error) || error.code !== 'invalid_pod_template') throw error;
      await record(ctx, { action: 'record', name, outcome: 'failed', message: error.message });
    }
  }

  async function record(ctx: Ctx, decision: Extract<WarmDecision, { action: 'record' }>) {
    if (decision.outcome === 'moved') return moved(ctx, decision);
    const { workflow, warm, memory, now, facts } = ctx;
    const at = rfc3339(now);
    const namespace = workflow.metadata.namespace ?? '';
    const warmUp = { name: decision.name, build: warm?.build ?? 0 };
    let next: WarmStatus;
    let requeueAfterMs: number | undefined;
    const events: WarmUpEventArgs[] = [];
    switch (decision.outcome) {
      case 'prepared': {
        const { result } = decision;
        next = {
          ...warm,
          snapshot: decision.name,
          digest: result.digest,
          commit: result.commit ?? undefined,
          readyAt: at,
          checkedAt: at,
          configDigest:
            facts.pod?.metadata?.annotations?.[ANNOTATION_WARM_CONFIG_DIGEST] ?? facts.configDigest,
          building: undefined,
          ...NO_FAILURES,
          reason: Reasons.WarmUpSucceeded,
          message: `VolumeSnapshot ${decision.name} holds the prepared workspace${result.commit === null ? '' : ` at ${result.commit}`} (${result.files} files, ${result.bytes} bytes, prepared in ${Math.round(result.prepareMs / 1000)} s)`,
        };
        events.push([workflow, LifecycleReasons.WarmUpSucceeded, warmUp, next.message ?? '']);
        memory.collect = true;
        break;
      }
      case 'unchanged':
        next = {
          ...warm,
          checkedAt: at,
          building: undefined,
          ...NO_FAILURES,
          reason: Reasons.WarmUpSucceeded,
          message: `the default branch is still at ${decision.commit}: VolumeSnapshot ${warm?.snapshot ?? ''} stays in force`,
        };
        break;
      case 'failed': {
        const failures = (warm?.failures ?? 0) + 1;
        next = {
          ...warm,
          building: undefined,
          failures,
          failedAt: at,
          reason: Reasons.WarmUpFailed,
          message: `warm-up ${decision.name} failed: ${decision.message}${warm?.snapshot ? `; VolumeSnapshot ${warm.snapshot} stays in force` : ''}`,
        };
        events.push([workflow, LifecycleReasons.WarmUpFailed, warmUp, next.message ?? '']);
        requeueAfterMs = exponentialDelay(failures - 1, WARM_RETRY.baseMs, WARM_RETRY.maxMs);
        break;
      }
    }
    await write(ctx, next, events);
    await deleteWarmUpObjects(deps.client, namespace, decision.name);
    seen.delete(`${namespace}/${decision.name}`);
    return { warm: next, ...(requeueAfterMs === undefined ? {} : { requeueAfterMs }) };
  }

  /**
   * A head check found the default branch moved on: its objects go, then the full warm-up
   * starts at once (its start records the new build over the check's). A restart in between
   * finds the check's Pod gone and checks again: it moves on the same way.
   */
  async function moved(
    ctx: Ctx,
    decision: Extract<WarmDecision, { action: 'record'; outcome: 'moved' }>,
  ) {
    const namespace = ctx.workflow.metadata.namespace ?? '';
    await deleteWarmUpObjects(deps.client, namespace, decision.name);
    seen.delete(`${namespace}/${decision.name}`);
    // The check is over, and it succeeded: the failures before it are over too.
    const warm = ctx.warm && { ...ctx.warm, building: undefined, ...NO_FAILURES };
    return start({ ...ctx, warm }, decision.then);
  }

  async function collect(
    ctx: Ctx,
    decision: WarmDecision,
    warm: WarmStatus | undefined,
  ): Promise<number | undefined> {
    const { workflow, memory, key } = ctx;
    const off = decision.action === 'off';
    // Off: every warm snapshot is to go, whatever an earlier pass found.
    if (!memory.collect && !off) return undefined;
    const result = await collectWarmSnapshots({
      client: deps.client,
      workflow,
      current: off ? undefined : warm?.snapshot,
      currentReadyAt: off ? undefined : Date.parse(warm?.readyAt ?? '') || undefined,
      building: off ? undefined : warm?.building,
      runs: deps.issueRuns.list(workflow.metadata.namespace),
      now: ctx.now.getTime(),
      graceMs: deps.gcGraceMs,
    });
    if (result.held) return WARM_POLL_MS.collect;
    memory.collect = false;
    // Off, and every warm snapshot gone: status.warm goes too, and the Workflow is cold again.
    if (off && result.remaining === 0 && warm !== undefined) {
      await statuses.write(key, workflow, warm, undefined);
    }
    return undefined;
  }

  return reconcileWarm;
}

/** Why the Workflow cannot be warmed, known from its spec and config alone; null: it can. */
function unsupportedWhy(workflow: Workflow, runnable: RunnableWorkflow | undefined): string | null {
  const config = runnable?.loaded.config;
  if (!workflow.spec.workspace?.volumeClaimTemplate || config === undefined) {
    return workflow.spec.workspace?.volumeClaimTemplate
      ? null
      : `the workspace cannot be warmed: Workflow ${workflow.metadata.name ?? ''} has no spec.workspace.volumeClaimTemplate: only a claim can be snapshotted and restored`;
  }
  const why = snapshotsUnsupportedWhy(workflow, config) ?? afterCreateDependsOnIssue(config);
  return why === null ? null : `the workspace cannot be warmed: ${why}`;
}
