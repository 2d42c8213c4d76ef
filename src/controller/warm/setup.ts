import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { IssueRun, Workflow } from '../../api/index.js';
import { WORKFLOW_KIND } from '../../api/index.js';
import { createLifecycleEventWriter, warnRefusedEvent } from '../events/recorder.js';
import type { KubeClient } from '../runtime/client.js';
import { PODS } from '../runtime/client.js';
import { objectKey } from '../runtime/informer.js';
import type { Manager } from '../runtime/manager.js';
import { createWorkflowConfigCache } from '../shared/config-snapshot.js';
import { LABEL_MANAGED_BY, LABEL_WARM_OF, MANAGED_BY } from '../shared/constants.js';
import type { PodTemplatePolicy } from '../shared/pod-template-check.js';
import { ISSUERUNS, WORKFLOWS, type PodObject } from '../shared/resources.js';
import { jsonEqual } from '../shared/status-writer.js';
import { createWarmReconciler } from './reconciler.js';

export interface WarmControllerOptions {
  client: KubeClient;
  logger: Logger;
  operatorImage: string;
  podTemplatePolicy: PodTemplatePolicy;
  /** Names this replica in the Events it writes. */
  identity?: string;
  now?: (() => Date) | undefined;
  /** How long a superseded warm snapshot is kept past its successor's readiness (tests: short). */
  gcGraceMs?: number | undefined;
}

/** Few at once: a warm-up is rare, and each reconcile makes at most a handful of requests. */
const CONCURRENCY = 2;

/** The Workflow a warm-up Pod is for: its controller owner, a Workflow. */
function warmUpWorkflowKey(pod: PodObject): string | undefined {
  if (pod.metadata?.labels?.[LABEL_WARM_OF] === undefined) return undefined;
  const owner = pod.metadata.ownerReferences?.find(
    (reference) => reference.controller && reference.kind === WORKFLOW_KIND,
  );
  return owner ? `${pod.metadata.namespace}/${owner.name}` : undefined;
}

/**
 * Whether a Workflow's change is the warm controller's business: its spec (warm, the
 * workspace, the template, WORKFLOW.md), the config the Workflow reconciler recorded, or
 * status.warm written by another replica. Run counts and poll times are not.
 */
export function changesWarm(previous: Workflow, workflow: Workflow): boolean {
  return (
    previous.metadata.generation !== workflow.metadata.generation ||
    previous.status?.lastGoodConfigMap !== workflow.status?.lastGoodConfigMap ||
    !jsonEqual(previous.status?.warm ?? null, workflow.status?.warm ?? null)
  );
}

/**
 * The warm controller (docs/snapshots.md#warm-workspaces), one concern: a Workflow's warm
 * workspace. It watches Workflows, the warm-up Pods they own (Lorenz's Pods, shared with the
 * IssueRun controller, which leaves Pods without an IssueRun owner alone) and IssueRuns, whose
 * ends may free a superseded snapshot. VolumeSnapshots are read and listed, not watched: a
 * cluster without the snapshot CRDs must not hold the controller's informers unsynced.
 */
export function setupWarmController(manager: Manager, options: WarmControllerOptions) {
  const workflows = manager.informer<Workflow>(WORKFLOWS);
  const issueRuns = manager.informer<IssueRun>(ISSUERUNS);
  const pods = manager.informer<PodObject>(PODS, {
    labelSelector: `${LABEL_MANAGED_BY}=${MANAGED_BY}`,
  });
  const reconcile = createWarmReconciler({
    client: options.client,
    workflows,
    issueRuns,
    pods,
    loadWorkflowConfig: createWorkflowConfigCache(options.client),
    operatorImage: options.operatorImage,
    podTemplatePolicy: options.podTemplatePolicy,
    now: options.now ?? (() => new Date()),
    logger: options.logger,
    gcGraceMs: options.gcGraceMs,
    events: createLifecycleEventWriter({
      client: options.client,
      reportingInstance: options.identity ?? hostname(),
      onRefused: warnRefusedEvent(options.logger),
    }),
  });
  const controller = manager.controller({ name: 'warm', concurrency: CONCURRENCY, reconcile });
  const onWorkflow = (workflow: Workflow) => controller.enqueue(objectKey(workflow));
  workflows.onAdd(onWorkflow);
  workflows.onUpdate((previous, workflow) => {
    if (changesWarm(previous, workflow)) onWorkflow(workflow);
  });
  workflows.onDelete(onWorkflow);
  const onPod = (pod: PodObject) => {
    const key = warmUpWorkflowKey(pod);
    if (key) controller.enqueue(key);
  };
  pods.onAdd(onPod);
  pods.onUpdate((_previous, pod) => onPod(pod));
  pods.onDelete(onPod);
  // A run that ends may free a superseded snapshot: its Workflow's warm controller looks.
  const onRun = (run: IssueRun) => {
    const workflow = workflows.get(run.metadata.namespace, run.spec.workflowRef.name);
    if (workflow?.status?.warm !== undefined) onWorkflow(workflow);
  };
  issueRuns.onUpdate((previous, run) => {
    if (previous.status?.phase !== run.status?.phase) onRun(run);
  });
  issueRuns.onDelete(onRun);
  return controller;
}
