// The inbox and review controllers both act on IssueRuns beside the IssueRun controller: they
// read the same informers, write through its status store, look up configs and trackers the
// same way, and record Events with the same writer. Built here once for both.
import type { Logger } from 'pino';
import type { IssueRun, IssueRunStatus, Workflow } from '../../api/index.js';
import type { KubeClient } from '../runtime/client.js';
import { type Informer, liveObject } from '../runtime/informer.js';
import type { Manager } from '../runtime/manager.js';
import { type RunnableWorkflow, createWorkflowConfigCache } from '../shared/config-snapshot.js';
import { ISSUERUNS, WORKFLOWS } from '../shared/resources.js';
import type { TrackerCache } from '../shared/trackers.js';
import type { TrackerWriter } from '../../tracker/types.js';
import type { WorkflowConfig } from '../../workflow/config.js';
import {
  type LifecycleEventWriter,
  createLifecycleEventWriter,
  warnRefusedEvent,
} from './recorder.js';

/** What a run watcher writes the run's status with: the store it shares (status-store.ts). */
export interface RunWatcherStore {
  update(
    key: string,
    run: IssueRun,
    mutate: (status: IssueRunStatus) => IssueRunStatus | null,
  ): Promise<IssueRun>;
  fresh(key: string, run: IssueRun): IssueRun;
}

/** What a run watcher's reconciler reads and writes with; its tests give fakes of each. */
export interface RunWatcherReconcilerDeps<Store> {
  issueRuns: Informer<IssueRun>;
  workflows: Informer<Workflow>;
  store: Store;
  loadWorkflowConfig: (namespace: string, configMap: string) => Promise<RunnableWorkflow>;
  /** The Workflow's tracker writer (shared/trackers.ts); undefined when it cannot write. */
  trackerWriter: (workflow: Workflow, config: WorkflowConfig) => Promise<TrackerWriter | undefined>;
  events?: LifecycleEventWriter | undefined;
  now: () => Date;
  logger?: Logger | undefined;
}

/** The real ones, as runWatcherDeps builds them for both controllers. */
export interface RunWatcherDeps<Store> extends RunWatcherReconcilerDeps<Store> {
  loadWorkflowConfig: ReturnType<typeof createWorkflowConfigCache>;
  events: LifecycleEventWriter;
  logger: Logger;
}

export function runWatcherDeps<Store>(
  manager: Manager,
  options: {
    client: KubeClient;
    identity: string;
    logger: Logger;
    store: Store;
    trackers: TrackerCache;
  },
): RunWatcherDeps<Store> {
  return {
    issueRuns: manager.informer<IssueRun>(ISSUERUNS),
    workflows: manager.informer<Workflow>(WORKFLOWS),
    store: options.store,
    loadWorkflowConfig: createWorkflowConfigCache(options.client),
    trackerWriter: async (workflow, config) =>
      (await options.trackers.get(workflow, config)).writer,
    events: createLifecycleEventWriter({
      client: options.client,
      reportingInstance: options.identity,
      onRefused: warnRefusedEvent(options.logger),
    }),
    now: () => new Date(),
    logger: options.logger,
  };
}

/**
 * The run a watcher's key names, as the status store last wrote it; undefined when it is gone
 * or being deleted, for the watcher to forget what it kept of it.
 */
export function currentRun(
  deps: { issueRuns: Informer<IssueRun>; store: Pick<RunWatcherStore, 'fresh'> },
  key: string,
): IssueRun | undefined {
  const cached = liveObject(deps.issueRuns, key);
  if (!cached) return undefined;
  return deps.store.fresh(key, cached);
}
