import type { Logger } from 'pino';
import type { IssueRun, Workflow } from '../../api/index.js';
import { DEFAULT_LOG_CAP_BYTES, type ArchiveStore } from '../../archive/types.js';
import { errorMessage } from '../../workflow/errors.js';
import { createLifecycleEventWriter, warnRefusedEvent } from '../events/recorder.js';
import { exponentialDelay, sleep } from '../runtime/backoff.js';
import { PODS, type KubeClient } from '../runtime/client.js';
import { objectKey } from '../runtime/informer.js';
import type { Manager } from '../runtime/manager.js';
import { ARCHIVE_FINALIZER, LABEL_MANAGED_BY, MANAGED_BY } from '../shared/constants.js';
import type { PodLogLineSink } from '../shared/log-sink.js';
import { ISSUERUNS, WORKFLOWS, type PodObject } from '../shared/resources.js';
import { createArchiveReconciler, NO_SECRETS, podRunUid, type ArchiverDeps } from './archiver.js';
import { createLogArchive } from './log-archive.js';
import { createArchiveMetrics } from './metrics.js';
import { createRunRedactors } from './redaction.js';

export interface ArchiverOptions {
  client: KubeClient;
  logger: Logger;
  identity: string;
  /** Opens the store (and is tried again, with backoff, while it cannot be reached). */
  open: () => Promise<ArchiveStore>;
  logCapBytes?: number;
  giveUpAfterMs?: number;
  /** Backoff of failed archive writes (tests make it short). */
  retry?: ArchiverDeps['retry'];
  /** Backoff of opening the store at start. */
  openRetry?: { baseMs: number; maxMs: number };
}

export interface Archiver {
  /** What every IssueRun is created with while the archive is on. */
  readonly finalizers: readonly string[];
  /** Gets every line the IssueRun controller reads of a run Pod's log. */
  readonly logSink: PodLogLineSink;
  /** The store once it is open and migrated. */
  store(): ArchiveStore | undefined;
  /** Stops opening, drops buffers and closes the store. */
  stop(): Promise<void>;
}

const CONCURRENCY = 4;
const OPEN_RETRY = { baseMs: 1000, maxMs: 60_000 };
/** How long stop() may spend writing the Pod log pieces still buffered. */
const STOP_FLUSH_MS = 2000;

/**
 * The archiver, a controller of its own in the manager (run only by the leader): it
 * watches IssueRuns and their Pods, and gets the Pod logs from the IssueRun controller's log
 * follower through `logSink`. The store is opened here; a store that cannot be reached at
 * start is tried again in the background, and the runs wait (their finalizer holds them).
 */
// eslint-disable-next-line max-lines-per-function -- a factory: the closures it returns share the state it keeps
export function setupArchiver(manager: Manager, options: ArchiverOptions): Archiver {
  const { client, logger } = options;
  const issueRuns = manager.informer<IssueRun>(ISSUERUNS);
  const workflows = manager.informer<Workflow>(WORKFLOWS);
  const pods = manager.informer<PodObject>(PODS, {
    labelSelector: `${LABEL_MANAGED_BY}=${MANAGED_BY}`,
  });
  let store: ArchiveStore | undefined;
  const stopping = new AbortController();
  const redactors = createRunRedactors(client);
  // Filled below: the metrics read the reconciler's memory at each scrape.
  let pendingSince: () => number[] = () => [];
  const metrics = createArchiveMetrics(manager.metrics.registry, () => pendingSince());
  const failureCode = (error: unknown) =>
    (error as { code?: unknown })?.code && typeof (error as { code: unknown }).code === 'string'
      ? (error as { code: string }).code
      : 'unknown';
  const logs = createLogArchive({
    store: () => store,
    capBytes: options.logCapBytes ?? DEFAULT_LOG_CAP_BYTES,
    redact: (runUid, text) => (redactors.cached(runUid) ?? NO_SECRETS).text(text),
    onWrite: () => metrics.writes.inc({ kind: 'log' }),
    onFailure: (error) => metrics.failures.inc({ code: failureCode(error) }),
    onDropped: (bytes) => metrics.droppedLogBytes.inc(bytes),
    logger,
  });
  const reconciler = createArchiveReconciler({
    client,
    issueRuns,
    workflows,
    logs,
    store: () => store,
    redactorFor: (run, runPods, workflow) => redactors.redactorFor(run, runPods, workflow),
    forgetRedactor: (uid) => redactors.forget(uid),
    podsOf: (run) =>
      pods.ownedBy(run.metadata.uid ?? '').filter((pod) => podRunUid(pod) === run.metadata.uid),
    events: createLifecycleEventWriter({
      client,
      reportingInstance: options.identity,
      onRefused: warnRefusedEvent(logger),
    }),
    metrics,
    logger,
    now: () => new Date(),
    ...(options.giveUpAfterMs === undefined ? {} : { giveUpAfterMs: options.giveUpAfterMs }),
    ...(options.retry ? { retry: options.retry } : {}),
  });
  pendingSince = reconciler.pendingSince;
  const controller = manager.controller({
    name: 'archive',
    concurrency: CONCURRENCY,
    reconcile: (key) => reconciler.reconcile(key),
  });

  const onRun = (run: IssueRun) => {
    reconciler.observe(run);
    controller.enqueue(objectKey(run));
  };
  issueRuns.onAdd(onRun);
  issueRuns.onUpdate((_old, run) => onRun(run));
  issueRuns.onDelete((run) => controller.enqueue(objectKey(run)));
  const onPod = (pod: PodObject) => {
    reconciler.observePod(pod);
    const owner = pod.metadata?.ownerReferences?.find((ref) => ref.controller);
    if (owner?.kind === 'IssueRun') controller.enqueue(`${pod.metadata?.namespace}/${owner.name}`);
  };
  pods.onAdd(onPod);
  pods.onUpdate((_old, pod) => onPod(pod));
  pods.onDelete(onPod);

  const openRetry = options.openRetry ?? OPEN_RETRY;
  const opening = (async () => {
    for (let failures = 0; !stopping.signal.aborted; failures++) {
      try {
        const opened = await options.open();
        await opened.migrate();
        if (stopping.signal.aborted) {
          await opened.close();
          return;
        }
        store = opened;
        logger.info({ archive: opened.location }, `archiving runs to ${opened.location}`);
        // What waited for the store goes now.
        for (const run of issueRuns.list()) controller.enqueue(objectKey(run));
        return;
      } catch (error) {
        const delay = exponentialDelay(failures, openRetry.baseMs, openRetry.maxMs);
        metrics.failures.inc({ code: failureCode(error) });
        logger.warn(
          { err: errorMessage(error), retryInMs: delay },
          'cannot open the run archive; runs wait for it (their finalizer holds them)',
        );
        await sleep(delay, stopping.signal);
      }
    }
  })();

  return {
    finalizers: [ARCHIVE_FINALIZER],
    logSink: (source, line, offset) => logs.line(source, line, offset),
    store: () => store,
    async stop() {
      stopping.abort();
      await opening;
      // The last second's lines: a restarted controller reads running Pods' logs again, but
      // not those of Pods that ended meanwhile.
      const flushed = new AbortController();
      await Promise.race([
        logs.flushAll().finally(() => flushed.abort()),
        sleep(STOP_FLUSH_MS, flushed.signal),
      ]);
      logs.stop();
      const open = store;
      store = undefined;
      await open
        ?.close()
        .catch((error: unknown) =>
          logger.warn({ err: errorMessage(error) }, 'closing the run archive failed'),
        );
    },
  };
}
