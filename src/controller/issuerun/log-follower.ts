import type { Logger } from 'pino';
import type { KubeClient } from '../runtime/client.js';
import { KubeApiError, PODS, isNotFound, resourcePath } from '../runtime/client.js';
import { exponentialDelay } from '../runtime/backoff.js';
import type { HookExecutionMessage, TokenUsage } from '../../workflow/events.js';
import { parseTokenUsage } from '../../workflow/usage-record.js';
import { errorMessage } from '../../workflow/errors.js';
import { createRecordParser, type GitRecord, type HookRecord } from '../events/records.js';
import { AGENT_CONTAINER_NAME } from '../../api/run-pod.js';
import type { TerminationSummary } from '../../runner/summary.js';
import { MAX_LOG_LINE_LENGTH, type PodLogLineSink, type PodLogSource } from '../shared/log-sink.js';

/** The Pod whose log is followed (see PodLogSource). */
export type FollowTarget = PodLogSource;

/** What the controller knows from one run Pod's log. */
export interface PodLogState extends FollowTarget {
  /** Every hook record in log order; `seq` is the index. */
  hooks: HookRecord[];
  /** git_workspace records read so far (their Events are written in order, like hooks'). */
  gitRecords: number;
  turns: number;
  /** The `at` of the attempt's first turn_started record: when the agent began. */
  firstTurnAt?: string;
  usage?: TokenUsage;
  /** run_completed was read: the log holds nothing more of interest. */
  completed: boolean;
  streaming: boolean;
  /** The last stream ended (EOF or error) and the Pod was not running any more. */
  drained: boolean;
  lastError?: string;
  /** Reads that failed in a row. */
  failures: number;
  /** When the first of them failed (ms since epoch): past LOG_READ_GIVE_UP_MS, give up. */
  failingSince?: number;
  /**
   * When the apiserver first answered a read of this ended Pod's log with an error (it is
   * up, the log is not): past `logLostAfterMs` of such answers the log counts as lost.
   */
  refusedSince?: number;
  /** The Pod's termination summary, once it ended: what a lost log is rebuilt from. */
  summary?: TerminationSummary;
  /** No new read before this time (ms since epoch): backoff after failures. */
  retryAt: number;
  /** Resolves when every Event for the records read so far has been written. */
  flushed: Promise<void>;
}

export interface LogFollowers {
  /**
   * Reads the Pod's agent log (following it while `follow`), unless a stream is open or the
   * log was read to its end. Records already known are skipped on a re-read, by position.
   */
  ensure(target: FollowTarget, follow: boolean, summary?: TerminationSummary | null): PodLogState;
  get(podUid: string): PodLogState | undefined;
  /** Every Pod log state of a run, by the run's uid (also of Pods already deleted). */
  ofRun(runUid: string): PodLogState[];
  /** Drops (and stops reading) every log of a run. */
  forgetRun(runUid: string): void;
  /**
   * Stops reading a Pod's log for good, with what was read so far: its node is lost, and
   * nothing more will ever be served (its records are owed to nobody).
   */
  abandon(podUid: string): PodLogState | undefined;
  stopAll(): void;
}

/**
 * How long reads may keep failing before the log counts as read (the termination message
 * then closes the gap). An apiserver outage is shorter: the reads resume after it, and the
 * records read then still get their Events.
 */
export const LOG_READ_GIVE_UP_MS = 10 * 60_000;
/** The wait after the first failed read (it doubles with each failure in a row) and the longest. */
export const LOG_READ_RETRY_BASE_MS = 250;
export const LOG_READ_RETRY_MAX_MS = 5000;
/**
 * How long the apiserver may answer reads of an ended Pod's log with errors (the kubelet
 * away, the log file gone) before the log counts as lost and its records are rebuilt from
 * the termination summary. A kubelet restart is shorter.
 */
export const LOG_LOST_AFTER_MS = 60_000;
/**
 * How long a follow stream may stay open after its Pod is seen ended. The kubelet ends a
 * follow at the container's end, so one open longer is hung (a connection cut without a
 * reset, through an apiserver that went away): it is cut, and a plain read takes the log.
 */
export const FOLLOW_AFTER_END_MS = 15_000;

const numberOr = (value: unknown, fallback: number): number =>
  typeof value === 'number' && Number.isFinite(value) ? value : fallback;

function usageFrom(message: unknown): TokenUsage | undefined {
  if (typeof message !== 'object' || message === null) return undefined;
  return parseTokenUsage((message as { usage?: unknown }).usage);
}

/**
 * Follows the logs of live run Pods (pods/log with follow=true, one stream per Pod) and
 * turns the runner's JSON lines into state plus callbacks: `onHook` for each new hook record
 * (the Event), `onProgress` whenever something the status shows has changed.
 */
// eslint-disable-next-line max-lines-per-function -- a factory: the closures it returns share the state it keeps
export function createLogFollowers(options: {
  client: KubeClient;
  onHook: (state: PodLogState, record: HookRecord) => Promise<void>;
  /** For each new git_workspace record (its Event); none when absent. */
  onGit?: (state: PodLogState, record: GitRecord) => Promise<void>;
  onProgress: (state: PodLogState) => void;
  /** When a Pod's log is first followed by this controller (a restart meets it anew). */
  onFollow?: (state: PodLogState) => void;
  /** Each time a turn's record reports the Pod's usage (cumulative, so re-reads repeat it). */
  onUsage?: (state: PodLogState, usage: TokenUsage) => void;
  /** Every line read, at its byte offset in the log (the archive); none when absent. */
  onLine?: PodLogLineSink;
  logger?: Logger;
  logLostAfterMs?: number;
}): LogFollowers {
  const logLostAfterMs = options.logLostAfterMs ?? LOG_LOST_AFTER_MS;
  const states = new Map<string, PodLogState>();
  /** Queues an Event write behind the earlier ones: `flushed` waits for all of them. */
  const queueEvent = (state: PodLogState, write: () => Promise<void>, what: string): void => {
    state.flushed = state.flushed.then(write).catch((error: unknown) => {
      options.logger?.warn({ err: errorMessage(error), pod: state.podName }, `${what} failed`);
    });
  };
  const addRecord = (state: PodLogState, record: HookRecord): void => {
    state.hooks.push(record);
    queueEvent(state, () => options.onHook(state, record), 'hook event');
    options.onProgress(state);
  };
  /**
   * A log that ended before all its records were read (lost, or cut short) gets the rest from
   * the termination summary's trail: the same positions, so the same Event names, each once.
   */
  const recoverFromSummary = (state: PodLogState): void => {
    const trail = state.summary?.trail ?? [];
    if (!state.drained || state.completed || state.hooks.length >= trail.length) return;
    for (const entry of trail.slice(state.hooks.length)) {
      const message: HookExecutionMessage = {
        status: entry.status,
        hookName: entry.name,
        command: '',
        cwd: '',
        slot: state.slot,
        ...(entry.status === 'started' ? {} : { exitCode: entry.exitCode }),
        ...(entry.durationMs === undefined ? {} : { durationMs: entry.durationMs }),
        ...(entry.error === undefined ? {} : { error: entry.error }),
      };
      addRecord(state, { seq: entry.seq, message, recovered: true });
    }
    options.logger?.info(
      { pod: state.podName, recovered: trail.length, err: state.lastError },
      'hook records recovered from the termination message',
    );
  };
  const controllers = new Map<string, AbortController>();
  /** The open follow streams: when their Pod was first seen ended, and whether we cut them. */
  const follows = new Map<string, { endSeenAt?: number; cut: boolean }>();
  // eslint-disable-next-line max-lines-per-function -- one log read's callbacks share its state
  function read(state: PodLogState, follow: boolean): void {
    const key = state.podUid;
    const abort = new AbortController();
    controllers.set(key, abort);
    const followed = { cut: false };
    if (follow) follows.set(key, followed);
    state.streaming = true;
    let seen = 0;
    /** Bytes of this read so far: each read starts at the log's start. */
    let offset = 0;
    const parser = createRecordParser({
      onRecord(record) {
        if (record.type === 'turn_started') {
          const at = (record as { at?: unknown }).at;
          if (state.firstTurnAt === undefined && typeof at === 'string') state.firstTurnAt = at;
        } else if (record.type === 'turn_completed') {
          state.turns = Math.max(
            state.turns,
            numberOr((record.message as { turn?: unknown })?.turn, state.turns + 1),
          );
          const usage = usageFrom(record.message);
          state.usage = usage ?? state.usage;
          if (usage) options.onUsage?.(state, usage);
          options.onProgress(state);
        } else if (record.type === 'turn_failed' || record.type === 'turn_cancelled') {
          // A turn stopped (by a budget, say) still spent what it reports.
          const usage = usageFrom(record.message);
          if (usage) {
            state.usage = usage;
            options.onUsage?.(state, usage);
            options.onProgress(state);
          }
        } else if (record.type === 'run_completed') {
          state.completed = true;
        }
      },
      onHook(record) {
        seen += 1;
        if (record.seq < state.hooks.length) return;
        addRecord(state, record);
      },
      onGit(record) {
        // A re-read from the start skips what was read before, by position.
        if (record.seq < state.gitRecords) return;
        state.gitRecords = record.seq + 1;
        const { onGit } = options;
        if (onGit) queueEvent(state, () => onGit(state, record), 'git event');
      },
    });
    options.client
      .stream({
        path: resourcePath(PODS, state.namespace, state.podName, 'log'),
        query: { container: AGENT_CONTAINER_NAME, follow },
        signal: abort.signal,
        maxLineLength: MAX_LOG_LINE_LENGTH,
        onLine: (line) => {
          options.onLine?.(state, line, offset);
          offset += Buffer.byteLength(line) + 1;
          parser.push(`${line}\n`);
        },
      })
      .then(
        () => {
          parser.end();
          // A follow stream may end early (a cut connection): only a full read, or one that
          // saw run_completed, proves the log was read to its end.
          state.drained = !follow || state.completed;
          state.failures = 0;
          delete state.failingSince;
          delete state.refusedSince;
          delete state.lastError;
          recoverFromSummary(state);
        },
        (error: unknown) => {
          // A hung follow we cut is no failure: the plain read that follows takes the log.
          if (followed.cut) return;
          const now = Date.now();
          state.lastError = errorMessage(error);
          state.failures += 1;
          state.failingSince ??= now;
          // An ended Pod whose log the apiserver keeps refusing (it is up; the kubelet or
          // the log file is not) has lost it.
          if (state.summary && error instanceof KubeApiError) state.refusedSince ??= now;
          else delete state.refusedSince;
          // 404: the Pod (and its log) is gone; nothing more will be read. Anything else
          // (an apiserver or kubelet away) passes: keep trying, for a while.
          if (
            isNotFound(error) ||
            now - state.failingSince > LOG_READ_GIVE_UP_MS ||
            (state.refusedSince !== undefined && now - state.refusedSince >= logLostAfterMs)
          ) {
            state.drained = true;
            recoverFromSummary(state);
          }
          state.retryAt =
            now + exponentialDelay(state.failures, LOG_READ_RETRY_BASE_MS, LOG_READ_RETRY_MAX_MS);
          options.logger?.debug(
            { err: state.lastError, pod: state.podName, seen },
            'log stream ended',
          );
        },
      )
      .finally(() => {
        state.streaming = false;
        if (controllers.get(key) === abort) controllers.delete(key);
        if (follows.get(key) === followed) follows.delete(key);
        options.onProgress(state);
      });
  }

  /** The Pod has ended: its follow stream, if one is still open after FOLLOW_AFTER_END_MS, goes. */
  function cutHungFollow(podUid: string): void {
    const open = follows.get(podUid);
    if (!open) return;
    const now = Date.now();
    open.endSeenAt ??= now;
    if (now - open.endSeenAt < FOLLOW_AFTER_END_MS) return;
    open.cut = true;
    options.logger?.info({ podUid }, 'follow stream still open after its Pod ended; reading again');
    controllers.get(podUid)?.abort();
  }

  return {
    ensure(target, follow, summary) {
      const key = target.podUid;
      let state = states.get(key);
      if (!state) {
        state = {
          ...target,
          hooks: [],
          gitRecords: 0,
          turns: 0,
          failures: 0,
          retryAt: 0,
          completed: false,
          streaming: false,
          drained: false,
          flushed: Promise.resolve(),
        };
        states.set(key, state);
        options.onFollow?.(state);
      }
      if (summary) {
        state.summary = summary;
        recoverFromSummary(state);
      }
      if (!follow) cutHungFollow(key);
      // A follow stream ends at the container's end; one more read closes any gap then.
      const due = Date.now() >= state.retryAt;
      if (due && !state.streaming && !state.completed && !(state.drained && !follow))
        read(state, follow);
      return state;
    },
    get(podUid) {
      return states.get(podUid);
    },
    ofRun(runUid) {
      return [...states.values()].filter((state) => state.runUid === runUid);
    },
    forgetRun(runUid) {
      for (const state of [...states.values()]) {
        if (state.runUid !== runUid) continue;
        controllers.get(state.podUid)?.abort();
        controllers.delete(state.podUid);
        states.delete(state.podUid);
      }
    },
    abandon(podUid) {
      const state = states.get(podUid);
      if (!state) return undefined;
      controllers.get(podUid)?.abort();
      controllers.delete(podUid);
      state.streaming = false;
      state.drained = true;
      return state;
    },
    stopAll() {
      for (const abort of controllers.values()) abort.abort();
      controllers.clear();
      states.clear();
    },
  };
}
