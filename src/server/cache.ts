import type { Logger } from 'pino';
import { GROUP, ISSUERUN_PLURAL, VERSION, WORKFLOW_PLURAL } from '../api/constants.js';
import type { KubeClient, ResourceRef } from '../controller/runtime/client.js';
import {
  createInformer,
  objectKey,
  type Informer,
  type KubeObject,
} from '../controller/runtime/informer.js';
import type { Json } from './json.js';
import { runOfIssueRun, workflowOf } from './mappers.js';
import type { ChangeEvent, RunSummary, WorkflowSummary } from './view-api.js';

/**
 * The view server's one watch cache, shared by every caller: IssueRuns and Workflows, each
 * kept as its view summary too (mapped once per change, not once per request), and every
 * change handed to the listeners (/watch) as a ChangeEvent. Callers' reads are filtered by
 * their reviews on the way out (routes/), never by a cache of their own.
 */

export const ISSUERUNS: ResourceRef = { group: GROUP, version: VERSION, plural: ISSUERUN_PLURAL };
export const WORKFLOWS: ResourceRef = { group: GROUP, version: VERSION, plural: WORKFLOW_PLURAL };

type Change = Exclude<ChangeEvent, { event: 'heartbeat' }>;

export interface ViewCache {
  hasSynced(): boolean;
  waitForSync(signal?: AbortSignal): Promise<void>;
  /** Every live run, newest first (createdAt, then uid). */
  runs(): readonly RunSummary[];
  run(namespace: string, name: string): { object: Json; summary: RunSummary } | undefined;
  /** Whether a run of this uid is in the cluster. */
  isLive(uid: string): boolean;
  workflows(): WorkflowSummary[];
  workflow(namespace: string, name: string): Json | undefined;
  /** Listens to every change; returns the function that stops listening. */
  subscribe(listener: (change: Change) => void): () => void;
  start(): void;
  stop(): Promise<void>;
}

const newestFirst = (a: RunSummary, b: RunSummary): number =>
  b.createdAt.localeCompare(a.createdAt) || b.uid.localeCompare(a.uid);

const isFinished = (run: RunSummary): boolean =>
  run.phase === 'Succeeded' || run.phase === 'Failed';

/** The live runs' summaries by namespace/name, and the uids among them. */
function createRunIndex() {
  const summaries = new Map<string, RunSummary>();
  const uids = new Set<string>();
  /** The sorted list, rebuilt lazily after a change (a read costs nothing between changes). */
  let sorted: RunSummary[] | undefined;
  return {
    put(object: KubeObject): RunSummary {
      const summary = runOfIssueRun(object as Json);
      const key = objectKey(object);
      const previous = summaries.get(key);
      if (previous && previous.uid !== summary.uid) uids.delete(previous.uid);
      summaries.set(key, summary);
      uids.add(summary.uid);
      sorted = undefined;
      return summary;
    },
    remove(object: KubeObject): RunSummary {
      const key = objectKey(object);
      const summary = summaries.get(key) ?? runOfIssueRun(object as Json);
      summaries.delete(key);
      uids.delete(summary.uid);
      sorted = undefined;
      return summary;
    },
    get: (namespace: string, name: string) => summaries.get(`${namespace}/${name}`),
    sorted(): readonly RunSummary[] {
      sorted ??= [...summaries.values()].sort(newestFirst);
      return sorted;
    },
    isLive: (uid: string) => uids.has(uid),
    /** Live runs of a Workflow not finished: the overview's running count before a poll. */
    runningOf(namespace: string, name: string): number {
      let count = 0;
      for (const run of summaries.values())
        if (run.namespace === namespace && run.workflow === name && !isFinished(run)) count += 1;
      return count;
    },
    /** Live runs of a Workflow whose agent waits on a person (AwaitingApproval, AwaitingAnswer). */
    awaitingOf(namespace: string, name: string): number {
      let count = 0;
      for (const run of summaries.values())
        if (run.namespace === namespace && run.workflow === name && run.awaiting) count += 1;
      return count;
    },
  };
}

const workflowDeleted = (object: KubeObject): Change => {
  const meta = object.metadata ?? {};
  return {
    event: 'workflow_deleted',
    data: {
      uid: typeof meta.uid === 'string' ? meta.uid : '',
      namespace: meta.namespace ?? '',
      name: meta.name ?? '',
    },
  };
};

export function createViewCache(options: {
  client: KubeClient;
  namespace?: string;
  logger?: Logger;
}): ViewCache {
  const common = {
    client: options.client,
    ...(options.namespace ? { namespace: options.namespace } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
  };
  const runInformer: Informer<KubeObject> = createInformer({ ...common, resource: ISSUERUNS });
  const workflowInformer: Informer<KubeObject> = createInformer({ ...common, resource: WORKFLOWS });
  const index = createRunIndex();
  const listeners = new Set<(change: Change) => void>();

  const emit = (change: Change): void => {
    for (const listener of listeners) listener(change);
  };

  const workflowSummary = (object: KubeObject): WorkflowSummary => {
    const meta = object.metadata ?? {};
    const [namespace, name] = [meta.namespace ?? '', meta.name ?? ''];
    return workflowOf(
      object as Json,
      index.runningOf(namespace, name),
      index.awaitingOf(namespace, name),
    );
  };

  const putRun = (object: KubeObject) => emit({ event: 'run', data: index.put(object) });
  runInformer.onAdd(putRun);
  runInformer.onUpdate((_previous, object) => putRun(object));
  runInformer.onDelete((object) => {
    const { uid, namespace, name } = index.remove(object);
    emit({ event: 'run_deleted', data: { uid, namespace, name } });
  });
  const putWorkflow = (object: KubeObject) =>
    emit({ event: 'workflow', data: workflowSummary(object) });
  workflowInformer.onAdd(putWorkflow);
  workflowInformer.onUpdate((_previous, object) => putWorkflow(object));
  workflowInformer.onDelete((object) => emit(workflowDeleted(object)));

  return {
    hasSynced: () => runInformer.hasSynced() && workflowInformer.hasSynced(),
    async waitForSync(signal) {
      await Promise.all([runInformer.waitForSync(signal), workflowInformer.waitForSync(signal)]);
    },
    runs: () => index.sorted(),
    run(namespace, name) {
      const object = runInformer.get(namespace, name);
      const summary = index.get(namespace, name);
      return object && summary ? { object: object as Json, summary } : undefined;
    },
    isLive: (uid) => index.isLive(uid),
    workflows: () => workflowInformer.list().map(workflowSummary),
    workflow: (namespace, name) => workflowInformer.get(namespace, name) as Json | undefined,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    start() {
      runInformer.start();
      workflowInformer.start();
    },
    async stop() {
      await Promise.all([runInformer.stop(), workflowInformer.stop()]);
    },
  };
}

export { newestFirst };
