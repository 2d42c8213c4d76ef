import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { createLifecycleEventWriter, warnRefusedEvent } from '../events/recorder.js';
import type { IssueRun, Workflow } from '../../api/index.js';
import type { KubeClient } from '../runtime/client.js';
import { CONFIGMAPS } from '../runtime/client.js';
import { objectKey } from '../runtime/informer.js';
import type { Manager } from '../runtime/manager.js';
import { LABEL_MANAGED_BY, MANAGED_BY } from '../shared/constants.js';
import type { PodTemplatePolicy } from '../shared/pod-template-check.js';
import { ISSUERUNS, WORKFLOWS, type ConfigMapObject } from '../shared/resources.js';
import type { TrackerCache } from '../shared/trackers.js';
import { runMetrics } from '../shared/run-metrics.js';
import type { WakeBoard } from '../shared/wake.js';
import { createWorkflowReconciler } from './reconciler.js';
import { changesWorkflowStatus } from './run-changes.js';
import type { PriceTableSource } from '../shared/price-table-source.js';

export interface WorkflowControllerOptions {
  client: KubeClient;
  logger: Logger;
  podTemplatePolicy: PodTemplatePolicy;
  /** The controller's tracker adapters, shared with the tools gateway. */
  trackers?: TrackerCache;
  /** Names this replica in the Events it writes (dispatch, config, tracker). */
  identity?: string;
  /** Finalizers the dispatched runs are created with (the archive's, while it is on). */
  runFinalizers?: readonly string[];
  /** Webhook wakes: a `poll` wake makes the Workflow's next poll due now. */
  wakes?: WakeBoard;
  /** The price table (`--price-table`); absent: the day is counted in tokens only. */
  priceTable?: PriceTableSource | undefined;
  /** The clock (tests move it to the next day); the system's otherwise. */
  now?: (() => Date) | undefined;
}

const CONCURRENCY = 2;

/** How long a run's change may wait for others before its Workflow is reconciled. */
export const RUN_CHANGES_BATCH_MS = 500;

/**
 * The Workflow controller with what it watches: its Workflows, the ConfigMaps they read
 * WORKFLOW.md from (users' ConfigMaps only: what Lorenz writes itself is left out by
 * label), and IssueRuns, whose ends change the Workflow's run counts.
 */
export function setupWorkflowController(manager: Manager, options: WorkflowControllerOptions) {
  const workflows = manager.informer<Workflow>(WORKFLOWS);
  const issueRuns = manager.informer<IssueRun>(ISSUERUNS);
  const configMaps = manager.informer<ConfigMapObject>(CONFIGMAPS, {
    labelSelector: `${LABEL_MANAGED_BY}!=${MANAGED_BY}`,
  });
  const reconcile = createWorkflowReconciler({
    client: options.client,
    workflows,
    issueRuns,
    configMaps,
    now: options.now ?? (() => new Date()),
    logger: options.logger,
    prices: options.priceTable,
    podTemplatePolicy: options.podTemplatePolicy,
    ...(options.trackers ? { trackers: options.trackers } : {}),
    onPolled: runMetrics(manager.metrics.registry).polled,
    ...(options.runFinalizers ? { runFinalizers: options.runFinalizers } : {}),
    lifecycleEvents: createLifecycleEventWriter({
      client: options.client,
      reportingInstance: options.identity ?? hostname(),
      onRefused: warnRefusedEvent(options.logger),
    }),
  });
  const controller = manager.controller({ name: 'workflow', concurrency: CONCURRENCY, reconcile });
  options.wakes?.subscribe('poll', (target) => {
    const key = `${target.namespace}/${target.workflow}`;
    reconcile.pollNow(key);
    controller.enqueue(key);
  });

  const onWorkflow = (workflow: Workflow) => controller.enqueue(objectKey(workflow));
  workflows.onAdd(onWorkflow);
  workflows.onUpdate((_old, workflow) => onWorkflow(workflow));
  workflows.onDelete(onWorkflow);
  // A run's change reaches its Workflow's status after RUN_CHANGES_BATCH_MS, with every
  // other change of that while: each reconcile reads all of the namespace's runs, and a
  // burst of a thousand runs made a thousand of those passes.
  const onRun = (run: IssueRun) =>
    controller.queue.addAfter(
      `${run.metadata.namespace}/${run.spec.workflowRef.name}`,
      RUN_CHANGES_BATCH_MS,
    );
  issueRuns.onAdd(onRun);
  issueRuns.onUpdate((old, run) => {
    if (changesWorkflowStatus(old, run)) onRun(run);
  });
  issueRuns.onDelete(onRun);
  const onConfigMap = (configMap: ConfigMapObject) => {
    for (const workflow of workflows.list(configMap.metadata?.namespace)) {
      if (workflow.spec.workflowFrom?.configMapKeyRef.name === configMap.metadata?.name) {
        onWorkflow(workflow);
      }
    }
  };
  configMaps.onAdd(onConfigMap);
  configMaps.onUpdate((_old, configMap) => onConfigMap(configMap));
  configMaps.onDelete(onConfigMap);
  return controller;
}
