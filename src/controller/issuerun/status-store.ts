import {
  FINISHED,
  Reasons,
  findCondition,
  type IssueRun,
  type IssueRunStatus,
  type SlotStatus,
  type WorkspaceSourceStatus,
} from '../../api/index.js';
import type { KubeClient } from '../runtime/client.js';
import { failpoint } from '../runtime/failpoints.js';
import { createLane, type Lane } from '../runtime/lane.js';
import type { ReconcileResult } from '../runtime/controller.js';
import type { Informer } from '../runtime/informer.js';
import { splitKey } from '../runtime/informer.js';
import { runPodName } from '../shared/object-names.js';
import { ISSUERUNS } from '../shared/resources.js';
import { createStatusWriter, jsonEqual } from '../shared/status-writer.js';
import { runLifecycleEvents } from '../events/lifecycle.js';
import type { LifecycleEventWriter } from '../events/recorder.js';
import { assignedSlots } from './slot-views.js';
import type { PodOutcome } from './pod-status.js';
import { runState, runStatus, type RunState, type SlotView } from './status.js';
import { carryUsage } from './usage-days.js';
import { budgetDay } from '../../workflow/budget-day.js';
import { DEFAULT_BUDGET_TIME_ZONE } from '../../workflow/budget.js';

/**
 * The IssueRun reconciler's one way to its status: the status built in one place, written
 * only when it changed (progress at most once per interval, ends at once), and read back
 * fresher than the informer's cache while the cache lags this controller's own writes.
 */
export interface RunStatusStore {
  /** The status of `run` with these slots in this state (and what a start created). */
  statusOf: (
    run: IssueRun,
    slots: readonly SlotView[],
    state: RunState,
    created?: {
      configDigest: string;
      inputsConfigMap: string;
      branch?: string | undefined;
      workspaceSource?: WorkspaceSourceStatus | undefined;
    },
  ) => IssueRunStatus;
  /** Writes the status when it changed; progress (not urgent) waits out the interval. */
  patch: (
    key: string,
    run: IssueRun,
    next: IssueRunStatus,
    urgent: boolean,
    /** Slots of attempts this write replaces (a retry): their last usage is counted first. */
    ended?: readonly SlotStatus[],
  ) => Promise<ReconcileResult>;
  /**
   * Writes a start's status after the caller has moved on: the status is the key's freshest
   * at once (fresh(), freshRuns(), and every later write of the key waits for it), and goes
   * out through a narrow lane, so that in a burst the Pod creates of the starts behind it
   * reach the apiserver first. Skipped when `signal` is aborted before its turn (a replica
   * that stopped leading writes nothing); a write that fails is forgotten and `onDeferredFailed`
   * told, so that the key is reconciled again from what the apiserver holds.
   */
  patchLater: (key: string, run: IssueRun, next: IssueRunStatus, signal?: AbortSignal) => void;
  /** Resolves once every status handed to patchLater so far is written, skipped or failed. */
  settled: () => Promise<void>;
  /** A status with no Pods behind it: waiting on the Workflow, or ended before any Pod. */
  writePodless: (key: string, run: IssueRun, state: RunState) => Promise<ReconcileResult>;
  /** Writes the run's branch into its status; returns the run as it now stands. */
  storeBranch: (key: string, run: IssueRun, branch: string) => Promise<IssueRun>;
  /** Writes the SSH workers just chosen for an attempt's slots, before their Pods. */
  storeHosts: (
    key: string,
    run: IssueRun,
    attempt: number,
    hosts: ReadonlyMap<number, string>,
  ) => Promise<IssueRun>;
  /**
   * Changes the status of `run` from the freshest one known (null: no change), serialized per
   * key with every other write of this store: the review controller's way to its fields, so
   * that it and the IssueRun reconciler never wipe each other's writes. Returns the run as
   * it now stands.
   */
  update: (
    key: string,
    run: IssueRun,
    mutate: (status: IssueRunStatus) => IssueRunStatus | null,
  ) => Promise<IssueRun>;
  /**
   * Counts the last usage of attempts that ended (usage-days.ts) before their slots move on:
   * the next attempt's budget is worked out from what the status holds.
   */
  countUsage: (key: string, run: IssueRun, ended: readonly SlotStatus[]) => Promise<IssueRun>;
  /** The cached run with the freshest status this controller knows. */
  fresh: (key: string, run: IssueRun) => IssueRun;
  /** The runs of a namespace as fresh as this controller knows them. */
  freshRuns: (namespace: string) => IssueRun[];
  forget: (key: string) => void;
}

export const runKey = (run: IssueRun): string =>
  `${run.metadata.namespace ?? ''}/${run.metadata.name ?? ''}`;

/** `next` with a field another controller owns as the freshest status has it (unset: none). */
function withLatest<Key extends 'review' | 'inbox'>(
  next: IssueRunStatus,
  latest: IssueRunStatus | undefined,
  key: Key,
): IssueRunStatus {
  const carried: IssueRunStatus = { ...next };
  delete carried[key];
  const owned = latest?.[key];
  if (owned) carried[key] = owned;
  return carried;
}

/**
 * The review loop's fields (status.review, status.git.pullRequest) are the review
 * controller's: a status the IssueRun reconciler built takes them from the freshest status.
 */
export function carryReview(
  next: IssueRunStatus,
  latest: IssueRunStatus | undefined,
): IssueRunStatus {
  const carried = withLatest(next, latest, 'review');
  if (carried.git) {
    const git = { ...carried.git };
    delete git.pullRequest;
    if (latest?.git?.pullRequest) git.pullRequest = latest.git.pullRequest;
    carried.git = git;
  }
  return carried;
}

/**
 * status.inbox is the inbox controller's (src/controller/inbox/): a status the IssueRun
 * reconciler built takes it from the freshest status, so neither wipes the other's writes.
 */
export function carryInbox(
  next: IssueRunStatus,
  latest: IssueRunStatus | undefined,
): IssueRunStatus {
  return withLatest(next, latest, 'inbox');
}

/**
 * patchLater's writes in flight at once. Eight: a burst's 500 start statuses then trail its
 * Pod creates by about a second instead of sharing the apiserver with them.
 */
const DEFERRED_WRITES_AT_ONCE = 8;

/** Runs the writes of one key one after another (two writers in one process). */
function createKeyedSerializer() {
  const tails = new Map<string, Promise<unknown>>();
  return function serial<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = tails.get(key) ?? Promise.resolve();
    const result = previous.then(work, work);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    tails.set(key, tail);
    void tail.then(() => {
      if (tails.get(key) === tail) tails.delete(key);
    });
    return result;
  };
}

// eslint-disable-next-line max-lines-per-function -- a factory: the closures it returns share the state it keeps
export function createRunStatusStore(deps: {
  client: KubeClient;
  issueRuns: Informer<IssueRun>;
  now: () => Date;
  progressIntervalMs: number;
  /** Writes the Events of the run's life (started, retry, end); none when absent. */
  events?: LifecycleEventWriter | undefined;
  /** Told of each status written (the metrics count the ends these writes record). */
  onWritten?:
    | ((run: IssueRun, previous: IssueRunStatus | undefined, next: IssueRunStatus) => void)
    | undefined;
  /** The time zone the run's budget counts days in (its Workflow's); UTC when absent. */
  budgetTimeZone?: ((run: IssueRun) => string) | undefined;
  /** Told of a patchLater write that failed: the key should be reconciled again. */
  onDeferredFailed?: ((key: string, error: unknown) => void) | undefined;
}): RunStatusStore {
  const statuses = createStatusWriter<IssueRunStatus>(deps.client, ISSUERUNS);
  const serial = createKeyedSerializer();
  const deferredLane = createLane(DEFERRED_WRITES_AT_ONCE);
  /** patchLater's statuses not written yet: the freshest of their keys meanwhile. */
  const pending = new Map<string, IssueRunStatus>();
  const deferred = new Set<Promise<void>>();
  /** The freshest status of the key: the informer's, or this store's last write if newer. */
  const latest = (key: string, run: IssueRun): IssueRunStatus | undefined => {
    const { namespace, name } = splitKey(key);
    const cached = deps.issueRuns.get(namespace, name) ?? run;
    return statuses.freshest(key, {
      resourceVersion: cached.metadata.resourceVersion,
      status: cached.status,
    });
  };

  const statusOf: RunStatusStore['statusOf'] = (run, slots, state, created) =>
    runStatus({
      current: run.status,
      generation: run.metadata.generation,
      attempt: run.spec.attempt ?? 1,
      slots,
      state,
      now: deps.now(),
      ...created,
    });

  const dayOf = (run: IssueRun): string =>
    budgetDay(deps.now(), deps.budgetTimeZone?.(run) ?? DEFAULT_BUDGET_TIME_ZONE);

  const patch = (
    key: string,
    run: IssueRun,
    built: IssueRunStatus,
    urgent: boolean,
    ended?: readonly SlotStatus[],
    /** patchLater's: the write waits its turn in the lane, and is skipped once aborted. */
    later?: { lane: Lane; signal?: AbortSignal | undefined },
  ): Promise<ReconcileResult> => {
    const write = async (): Promise<ReconcileResult> => {
      if (later?.signal?.aborted) return;
      const base = latest(key, run);
      const carried = carryInbox(carryReview(built, base), base);
      const next = carryUsage(carried, base, dayOf(run), ended);
      // Written later, the name may hold another run by then (deleted and made again).
      return patchNow(key, run, next, urgent, base, later ? run.metadata.uid : undefined);
    };
    return serial(key, () => (later ? later.lane(write) : write()));
  };

  const patchNow = async (
    key: string,
    run: IssueRun,
    next: IssueRunStatus,
    urgent: boolean,
    base: IssueRunStatus | undefined,
    uid?: string,
  ): Promise<ReconcileResult> => {
    if (jsonEqual(next, base ?? {})) return;
    const now = deps.now().getTime();
    const since = now - statuses.lastWriteAt(key);
    if (!urgent && since < deps.progressIntervalMs) {
      return { requeueAfter: deps.progressIntervalMs - since };
    }
    const { namespace = '', name } = splitKey(key);
    if (findCondition(next.conditions, FINISHED)?.status === 'True') {
      failpoint('before-finished-status');
    }
    // Before the status: a restart in between computes the same Events again (see
    // events/lifecycle.ts), where one after it would lose them.
    await deps.events?.(runLifecycleEvents(run, run.status, next));
    await statuses.write(key, namespace, name, next, now, { uid });
    deps.onWritten?.(run, run.status, next);
  };

  // A run that ends with no Pod ends the slots it had placed on SSH workers too (they would
  // hold it open).
  const writePodless: RunStatusStore['writePodless'] = (key, run, state) => {
    const ended: SlotView[] =
      state.kind === 'finished'
        ? assignedSlots(run, []).map((view) => ({
            ...view,
            outcome: {
              phase: 'Failed',
              reason: state.reason as PodOutcome['reason'],
              message: state.message,
              finished: true,
              summary: null,
            },
          }))
        : [];
    return patch(key, run, statusOf(run, ended, state), true);
  };

  const storeBranch: RunStatusStore['storeBranch'] = async (key, run, branch) => {
    const state = runState('Pending', Reasons.Pending, `creating the run Pod on branch ${branch}`);
    const next: IssueRunStatus = { ...statusOf(run, [], state), git: { branch } };
    await patch(key, run, next, true);
    return { ...run, status: next };
  };

  // A restart finds the hosts there: the first attempt's again in startRun, a later one's in
  // observeRun (assignedSlots). Only those slots change; a run with none yet says it is
  // creating its Pods.
  const storeHosts: RunStatusStore['storeHosts'] = async (key, run, attempt, hosts) => {
    const recorded = run.status?.slots ?? [];
    const names = [...new Set(hosts.values())].join(', ');
    const base =
      recorded.length > 0 && run.status
        ? run.status
        : statusOf(
            run,
            [],
            runState('Pending', Reasons.Pending, `creating the run Pod on ${names}`),
          );
    const placed: SlotStatus[] = [...hosts].map(([slot, host]) => ({
      slot,
      phase: 'Pending',
      reason: Reasons.SshHostAssigned,
      message: `attempt ${attempt} runs on SSH worker ${host}; its Pod is being created`,
      podName: runPodName(run.metadata.name ?? '', slot, attempt),
      attempt,
      host,
      turns: 0,
    }));
    const slots = [...recorded.filter((entry) => !hosts.has(entry.slot)), ...placed].sort(
      (a, b) => a.slot - b.slot,
    );
    const next: IssueRunStatus = { ...base, slots };
    await patch(key, run, next, true);
    return { ...run, status: next };
  };

  const update: RunStatusStore['update'] = (key, run, mutate) =>
    serial(key, async () => {
      const current = latest(key, run) ?? {};
      const next = mutate(current);
      const now = { ...run, status: current };
      if (next === null || jsonEqual(next, current)) return now;
      const { namespace = '', name } = splitKey(key);
      await statuses.write(key, namespace, name, next, deps.now().getTime());
      return { ...run, status: next };
    });

  const countUsage: RunStatusStore['countUsage'] = (key, run, ended) =>
    update(key, run, (status) => carryUsage(status, status, dayOf(run), ended));

  const patchLater: RunStatusStore['patchLater'] = (key, run, built, signal) => {
    pending.set(key, built);
    const write = patch(key, run, built, true, undefined, { lane: deferredLane, signal });
    const done = write.then(
      () => {
        if (pending.get(key) === built) pending.delete(key);
      },
      (error: unknown) => {
        if (pending.get(key) === built) pending.delete(key);
        deps.onDeferredFailed?.(key, error);
      },
    );
    deferred.add(done);
    void done.then(() => deferred.delete(done));
  };

  const settled = async () => {
    while (deferred.size > 0) await Promise.all([...deferred]);
  };

  const fresh: RunStatusStore['fresh'] = (key, run) => {
    const waiting = pending.get(key);
    if (waiting) return { ...run, status: waiting };
    const cached = { resourceVersion: run.metadata.resourceVersion, status: run.status };
    return { ...run, status: statuses.freshest(key, cached) };
  };

  return {
    statusOf,
    patch: (key, run, next, urgent, ended) => patch(key, run, next, urgent, ended),
    patchLater,
    settled,
    writePodless,
    storeBranch,
    storeHosts,
    update,
    countUsage,
    fresh,
    freshRuns: (namespace) =>
      deps.issueRuns.list(namespace).map((each) => fresh(runKey(each), each)),
    forget: (key) => {
      statuses.forget(key);
      pending.delete(key);
    },
  };
}
