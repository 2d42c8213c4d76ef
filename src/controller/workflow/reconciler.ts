import type { Logger } from 'pino';
import {
  CONFIG_VALID,
  FINISHED,
  GROUP,
  READY,
  RECONCILING,
  Reasons,
  STALLED,
  VERSION,
  WORKFLOW_PLURAL,
  findCondition,
  setCondition,
  type Condition,
  type IssueRun,
  type Workflow,
  type WorkflowRunCounts,
  type WorkflowStatus,
} from '../../api/index.js';
import { errorMessage } from '../../workflow/errors.js';
import { loadWorkflowText, type LoadedWorkflow } from '../../workflow/load.js';
import type { KubeClient } from '../runtime/client.js';
import { CONFIGMAPS, isConflict, resourcePath } from '../runtime/client.js';
import type { Informer, KubeObject } from '../runtime/informer.js';
import { splitKey } from '../runtime/informer.js';
import { podTemplateProblems } from '../issuerun/pod-template-check.js';
import type { V1PodTemplateSpec } from '@kubernetes/client-node';
import { snapshotConfigMap, workflowDigest } from './snapshot.js';
import { createStatusWriter } from '../issuerun/status-writer.js';

/** A ConfigMap as the JSON client reads it. */
export type ConfigMapObject = KubeObject & { data?: Record<string, string> };

export const WORKFLOWS = { group: GROUP, version: VERSION, plural: WORKFLOW_PLURAL };

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
  /** Seam for tracker polling (a later issue): called with each good config. */
  onConfig?: (workflow: Workflow, loaded: LoadedWorkflow) => void;
}

type Source =
  { ok: true; text: string; source: string } | { ok: false; reason: string; message: string };

function readSource(deps: WorkflowReconcilerDeps, workflow: Workflow): Source {
  const namespace = workflow.metadata.namespace ?? '';
  if (workflow.spec.workflow !== undefined) {
    return {
      ok: true,
      text: workflow.spec.workflow,
      source: `Workflow ${workflow.metadata.name} spec.workflow`,
    };
  }
  const ref = workflow.spec.workflowFrom?.configMapKeyRef;
  if (!ref)
    return {
      ok: false,
      reason: Reasons.ConfigInvalid,
      message: 'neither spec.workflow nor spec.workflowFrom is set',
    };
  const configMap = deps.configMaps.get(namespace, ref.name);
  if (!configMap) {
    return {
      ok: false,
      reason: Reasons.ConfigMapNotFound,
      message: `ConfigMap ${ref.name} not found`,
    };
  }
  const text = configMap.data?.[ref.key];
  if (text === undefined) {
    return {
      ok: false,
      reason: Reasons.ConfigMapNotFound,
      message: `ConfigMap ${ref.name} has no key ${ref.key}`,
    };
  }
  return { ok: true, text, source: `ConfigMap ${ref.name} key ${ref.key}` };
}

export function runCounts(runs: readonly IssueRun[], workflow: string): WorkflowRunCounts {
  const counts = { active: 0, succeeded: 0, failed: 0 };
  for (const run of runs) {
    if (run.spec.workflowRef.name !== workflow) continue;
    if (findCondition(run.status?.conditions, FINISHED)?.status !== 'True') counts.active += 1;
    else if (run.status?.phase === 'Succeeded') counts.succeeded += 1;
    else counts.failed += 1;
  }
  return counts;
}

/**
 * Workflow reconciler: read WORKFLOW.md (inline or from a ConfigMap), validate it, keep the
 * last good text as an immutable snapshot ConfigMap, and report Ready / ConfigValid and the
 * counts of its runs. A bad reload leaves the last good snapshot in place and says why.
 */
export function createWorkflowReconciler(deps: WorkflowReconcilerDeps) {
  const statuses = createStatusWriter<WorkflowStatus>(deps.client, WORKFLOWS);
  const countsInterval = deps.countsIntervalMs ?? 10_000;
  const pendingCounts = new Map<string, number>();

  return async function reconcileWorkflow(key: string): Promise<{ requeueAfter?: number } | void> {
    const { namespace = '', name } = splitKey(key);
    const workflow = deps.workflows.get(namespace, name);
    if (!workflow || workflow.metadata.deletionTimestamp) {
      statuses.forget(key);
      return;
    }
    const now = deps.now();
    const cached = { resourceVersion: workflow.metadata.resourceVersion, status: workflow.status };
    const current = statuses.freshest(key, cached);
    const generation = workflow.metadata.generation ?? 0;
    let conditions: Condition[] = [...(current?.conditions ?? [])];
    const set = (
      type: string,
      status: Condition['status'],
      reason: string,
      message: string,
    ): void => {
      conditions = setCondition(
        conditions,
        { type, status, reason, message, observedGeneration: generation },
        now,
      );
    };
    const next: WorkflowStatus = { ...current, observedGeneration: generation };

    const source = readSource(deps, workflow);
    let problem: { reason: string; message: string } | undefined;
    if (!source.ok) {
      problem = source;
    } else {
      try {
        const loaded = loadWorkflowText(source.text, source.source);
        const templateProblems = podTemplateProblems(
          workflow.spec.podTemplate as V1PodTemplateSpec | undefined,
        );
        if (templateProblems.length > 0) {
          problem = { reason: Reasons.WorkflowInvalid, message: templateProblems.join('; ') };
        } else {
          const digest = workflowDigest(source.text);
          if (current?.configDigest !== digest || !current.lastGoodConfigMap) {
            const snapshot = snapshotConfigMap(
              { name, namespace, uid: workflow.metadata.uid ?? '' },
              source.text,
            );
            try {
              await deps.client.request({
                method: 'POST',
                path: resourcePath(CONFIGMAPS, namespace),
                body: snapshot,
              });
            } catch (error) {
              if (!isConflict(error)) throw error;
            }
            next.configDigest = digest;
            next.lastGoodConfigMap = snapshot.metadata?.name;
          }
          deps.onConfig?.(workflow, loaded);
          const warnings =
            loaded.warnings.length > 0 ? ` (warnings: ${loaded.warnings.join('; ')})` : '';
          set(CONFIG_VALID, 'True', Reasons.ConfigValid, `loaded from ${source.source}${warnings}`);
        }
      } catch (error) {
        problem = { reason: Reasons.ConfigInvalid, message: errorMessage(error) };
      }
    }
    if (problem) set(CONFIG_VALID, 'False', problem.reason, problem.message);
    const haveGood = Boolean(next.lastGoodConfigMap);
    const suspended = workflow.spec.suspend === true;
    if (!haveGood) {
      set(
        READY,
        'False',
        problem?.reason ?? Reasons.ConfigInvalid,
        problem?.message ?? 'no valid configuration yet',
      );
    } else if (suspended) {
      set(READY, 'False', Reasons.Suspended, 'spec.suspend is true: no new runs start');
    } else {
      const keeping = problem
        ? `running the last good config ${next.lastGoodConfigMap}: ${problem.message}`
        : 'ready';
      set(READY, 'True', problem ? problem.reason : Reasons.Reconciled, keeping);
    }
    set(RECONCILING, 'False', Reasons.Reconciled, '');
    set(
      STALLED,
      haveGood ? 'False' : 'True',
      haveGood ? Reasons.Reconciled : (problem?.reason ?? Reasons.ConfigInvalid),
      haveGood ? '' : (problem?.message ?? ''),
    );
    next.conditions = conditions;
    next.message = problem ? problem.message : 'ready';
    next.runs = runCounts(deps.issueRuns.list(namespace), name);

    if (!statuses.changed(key, cached, next)) return;
    // Counts follow every run: a change of counts alone waits for the interval, so that a
    // burst of runs (or one short run, start to end) costs one write.
    const countsOnly = !statuses.changed(key, cached, { ...next, runs: current?.runs });
    if (countsOnly) {
      const wait = pendingCounts.get(key) ?? now.getTime() + countsInterval;
      pendingCounts.set(key, wait);
      if (now.getTime() < wait) return { requeueAfter: wait - now.getTime() };
    }
    pendingCounts.delete(key);
    await statuses.write(key, namespace, name, next, now.getTime());
  };
}
