import type { Logger } from 'pino';
import type { KubeClient } from '../runtime/client.js';
import { PODS, resourcePath } from '../runtime/client.js';
import type { TokenUsage } from '../../workflow/events.js';
import { errorMessage } from '../../workflow/errors.js';
import { createRecordParser, type HookRecord } from '../events/records.js';
import { AGENT_CONTAINER_NAME } from '../../api/run-pod.js';

export interface FollowTarget {
  namespace: string;
  podName: string;
  /** namespace/name of the IssueRun. */
  runKey: string;
  slot: number;
  attempt: number;
}

/** What the controller knows from one run Pod's log. */
export interface PodLogState extends FollowTarget {
  /** Every hook record in log order; `seq` is the index. */
  hooks: HookRecord[];
  turns: number;
  usage?: TokenUsage;
  /** run_completed was read: the log holds nothing more of interest. */
  completed: boolean;
  streaming: boolean;
  /** The last stream ended (EOF or error) and the Pod was not running any more. */
  drained: boolean;
  lastError?: string;
  /** Reads that failed in a row; after a few the termination message has to do. */
  failures: number;
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
  ensure(target: FollowTarget, follow: boolean): PodLogState;
  get(namespace: string, podName: string): PodLogState | undefined;
  /** Every Pod log state of a run (also of Pods already deleted). */
  ofRun(runKey: string): PodLogState[];
  forget(namespace: string, podName: string): void;
  stopAll(): void;
}

const MAX_READ_FAILURES = 5;

const numberOr = (value: unknown, fallback: number): number =>
  typeof value === 'number' && Number.isFinite(value) ? value : fallback;

function usageFrom(message: unknown): TokenUsage | undefined {
  if (typeof message !== 'object' || message === null) return undefined;
  const usage = (message as { usage?: unknown }).usage;
  if (typeof usage !== 'object' || usage === null) return undefined;
  const record = usage as Record<string, unknown>;
  return {
    inputTokens: numberOr(record.inputTokens, 0),
    outputTokens: numberOr(record.outputTokens, 0),
    totalTokens: numberOr(record.totalTokens, 0),
  };
}

/**
 * Follows the logs of live run Pods (pods/log with follow=true, one stream per Pod) and
 * turns the runner's JSON lines into state plus callbacks: `onHook` for each new hook record
 * (the Event), `onProgress` whenever something the status shows has changed.
 */
export function createLogFollowers(options: {
  client: KubeClient;
  onHook: (state: PodLogState, record: HookRecord) => Promise<void>;
  onProgress: (state: PodLogState) => void;
  logger?: Logger;
}): LogFollowers {
  const states = new Map<string, PodLogState>();
  const controllers = new Map<string, AbortController>();
  const keyOf = (namespace: string, podName: string): string => `${namespace}/${podName}`;

  function read(state: PodLogState, follow: boolean): void {
    const key = keyOf(state.namespace, state.podName);
    const abort = new AbortController();
    controllers.set(key, abort);
    state.streaming = true;
    let seen = 0;
    const parser = createRecordParser({
      onRecord(record) {
        if (record.type === 'turn_completed') {
          state.turns = Math.max(
            state.turns,
            numberOr((record.message as { turn?: unknown })?.turn, state.turns + 1),
          );
          state.usage = usageFrom(record.message) ?? state.usage;
          options.onProgress(state);
        } else if (record.type === 'run_completed') {
          state.completed = true;
        }
      },
      onHook(record) {
        seen += 1;
        if (record.seq < state.hooks.length) return;
        state.hooks.push(record);
        state.flushed = state.flushed
          .then(() => options.onHook(state, record))
          .catch((error: unknown) => {
            options.logger?.warn(
              { err: errorMessage(error), pod: state.podName },
              'hook event failed',
            );
          });
        options.onProgress(state);
      },
    });
    options.client
      .stream({
        path: resourcePath(PODS, state.namespace, state.podName, 'log'),
        query: { container: AGENT_CONTAINER_NAME, follow },
        signal: abort.signal,
        onLine: (line) => parser.push(`${line}\n`),
      })
      .then(
        () => {
          parser.end();
          // A follow stream may end early (a cut connection): only a full read, or one that
          // saw run_completed, proves the log was read to its end.
          state.drained = !follow || state.completed;
          state.failures = 0;
          delete state.lastError;
        },
        (error: unknown) => {
          state.lastError = errorMessage(error);
          state.failures += 1;
          if (state.failures >= MAX_READ_FAILURES) state.drained = true;
          state.retryAt = Date.now() + Math.min(250 * 2 ** state.failures, 30_000);
          options.logger?.debug(
            { err: state.lastError, pod: state.podName, seen },
            'log stream ended',
          );
        },
      )
      .finally(() => {
        state.streaming = false;
        if (controllers.get(key) === abort) controllers.delete(key);
        options.onProgress(state);
      });
  }

  return {
    ensure(target, follow) {
      const key = keyOf(target.namespace, target.podName);
      let state = states.get(key);
      if (!state) {
        state = {
          ...target,
          hooks: [],
          turns: 0,
          failures: 0,
          retryAt: 0,
          completed: false,
          streaming: false,
          drained: false,
          flushed: Promise.resolve(),
        };
        states.set(key, state);
      }
      // A follow stream ends at the container's end; one more read closes any gap then.
      const due = Date.now() >= state.retryAt;
      if (due && !state.streaming && !state.completed && !(state.drained && !follow))
        read(state, follow);
      return state;
    },
    get(namespace, podName) {
      return states.get(keyOf(namespace, podName));
    },
    ofRun(runKey) {
      return [...states.values()].filter((state) => state.runKey === runKey);
    },
    forget(namespace, podName) {
      const key = keyOf(namespace, podName);
      controllers.get(key)?.abort();
      controllers.delete(key);
      states.delete(key);
    },
    stopAll() {
      for (const abort of controllers.values()) abort.abort();
      controllers.clear();
      states.clear();
    },
  };
}
