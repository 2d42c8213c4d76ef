import {
  FINISHED,
  RECONCILING,
  Reasons,
  STALLED,
  SUCCEEDED,
  elapsed,
  rfc3339,
  setCondition,
  type Condition,
  type HookStatus,
  type IssueRunStatus,
  type SlotStatus,
  type WorkspaceSourceStatus,
} from '../../api/index.js';
import type { TokenUsage } from '../../workflow/events.js';
import { hookStatusEntry, mergeHookEntries, type HookStatusEntry } from '../events/records.js';
import { lastHookRecords } from '../../runner/summary.js';
import type { PodLogState } from './log-follower.js';
import type { PodOutcome } from './pod-status.js';
import { awaitingSlots, waitingSlot } from './slot-waits.js';

/** What the reconciler saw of one slot. */
export interface SlotView {
  slot: number;
  /** The attempt this view is of (its Pod is `<run>-<slot>-<attempt>`). */
  attempt: number;
  /** While the slot waits to try again: when its next attempt starts. */
  nextAttemptTime?: string | undefined;
  podName: string;
  /** null while the Pod does not exist yet. */
  outcome: PodOutcome | null;
  /** The SSH worker of this attempt, when chosen just now (else the status keeps it). */
  host?: string | undefined;
  /** When the Pod was created: the start of the attempt's start-up (firstTurnAfterMs). */
  podCreatedAt?: string | undefined;
  log?: PodLogState | undefined;
}

/** How the run stands, as the conditions say it. */
export type RunState =
  | { kind: 'progressing'; phase: 'Pending' | 'Running'; reason: string; message: string }
  | { kind: 'stalled'; reason: string; message: string }
  | { kind: 'finished'; succeeded: boolean; reason: string; message: string };

const STATUS_ORDER = { started: 0, completed: 1, failed: 1 } as const;

/** Sets the four IssueRun conditions from the run state. */
export function runConditions(
  current: readonly Condition[] | undefined,
  state: RunState,
  generation: number | undefined,
  now: Date,
): Condition[] {
  const observedGeneration = generation ?? 0;
  const set = (
    list: Condition[],
    type: string,
    status: Condition['status'],
    reason: string,
    message: string,
  ) => setCondition(list, { type, status, reason, message, observedGeneration }, now);
  let list = [...(current ?? [])];
  if (state.kind === 'finished') {
    list = set(list, SUCCEEDED, state.succeeded ? 'True' : 'False', state.reason, state.message);
    list = set(list, FINISHED, 'True', state.reason, state.message);
    list = set(list, RECONCILING, 'False', Reasons.Reconciled, '');
    // kstatus (Flux, kpt) reads Stalled=True as Failed: a run that failed is not healthy.
    list = state.succeeded
      ? set(list, STALLED, 'False', Reasons.Reconciled, '')
      : set(list, STALLED, 'True', state.reason, state.message);
  } else if (state.kind === 'stalled') {
    list = set(list, SUCCEEDED, 'Unknown', state.reason, state.message);
    list = set(list, FINISHED, 'False', state.reason, state.message);
    list = set(list, RECONCILING, 'False', state.reason, state.message);
    list = set(list, STALLED, 'True', state.reason, state.message);
  } else {
    list = set(list, SUCCEEDED, 'Unknown', state.reason, state.message);
    list = set(list, FINISHED, 'False', state.reason, state.message);
    list = set(list, RECONCILING, 'True', Reasons.Progressing, state.message);
    list = set(list, STALLED, 'False', Reasons.Progressing, '');
  }
  return list;
}

/** The run's verdict from its slots: it succeeds when any slot does, once all have ended. */
export function runStateFromSlots(slots: readonly SlotView[]): RunState {
  const ensemble = slots.length > 1;
  const prefix = (view: SlotView): string => (ensemble ? `slot ${view.slot}: ` : '');
  const allFinished = slots.length > 0 && slots.every((view) => view.outcome?.finished === true);
  if (allFinished) {
    const winner = slots.find((view) => view.outcome?.phase === 'Succeeded');
    if (winner) {
      return {
        kind: 'finished',
        succeeded: true,
        reason: Reasons.Succeeded,
        message: `${prefix(winner)}the run succeeded`,
      };
    }
    const first = slots[0] as SlotView;
    const outcome = first.outcome as PodOutcome;
    return {
      kind: 'finished',
      succeeded: false,
      reason: outcome.reason,
      message: `${prefix(first)}${outcome.message}`,
    };
  }
  const running = slots.some((view) => view.outcome?.phase === 'Running' || view.outcome?.finished);
  const waiting = slots.find((view) => view.outcome?.phase === 'Pending' && view.outcome.message);
  return running
    ? {
        kind: 'progressing',
        phase: 'Running',
        reason: Reasons.Running,
        message: 'the runner is running',
      }
    : {
        kind: 'progressing',
        phase: 'Pending',
        reason:
          waiting?.outcome?.reason === 'RetryScheduled' ||
          waiting?.outcome?.reason === 'ContinuationScheduled' ||
          waiting?.outcome?.reason === 'AwaitingReview' ||
          waiting?.outcome?.reason === 'Queued'
            ? waiting.outcome.reason
            : Reasons.Pending,
        message: waiting
          ? `${prefix(waiting)}${waiting.outcome?.message}`
          : 'waiting for the run Pod',
      };
}

/**
 * status.hooks from what is persisted, the logs read so far, and the termination summaries
 * (which close any gap left by a log that could not be read whole; the entries they add
 * carry no output). A hook's entry only moves forward (started → completed/failed), so a
 * log re-read from its start after a restart never regresses the status.
 */
export function hookEntries(
  persisted: readonly HookStatus[],
  slots: readonly SlotView[],
): HookStatus[] {
  let entries: HookStatusEntry[] = mergeHookEntries([], persisted as HookStatusEntry[]);
  const advance = (entry: HookStatusEntry): void => {
    const known = entries.find(
      (candidate) => candidate.slot === entry.slot && candidate.name === entry.name,
    );
    if (known && STATUS_ORDER[known.status] > STATUS_ORDER[entry.status]) return;
    if (
      known &&
      known.status !== 'started' &&
      entry.output === undefined &&
      known.output !== undefined
    )
      return;
    entries = mergeHookEntries(entries, [entry]);
  };
  for (const view of slots) {
    for (const record of view.log?.hooks ?? []) advance(hookStatusEntry(record.message, view.slot));
  }
  for (const view of slots) {
    const summary = view.outcome?.summary;
    for (const hook of summary ? lastHookRecords(summary) : []) {
      const entry: HookStatusEntry = {
        slot: view.slot,
        name: hook.name,
        status: hook.status,
        exitCode: hook.exitCode,
      };
      if (hook.durationMs !== undefined) entry.durationMs = hook.durationMs;
      advance(entry);
    }
  }
  return entries;
}

const addUsage = (
  total: TokenUsage | undefined,
  more: TokenUsage | undefined,
): TokenUsage | undefined =>
  more
    ? {
        inputTokens: (total?.inputTokens ?? 0) + more.inputTokens,
        outputTokens: (total?.outputTokens ?? 0) + more.outputTokens,
        totalTokens: (total?.totalTokens ?? 0) + more.totalTokens,
      }
    : total;

/** Pod created → the agent's first turn, in ms; undefined until both are known. */
function startDurationMs(view: SlotView): number | undefined {
  const created = Date.parse(view.podCreatedAt ?? '');
  const firstTurn = Date.parse(view.log?.firstTurnAt ?? '');
  if (Number.isNaN(created) || Number.isNaN(firstTurn)) return undefined;
  // Two clocks (the node's and the apiserver's): a skew never makes it negative.
  return Math.max(0, firstTurn - created);
}

export function slotStatuses(
  slots: readonly SlotView[],
  recorded: readonly SlotStatus[] = [],
): SlotStatus[] {
  return slots.map((view) => {
    const summary = view.outcome?.summary;
    const turns = summary?.turns ?? view.log?.turns ?? 0;
    const usage = summary?.usage ?? view.log?.usage;
    const status: SlotStatus = {
      slot: view.slot,
      phase: view.outcome?.phase ?? 'Pending',
      reason: view.outcome?.reason ?? Reasons.Pending,
      message: view.outcome?.message ?? 'the Pod is being created',
      podName: view.podName,
      attempt: view.attempt,
      turns,
    };
    // The host stays with its attempt: recorded once (worker-host.ts), never chosen again.
    const host =
      view.host ??
      recorded.find((entry) => entry.slot === view.slot && entry.attempt === view.attempt)?.host;
    if (host !== undefined) status.host = host;
    if (view.nextAttemptTime) status.nextAttemptTime = view.nextAttemptTime;
    // Kept once known: the log state of a deleted Pod is forgotten, the status is not.
    const firstTurnAfterMs =
      startDurationMs(view) ??
      recorded.find((entry) => entry.slot === view.slot && entry.attempt === view.attempt)
        ?.firstTurnAfterMs;
    if (firstTurnAfterMs !== undefined) status.firstTurnAfterMs = firstTurnAfterMs;
    if (usage) status.usage = usage;
    return status;
  });
}

/** The whole status of a run that has Pods (or is about to). */
export function runStatus(options: {
  current: IssueRunStatus | undefined;
  generation: number | undefined;
  attempt: number;
  slots: readonly SlotView[];
  state: RunState;
  configDigest?: string | undefined;
  inputsConfigMap?: string | undefined;
  /** workspace.git's branch, once worked out (kept from then on: see git-branch.ts). */
  branch?: string | undefined;
  /** What the workspace started from, recorded once (later attempts reuse the claim). */
  workspaceSource?: WorkspaceSourceStatus | undefined;
  now: Date;
}): IssueRunStatus {
  const { current, state, now } = options;
  const slots = awaitingSlots(slotStatuses(options.slots, current?.slots), current?.inbox?.pending);
  const status: IssueRunStatus = {
    ...current,
    observedGeneration: options.generation ?? 0,
    phase:
      state.kind === 'finished'
        ? state.succeeded
          ? 'Succeeded'
          : 'Failed'
        : state.kind === 'stalled'
          ? 'Pending'
          : state.phase,
    reason: state.reason,
    message: state.message,
    attempt: Math.max(options.attempt, ...options.slots.map((view) => view.attempt)),
    conditions: runConditions(current?.conditions, state, options.generation, now),
  };
  if (options.slots.length > 0) {
    status.startTime = current?.startTime ?? rfc3339(now);
    status.podName = options.slots[options.slots.length - 1]?.podName;
    status.slots = slots;
    // `kubectl get issueruns` shows the run's reason: a run whose agent waits for a person says so.
    const waiting = state.kind === 'progressing' && state.phase === 'Running' && waitingSlot(slots);
    if (waiting) {
      status.reason = waiting.reason;
      status.message = `slot ${waiting.slot}: ${waiting.message ?? ''}`;
    }
    // A slot that moved on to a new attempt starts its hook history afresh.
    const recordedAttempt = (slot: number) =>
      current?.slots?.find((entry) => entry.slot === slot)?.attempt;
    const moved = new Set(
      options.slots
        .filter((view) => (recordedAttempt(view.slot) ?? view.attempt) !== view.attempt)
        .map((view) => view.slot),
    );
    const persisted = (current?.hooks ?? []).filter((hook) => !moved.has(hook.slot));
    status.hooks = hookEntries(persisted, options.slots);
    status.turn = Math.max(0, ...slots.map((slot) => slot.turns ?? 0));
    const usage = slots.reduce<TokenUsage | undefined>(
      (total, slot) => addUsage(total, slot.usage),
      undefined,
    );
    if (usage) status.usage = usage;
  }
  if (options.configDigest) status.configDigest = options.configDigest;
  if (options.inputsConfigMap) status.inputsConfigMap = options.inputsConfigMap;
  if (options.branch && !current?.git?.branch) status.git = { branch: options.branch };
  if (options.workspaceSource && !current?.workspaceSource) {
    status.workspaceSource = options.workspaceSource;
  }
  if (state.kind === 'finished') {
    status.completionTime = current?.completionTime ?? rfc3339(now);
    // The Duration column: kubectl cannot subtract two times, so the end writes it once.
    const took = status.startTime ? elapsed(status.startTime, status.completionTime) : undefined;
    if (took !== undefined) status.duration = took;
  }
  return status;
}

/** A progressing state (waiting or running) with its reason. */
export const runState = (
  phase: 'Pending' | 'Running',
  reason: string,
  message: string,
): RunState => ({
  kind: 'progressing',
  phase,
  reason,
  message,
});
