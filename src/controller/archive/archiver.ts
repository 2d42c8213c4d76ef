/* eslint-disable max-lines -- the archive reconciler's one closure; splitting it wants its state passed explicitly first */
import type { Logger } from 'pino';
import {
  findCondition,
  setCondition,
  type IssueRun,
  type SlotStatus,
  type Workflow,
} from '../../api/index.js';
import { AGENT_CONTAINER_NAME } from '../../api/run-pod.js';
import {
  ArchiveError,
  type ArchivedRun,
  type ArchiveStore,
  type EventRecord,
} from '../../archive/types.js';
import { createRedactor, type Redactor } from '../../runner/redact.js';
import { errorMessage } from '../../workflow/errors.js';
import { archiveEvent, LifecycleReasons } from '../events/lifecycle.js';
import type { LifecycleEventWriter } from '../events/recorder.js';
import { exponentialDelay } from '../runtime/backoff.js';
import { KubeApiError, isNotFound, resourcePath, type KubeClient } from '../runtime/client.js';
import type { ReconcileResult } from '../runtime/controller.js';
import type { Informer } from '../runtime/informer.js';
import { splitKey } from '../runtime/informer.js';
import { ARCHIVE_FINALIZER, LABEL_ATTEMPT, LABEL_SLOT } from '../shared/constants.js';
import { ISSUERUNS, type PodObject } from '../shared/resources.js';
import { canonicalJson } from '../shared/status-writer.js';
import type { LogArchive } from './log-archive.js';
import {
  attemptRecord,
  eventRecords,
  isTerminalPhase,
  runRecord,
  type CoreEvent,
  timeText,
  type PodFacts,
} from './mapping.js';
import type { ArchiveMetrics } from './metrics.js';

/** The IssueRun condition set only while the archive cannot take the run (disk full). */
export const ARCHIVED_CONDITION = 'Archived';
export const ARCHIVE_DISK_FULL_REASON = 'ArchiveDiskFull';
/** How long a deletion waits for an archive that keeps failing before it is let go. */
export const DEFAULT_GIVE_UP_AFTER_MS = 24 * 60 * 60 * 1000;
export const ARCHIVE_RETRY = { baseMs: 1000, maxMs: 5 * 60_000 } as const;

/** What the archiver remembers of one run object (by uid) between reconciles. */
interface RunMemory {
  uid: string;
  /** The slot status last seen for each `slot/attempt`, while that attempt was the slot's. */
  slots: Map<string, SlotStatus>;
  /** The run's Pods as last seen in the cache (also after they are gone). */
  pods: Map<string, PodFacts>;
  /** Digests of what was written: the same record is not written twice in a process. */
  attempts: Map<string, string>;
  run?: string;
  events?: string;
  /** The store said it has the run's end already (asked once, after a restart). */
  checkedStore?: boolean;
  /** The resourceVersion whose end was archived: an unchanged run is not written again. */
  archivedVersion?: string;
  /** When the run began to wait for the archive (ended or being deleted), ms. */
  pendingSince?: number;
  failures: number;
  diskFullReported?: boolean;
}

export interface ArchiverDeps {
  client: KubeClient;
  issueRuns: Informer<IssueRun>;
  workflows: Informer<Workflow>;
  logs: LogArchive;
  store: () => ArchiveStore | undefined;
  redactorFor: (
    run: IssueRun,
    pods: readonly PodObject[],
    workflow?: Workflow,
  ) => Promise<Redactor>;
  forgetRedactor: (uid: string) => void;
  /** The run's Pods in the cache now (the redactor reads their Secret references). */
  podsOf: (run: IssueRun) => PodObject[];
  events: LifecycleEventWriter;
  metrics: ArchiveMetrics;
  logger: Logger;
  now: () => Date;
  giveUpAfterMs?: number;
  retry?: { baseMs: number; maxMs: number };
}

const slotKey = (slot: number, attempt: number): string => `${slot}/${attempt}`;

const unavailable = () =>
  new ArchiveError('archive_unavailable', 'the archive is not open (still trying to reach it)');

/** The Pod as the archive describes it: which attempt, where it ran, with what, when. */
export function podFacts(pod: PodObject): PodFacts | undefined {
  const labels = pod.metadata?.labels ?? {};
  const slot = Number(labels[LABEL_SLOT]);
  const attempt = Number(labels[LABEL_ATTEMPT]);
  if (!pod.metadata?.uid || !Number.isInteger(slot) || !Number.isInteger(attempt)) return undefined;
  const agent = pod.spec?.containers?.find((container) => container.name === AGENT_CONTAINER_NAME);
  const terminated = pod.status?.containerStatuses?.find(
    (status) => status.name === AGENT_CONTAINER_NAME,
  )?.state?.terminated;
  const time = (value: unknown): string | undefined =>
    value instanceof Date ? value.toISOString() : typeof value === 'string' ? value : undefined;
  const startedAt = time(pod.status?.startTime);
  const finishedAt = time(terminated?.finishedAt);
  return {
    name: pod.metadata.name ?? '',
    uid: pod.metadata.uid,
    slot,
    attempt,
    ...(pod.spec?.nodeName ? { node: pod.spec.nodeName } : {}),
    ...(agent?.image ? { image: agent.image } : {}),
    ...(pod.status?.phase ? { phase: pod.status.phase } : {}),
    ...(startedAt ? { startedAt } : {}),
    ...(finishedAt ? { finishedAt } : {}),
  };
}

/** The IssueRun uid that controls a Pod. */
export const podRunUid = (pod: PodObject): string | undefined =>
  pod.metadata?.ownerReferences?.find((owner) => owner.controller && owner.kind === 'IssueRun')
    ?.uid;

/**
 * The archiver's reconciler. For each IssueRun: make sure it carries the archive's
 * finalizer (one patch, only for runs created without it); write each attempt once its Pod
 * ended; at the run's end write its Pod logs, Events and the run; when it is being deleted
 * write the last record and release it (one patch). A store that fails is retried with
 * backoff, the finalizer kept, until --archive-give-up-after past the deletion request.
 */
// eslint-disable-next-line max-lines-per-function -- a factory: the closures it returns share the state it keeps
export function createArchiveReconciler(deps: ArchiverDeps) {
  const runs = new Map<string, RunMemory>();
  const uidOfKey = new Map<string, string>();
  const giveUpAfterMs = deps.giveUpAfterMs ?? DEFAULT_GIVE_UP_AFTER_MS;
  const retry = deps.retry ?? ARCHIVE_RETRY;

  function memory(uid: string): RunMemory {
    let entry = runs.get(uid);
    if (!entry) {
      entry = { uid, slots: new Map(), pods: new Map(), attempts: new Map(), failures: 0 };
      runs.set(uid, entry);
    }
    return entry;
  }

  function forget(uid: string): void {
    runs.delete(uid);
    deps.logs.forgetRun(uid);
    deps.forgetRedactor(uid);
  }

  /** Remembers the slot statuses this run shows: a retry overwrites the earlier attempt's. */
  function observe(run: IssueRun): void {
    const uid = run.metadata.uid;
    if (!uid) return;
    const entry = memory(uid);
    for (const slot of run.status?.slots ?? []) {
      if (slot.attempt !== undefined) entry.slots.set(slotKey(slot.slot, slot.attempt), slot);
    }
  }

  function observePod(pod: PodObject): void {
    const uid = podRunUid(pod);
    const facts = podFacts(pod);
    if (!uid || !facts) return;
    const entry = memory(uid);
    const known = entry.pods.get(facts.uid);
    // A Pod deleted leaves its last state; the cache's last word on it is kept.
    entry.pods.set(facts.uid, { ...known, ...facts });
  }

  /** The run's attempts whose records are due: ended ones, or all at the run's end. */
  function dueAttempts(run: IssueRun, entry: RunMemory, all: boolean): Array<[number, number]> {
    const keys = new Set<string>(entry.slots.keys());
    for (const pod of entry.pods.values()) keys.add(slotKey(pod.slot, pod.attempt));
    for (const source of deps.logs.podsOf(entry.uid))
      keys.add(slotKey(source.slot, source.attempt));
    const due: Array<[number, number]> = [];
    for (const key of keys) {
      const [slot = 0, attempt = 0] = key.split('/').map(Number);
      const current = run.status?.slots?.find((entry) => entry.slot === slot);
      const seen = entry.slots.get(key);
      const ended =
        all ||
        (current?.attempt ?? 0) > attempt ||
        isTerminalPhase(seen?.phase) ||
        seen?.reason === 'RetryScheduled' ||
        seen?.reason === 'ContinuationScheduled';
      if (ended) due.push([slot, attempt]);
    }
    return due.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  }

  async function writeAttempts(
    store: ArchiveStore,
    run: IssueRun,
    entry: RunMemory,
    redactor: Redactor,
    all: boolean,
  ): Promise<void> {
    /** What the store holds of the run, read once, only for attempts this process never read. */
    let stored: Promise<ArchivedRun | undefined> | undefined;
    for (const [slot, attempt] of dueAttempts(run, entry, all)) {
      if (entry.attempts.get(slotKey(slot, attempt)) === 'stored') continue;
      const pod = [...entry.pods.values()]
        .filter((candidate) => candidate.slot === slot && candidate.attempt === attempt)
        .at(-1);
      const source = deps.logs
        .podsOf(entry.uid)
        .filter((candidate) => candidate.slot === slot && candidate.attempt === attempt)
        .at(-1);
      const podUid = pod?.uid ?? source?.podUid;
      const status = entry.slots.get(slotKey(slot, attempt));
      const log = podUid ? deps.logs.facts(podUid) : undefined;
      if (!log) {
        // Its log was read by an earlier process (before a restart), which wrote what it
        // read: a record made now would know less (no hooks). Written only if missing.
        stored ??= store.getRun({ uid: entry.uid });
        const known = (await stored)?.attempts.some(
          (candidate) => candidate.slot === slot && candidate.attempt === attempt,
        );
        if (known) {
          entry.attempts.set(slotKey(slot, attempt), 'stored');
          continue;
        }
      }
      // A log this process never read (it ended before a restart): the run's own hook
      // list, which holds the slot's current attempt.
      const statusHooks =
        !log && status && run.status?.slots?.find((s) => s.slot === slot)?.attempt === attempt
          ? (run.status?.hooks ?? []).filter((hook) => hook.slot === slot)
          : [];
      const record = attemptRecord({
        runUid: entry.uid,
        slot,
        attempt,
        status,
        pod:
          pod ?? (source ? { name: source.podName, uid: source.podUid, slot, attempt } : undefined),
        log: log ?? (statusHooks.length > 0 ? { hooks: statusHooks, turns: 0 } : undefined),
        redactor,
      });
      const digest = canonicalJson(record);
      if (entry.attempts.get(slotKey(slot, attempt)) === digest) continue;
      await store.putAttempt(record);
      deps.metrics.writes.inc({ kind: 'attempt' });
      entry.attempts.set(slotKey(slot, attempt), digest);
    }
  }

  /** The Events of the run and of each of its Pods (core/v1 shows events.k8s.io ones too). */
  async function listEvents(run: IssueRun, entry: RunMemory): Promise<CoreEvent[]> {
    const uids = new Set([entry.uid, ...entry.pods.keys()]);
    for (const source of deps.logs.podsOf(entry.uid)) uids.add(source.podUid);
    const events: CoreEvent[] = [];
    for (const uid of uids) {
      let token: string | undefined;
      do {
        const page = await deps.client.request<{
          items?: CoreEvent[];
          metadata?: { continue?: string };
        }>({
          path: `/api/v1/namespaces/${encodeURIComponent(run.metadata.namespace ?? '')}/events`,
          query: { fieldSelector: `involvedObject.uid=${uid}`, limit: 500, continue: token },
        });
        events.push(...(page.items ?? []));
        token = page.metadata?.continue || undefined;
      } while (token);
    }
    return events;
  }

  async function writeEnd(
    store: ArchiveStore,
    run: IssueRun,
    entry: RunMemory,
    redactor: Redactor,
    deletedAt: string | undefined,
  ): Promise<void> {
    await deps.logs.flushRun(entry.uid);
    const events: EventRecord[] = eventRecords(entry.uid, await listEvents(run, entry), redactor);
    const eventsDigest = canonicalJson(events);
    if (events.length > 0 && entry.events !== eventsDigest) {
      await store.putEvents(events);
      deps.metrics.writes.inc({ kind: 'events' });
      entry.events = eventsDigest;
    }
    // The run last: once it is there, its end is (a restarted archiver asks for it).
    const record = runRecord(run, redactor, deletedAt);
    const { deletedAt: _deletedAt, ...withoutTime } = record;
    const digest = canonicalJson(withoutTime);
    // A deleted run's record carries its deletion time, which marks it deleted: one
    // durable write (one commit, one sync) per deletion, not a second for the mark.
    if (entry.run !== digest || deletedAt) {
      await store.putRun(record);
      deps.metrics.writes.inc({ kind: deletedAt ? 'deleted' : 'run' });
      entry.run = digest;
    }
  }

  /** One merge patch, guarded by resourceVersion: another's finalizer is never dropped. */
  async function setFinalizers(run: IssueRun, finalizers: string[]): Promise<void> {
    try {
      await deps.client.request({
        method: 'PATCH',
        path: resourcePath(ISSUERUNS, run.metadata.namespace, run.metadata.name),
        patchType: 'merge',
        body: { metadata: { finalizers, resourceVersion: run.metadata.resourceVersion } },
      });
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }

  const release = (run: IssueRun) =>
    setFinalizers(
      run,
      (run.metadata.finalizers ?? []).filter((finalizer) => finalizer !== ARCHIVE_FINALIZER),
    );

  /** Archived=<status> on the run's status, written only when it changes. */
  async function setArchivedCondition(
    run: IssueRun,
    status: 'True' | 'False',
    reason: string,
    message: string,
  ): Promise<void> {
    const current = findCondition(run.status?.conditions, ARCHIVED_CONDITION);
    if (current?.status === status && current.reason === reason) return;
    const conditions = setCondition(
      [...(run.status?.conditions ?? [])],
      {
        type: ARCHIVED_CONDITION,
        status,
        reason,
        message,
        observedGeneration: run.metadata.generation ?? 0,
      },
      deps.now(),
    );
    try {
      await deps.client.request({
        method: 'PATCH',
        path: resourcePath(ISSUERUNS, run.metadata.namespace, run.metadata.name, 'status'),
        patchType: 'merge',
        body: {
          metadata: { resourceVersion: run.metadata.resourceVersion },
          status: { conditions },
        },
      });
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }

  /** Whether the store holds this run's end already: asked once per process, after a restart. */
  async function storedAlready(store: ArchiveStore, run: IssueRun, entry: RunMemory) {
    if (entry.checkedStore) return false;
    entry.checkedStore = true;
    const stored = await store.getRun({ uid: entry.uid });
    const ended =
      stored !== undefined &&
      stored.run.phase === run.status?.phase &&
      stored.run.finishedAt === run.status?.completionTime;
    if (ended) entry.run = canonicalJson(runRecordWithoutTime(stored.run));
    return ended;
  }

  async function failed(
    run: IssueRun,
    entry: RunMemory,
    error: unknown,
    deleting: boolean,
  ): Promise<ReconcileResult> {
    const code = error instanceof ArchiveError ? error.code : 'unknown';
    deps.metrics.failures.inc({ code });
    entry.failures += 1;
    const message = `the run archive cannot take run ${run.metadata.name}: ${errorMessage(error)}`;
    deps.logger.warn({ run: run.metadata.name, code, failures: entry.failures }, message);
    try {
      if (code === 'archive_disk_full') {
        if (!entry.diskFullReported) {
          await deps.events([
            archiveEvent(
              run,
              LifecycleReasons.ArchiveFailed,
              `${code}: ${errorMessage(error)}; deletion waits until the archive takes it`,
              code,
            ),
          ]);
          entry.diskFullReported = true;
        }
        await setArchivedCondition(run, 'False', ARCHIVE_DISK_FULL_REASON, errorMessage(error));
      }
      const deletionAt = Date.parse(timeText(run.metadata.deletionTimestamp) ?? '');
      if (deleting && deps.now().getTime() - deletionAt >= giveUpAfterMs) {
        await deps.events([
          archiveEvent(
            run,
            LifecycleReasons.ArchiveAbandoned,
            `released unarchived after ${Math.round(giveUpAfterMs / 1000)} s of failed archive writes (--archive-give-up-after): ${code}: ${errorMessage(error)}`,
          ),
        ]);
        deps.metrics.abandoned.inc();
        deps.logger.error({ run: run.metadata.name, code }, `archive abandoned: ${message}`);
        await release(run);
        forget(entry.uid);
        return;
      }
    } catch (kubeError) {
      // The Event or condition could not be written now: the next try writes them.
      deps.logger.warn({ err: errorMessage(kubeError) }, 'archive: cannot report the failure');
    }
    let delay = exponentialDelay(entry.failures - 1, retry.baseMs, retry.maxMs);
    if (deleting) {
      const giveUpAt = Date.parse(timeText(run.metadata.deletionTimestamp) ?? '') + giveUpAfterMs;
      delay = Math.max(0, Math.min(delay, giveUpAt - deps.now().getTime()));
    }
    return { requeueAfter: Math.max(delay, 1) };
  }

  async function reconcile(key: string): Promise<ReconcileResult> {
    const { namespace = '', name } = splitKey(key);
    const run = deps.issueRuns.get(namespace, name);
    const previous = uidOfKey.get(key);
    if (!run?.metadata.uid) {
      if (previous) forget(previous);
      uidOfKey.delete(key);
      return;
    }
    const uid = run.metadata.uid;
    if (previous && previous !== uid) forget(previous);
    uidOfKey.set(key, uid);
    observe(run);
    const entry = memory(uid);
    const finalizers = run.metadata.finalizers ?? [];
    const holding = finalizers.includes(ARCHIVE_FINALIZER);
    const deleting = Boolean(run.metadata.deletionTimestamp);
    if (!holding) {
      // Created without it (by a user): one patch. One being deleted is past holding.
      if (!deleting) await setFinalizers(run, [...finalizers, ARCHIVE_FINALIZER]);
      else forget(uid);
      return;
    }
    const ended = isTerminalPhase(run.status?.phase);
    const ending = ended || deleting;
    if (ending) entry.pendingSince ??= deps.now().getTime();
    if (!deleting && ended && entry.archivedVersion === run.metadata.resourceVersion) return;
    const store = deps.store();
    try {
      if (!store) throw unavailable();
      if (
        !deleting &&
        ended &&
        entry.run === undefined &&
        (await storedAlready(store, run, entry))
      ) {
        entry.archivedVersion = run.metadata.resourceVersion;
        return done(entry);
      }
      if (
        !ending &&
        dueAttempts(run, entry, false).every(([s, a]) => entry.attempts.has(slotKey(s, a)))
      )
        return;
      const redactor = await deps.redactorFor(
        run,
        deps.podsOf(run),
        deps.workflows.get(namespace, run.spec.workflowRef.name),
      );
      await writeAttempts(store, run, entry, redactor, ending);
      if (ending) {
        const deletedAt = deleting ? deps.now().toISOString() : undefined;
        await writeEnd(store, run, entry, redactor, deletedAt);
      }
    } catch (error) {
      // The apiserver's refusals go the queue's way; the store's are the archiver's own.
      if (error instanceof KubeApiError) throw error;
      return failed(run, entry, error, deleting);
    }
    if (findCondition(run.status?.conditions, ARCHIVED_CONDITION)?.status === 'False') {
      await setArchivedCondition(run, 'True', 'Archived', 'the archive holds the run');
    }
    if (deleting) {
      await release(run);
      forget(uid);
      return;
    }
    if (ended) {
      entry.archivedVersion = run.metadata.resourceVersion;
      // Its logs are read and written: what they said is in the store now, not kept in
      // memory for every finished run (the deletion's write finds the attempts stored).
      deps.logs.forgetRun(uid);
    }
    return done(entry);
  }

  function done(entry: RunMemory): void {
    entry.failures = 0;
    entry.diskFullReported = false;
    delete entry.pendingSince;
  }

  return {
    reconcile,
    observe,
    observePod,
    /** When each run waiting for the archive began to wait (ms since epoch). */
    pendingSince: () =>
      [...runs.values()].flatMap((entry) =>
        entry.pendingSince === undefined ? [] : [entry.pendingSince],
      ),
  };
}

/** A run record's digest ignores when it was deleted. */
function runRecordWithoutTime(record: ReturnType<typeof runRecord>) {
  const { deletedAt: _deletedAt, ...rest } = record;
  return rest;
}

/** A redactor with no values, until the run's Secrets are read. */
export const NO_SECRETS = createRedactor([]);
