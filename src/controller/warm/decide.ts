import {
  AGENT_CONTAINER_NAME,
  decodeWarmUpResult,
  warmRefreshMs,
  type WarmStatus,
  type WarmUpResult,
  type Workflow,
} from '../../api/index.js';
import { exponentialDelay } from '../runtime/backoff.js';
import type { PodObject } from '../shared/resources.js';
import { DEFAULT_POD_STATUS_OPTIONS, waitingProblem } from '../shared/pod-waiting.js';
import { warmName } from './warm-names.js';

/** A failed warm-up is tried again after base·2^(failures-1), at most the cap. */
export const WARM_RETRY = { baseMs: 30_000, maxMs: 10 * 60_000 } as const;

export type PreparedResult = Extract<WarmUpResult, { outcome: 'prepared' }>;

/** The VolumeSnapshot of the warm-up being built, when it was looked up. */
export type SnapshotState =
  { kind: 'absent' } | { kind: 'present'; readyToUse: boolean; error?: string | undefined };

/** What the warm controller knows of a Workflow's warm workspace, at `now`. */
export interface WarmFacts {
  workflow: Workflow;
  /** status.warm as freshly as the controller knows it (its own last write, or the cache). */
  warm: WarmStatus | undefined;
  /** The digest of what shapes the tree (config-digest.ts); undefined: no config loaded yet. */
  configDigest: string | undefined;
  /** workspace.git is on: a warm snapshot holds a commit, and refreshes check the head. */
  hasGit: boolean;
  /** Why the Workflow cannot be warmed, known without asking the cluster; null: it can. */
  unsupported: string | null;
  /** The Pod named status.warm.building, from the cache. */
  pod: PodObject | undefined;
  /** The controller saw that Pod before: its absence now means it was deleted. */
  podSeen: boolean;
  /** The snapshot named status.warm.building; undefined when not looked up. */
  snapshot: SnapshotState | undefined;
  /** Warm-ups failed in a row, and when the last one was recorded (ms); 0 and undefined: none. */
  failures: number;
  lastFailureAt: number | undefined;
  now: number;
}

/** A new warm-up: record build and building first, then make its objects. */
export interface StartDecision {
  action: 'start';
  build: number;
  name: string;
  /** A head check of the default branch against this commit; absent: a full warm-up. */
  unlessCommit?: string;
  why: string;
}

export type WarmOutcome =
  | { outcome: 'prepared'; result: PreparedResult }
  | { outcome: 'unchanged'; commit: string }
  /** A head check found the branch moved on: the full warm-up `then` follows at once. */
  | { outcome: 'moved'; commit: string; then: StartDecision }
  | { outcome: 'failed'; message: string };

export type WarmDecision =
  /** spec.workspace.warm is off: collect the warm snapshots, then drop status.warm. */
  | { action: 'off' }
  /** No configuration to warm with yet (the Workflow reconciler has not recorded one). */
  | { action: 'waitConfig' }
  | { action: 'refuse'; message: string }
  | StartDecision
  /** The warm-up is recorded but its Pod is not made (or not seen yet): make its objects. */
  | { action: 'create'; name: string; unlessCommit?: string }
  /** The Pod has not ended; look again after recheckAfterMs (absent: when it changes). */
  | { action: 'waitPod'; name: string; recheckAfterMs?: number }
  /** The Pod prepared the tree: snapshot its claim. */
  | { action: 'snapshot'; name: string; result: PreparedResult }
  | { action: 'waitSnapshot'; name: string; error?: string | undefined }
  /** The warm-up is over: record its outcome, then delete its objects. */
  | ({ action: 'record'; name: string } & WarmOutcome)
  /** Nothing to do; look again after requeueAfterMs (absent: when something changes). */
  | { action: 'idle'; requeueAfterMs?: number };

/** The result in the agent container's termination message, or null. */
export function warmUpResultOf(pod: PodObject): WarmUpResult | null {
  const agent = pod.status?.containerStatuses?.find((c) => c.name === AGENT_CONTAINER_NAME);
  return decodeWarmUpResult(agent?.state?.terminated?.message);
}

const ended = (pod: PodObject): boolean =>
  pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';

/** What a Pod that ended without a result is said to have done. */
function endedWithout(pod: PodObject): string {
  const agent = pod.status?.containerStatuses?.find((c) => c.name === AGENT_CONTAINER_NAME);
  const terminated = agent?.state?.terminated;
  const how = terminated
    ? `${terminated.reason ?? 'terminated'}, exit code ${terminated.exitCode}`
    : (pod.status?.reason ?? pod.status?.message ?? 'no container status');
  return `warm-up Pod ${pod.metadata?.name ?? ''} ended ${pod.status?.phase ?? ''} with no result in its termination message (${how})`;
}

/**
 * A warm-up Pod that has not ended: failed once it cannot start for longer than a run Pod may
 * (an image that does not pull, a missing Secret key, no node that fits), so that a Workflow
 * with a bad image says so and its runs are not held by a warm-up that never comes.
 */
function startingVerdict(pod: PodObject, name: string, now: number): WarmDecision {
  const problem = waitingProblem(pod);
  if (problem === null) return { action: 'waitPod', name };
  const grace =
    problem.grace === 'imagePull'
      ? DEFAULT_POD_STATUS_OPTIONS.imagePullGraceMs
      : DEFAULT_POD_STATUS_OPTIONS.pendingTimeoutMs;
  const stamp: unknown = pod.metadata?.creationTimestamp;
  // A string from the cache's JSON, a Date from a typed client.
  const created =
    stamp instanceof Date ? stamp.getTime() : typeof stamp === 'string' ? Date.parse(stamp) : NaN;
  const age = Number.isNaN(created) ? 0 : now - created;
  if (!problem.immediate && age < grace) {
    return { action: 'waitPod', name, recheckAfterMs: grace - age };
  }
  const message = `warm-up Pod ${name} cannot start (${problem.reason}): ${problem.message}`;
  return { action: 'record', name, outcome: 'failed', message };
}

/** The warm-up in progress, from its Pod and snapshot. */
function decideBuilding(facts: WarmFacts, name: string): WarmDecision {
  const { pod } = facts;
  if (!pod) {
    if (!facts.podSeen) {
      const unlessCommit = refreshCommit(facts);
      return { action: 'create', name, ...(unlessCommit ? { unlessCommit } : {}) };
    }
    return {
      action: 'record',
      name,
      outcome: 'failed',
      message: `warm-up Pod ${name} was deleted before it ended`,
    };
  }
  if (!ended(pod)) return startingVerdict(pod, name, facts.now);
  const result = warmUpResultOf(pod);
  if (result === null)
    return { action: 'record', name, outcome: 'failed', message: endedWithout(pod) };
  switch (result.outcome) {
    case 'failed':
      return {
        action: 'record',
        name,
        outcome: 'failed',
        message: `${result.errorCode}: ${result.error}`,
      };
    case 'unchanged':
      return { action: 'record', name, outcome: 'unchanged', commit: result.commit };
    case 'moved': {
      const build = (facts.warm?.build ?? 0) + 1;
      const then: StartDecision = {
        action: 'start',
        build,
        name: warmName(facts.workflow.metadata.name ?? '', build),
        why: `the default branch moved on from ${facts.warm?.commit ?? 'its last commit'} to ${result.commit}`,
      };
      return { action: 'record', name, outcome: 'moved', commit: result.commit, then };
    }
    case 'prepared': {
      const snapshot = facts.snapshot;
      if (snapshot === undefined || snapshot.kind === 'absent') {
        return { action: 'snapshot', name, result };
      }
      if (!snapshot.readyToUse) return { action: 'waitSnapshot', name, error: snapshot.error };
      return { action: 'record', name, outcome: 'prepared', result };
    }
  }
}

/**
 * The commit a warm-up checks the head against (--unless-commit): the snapshot's, when one is
 * ready and still of this configuration; undefined for a full warm-up.
 */
export function refreshCommit(facts: WarmFacts): string | undefined {
  const { warm } = facts;
  if (!facts.hasGit || warm?.snapshot === undefined) return undefined;
  return warm.configDigest === facts.configDigest ? warm.commit : undefined;
}

/** When the next warm-up may start after failures: the shared backoff from the last one. */
function retryAt(facts: WarmFacts): number {
  if (facts.failures <= 0 || facts.lastFailureAt === undefined) return facts.now;
  return (
    facts.lastFailureAt + exponentialDelay(facts.failures - 1, WARM_RETRY.baseMs, WARM_RETRY.maxMs)
  );
}

/**
 * What to do next for a Workflow's warm workspace (pure): the warm-up in progress first (one
 * at a time), then whether warm can be on at all, then whether a warm-up is due: a full one
 * without a ready snapshot or when the configuration that shapes it changed; one that checks
 * the default branch's head (--unless-commit) once refreshInterval has passed since the last
 * check. Failed warm-ups wait out the backoff; the last good snapshot stays in force.
 */
export function decideWarm(facts: WarmFacts): WarmDecision {
  const spec = facts.workflow.spec.workspace?.warm;
  const { warm } = facts;
  if (!spec) return { action: 'off' };
  if (warm?.building !== undefined) return decideBuilding(facts, warm.building);
  if (facts.unsupported !== null) return { action: 'refuse', message: facts.unsupported };
  if (facts.configDigest === undefined) return { action: 'waitConfig' };
  const build = (warm?.build ?? 0) + 1;
  const name = warmName(facts.workflow.metadata.name ?? '', build);
  const retry = retryAt(facts);
  const due = (why: string, unlessCommit?: string): WarmDecision =>
    facts.now < retry
      ? { action: 'idle', requeueAfterMs: retry - facts.now }
      : { action: 'start', build, name, why, ...(unlessCommit ? { unlessCommit } : {}) };
  if (warm?.snapshot === undefined) return due('no warm snapshot is ready yet');
  if (warm.configDigest !== facts.configDigest) {
    return due('the configuration that shapes the workspace changed');
  }
  // Without workspace.git the tree has no head to follow: only a config change rebuilds it.
  const commit = refreshCommit(facts);
  if (commit === undefined) return { action: 'idle' };
  const refreshMs = warmRefreshMs(spec.refreshInterval) ?? warmRefreshMs(undefined) ?? 0;
  const checkedAt = Date.parse(warm.checkedAt ?? '');
  const nextCheck = Number.isFinite(checkedAt) ? checkedAt + refreshMs : facts.now;
  if (facts.now < nextCheck) return { action: 'idle', requeueAfterMs: nextCheck - facts.now };
  return due(`refreshInterval passed: is the default branch still at ${commit}?`, commit);
}
