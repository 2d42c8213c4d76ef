import type { KubeClient } from '../runtime/client.js';
import { isConflict, statusOf } from '../runtime/client.js';
import { exponentialDelay, sleep } from '../runtime/backoff.js';
import type { GitWorkspaceMessage, HookExecutionMessage } from '../../workflow/events.js';
import { ISSUERUN_KIND } from '../../api/index.js';
import { gitEventName, hookEventName } from '../shared/object-names.js';
import type { ObjectIdentity } from '../shared/owner.js';
import { gitEvent, hookEventNote, hookEventReason } from './records.js';
import { type LifecycleEvent, ownObjectRef } from './lifecycle.js';
import { errorMessage } from '../../workflow/errors.js';

export const REPORTING_CONTROLLER = 'lorenz.dev/controller';

/** events.k8s.io MicroTime: RFC 3339 with six fractional digits. */
export const microTime = (date: Date): string =>
  date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

export interface HookEventInput {
  run: ObjectIdentity;
  podName: string;
  slot: number;
  attempt: number;
  /** Position of the record in the Pod's log: names the Event. */
  seq: number;
  message: HookExecutionMessage;
  /** Rebuilt from the termination message (see HookRecord.recovered). */
  recovered?: boolean;
  now: Date;
}

export interface GitEventInput {
  run: ObjectIdentity;
  podName: string;
  slot: number;
  attempt: number;
  /** Position of the record among the Pod's git records: names the Event. */
  seq: number;
  message: GitWorkspaceMessage;
  now: Date;
}

export interface EventRecorder {
  /** Creates the Event of a hook record; false when it already existed (a replay). */
  recordHook(input: HookEventInput): Promise<boolean>;
  /** Creates the Event of a git_workspace record; false when it already existed. */
  recordGit(input: GitEventInput): Promise<boolean>;
}

interface EventBody {
  name: string;
  run: ObjectIdentity;
  podName: string;
  action: string;
  reason: string;
  type: 'Normal' | 'Warning';
  note: string;
  now: Date;
}

/**
 * How long an Event write is tried again while the apiserver cannot take it (restarting,
 * etcd away, overloaded). The run's verdict and its next attempt wait for its Events (the
 * reconciler requeues meanwhile, holding no worker), so this also bounds how long an outage
 * can hold them. Each Event has its own name, so a write that did go through before the
 * connection broke meets 409 when tried again, and is not doubled.
 */
export const EVENT_RETRY = { baseMs: 250, maxMs: 5000, deadlineMs: 60_000 } as const;

/** No answer (connection refused or reset), 429, or a 5xx: the apiserver may take it later. */
const retryable = (error: unknown): boolean => {
  const status = statusOf(error);
  return status === undefined || status === 429 || status >= 500;
};

/** The events.k8s.io/v1 Event both writers below create, stamped `now`. */
function eventObject(
  event: Omit<LifecycleEvent, 'reason'> & { reason: string },
  reportingInstance: string,
  now: Date,
) {
  return {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { name: event.name, namespace: event.namespace },
    eventTime: microTime(now),
    reportingController: REPORTING_CONTROLLER,
    reportingInstance,
    action: event.action,
    reason: event.reason,
    type: event.type,
    note: event.note,
    regarding: event.regarding,
    ...(event.related ? { related: event.related } : {}),
  };
}

function postEvent(client: KubeClient, namespace: string, body: unknown): Promise<unknown> {
  return client.request({
    method: 'POST',
    path: `/apis/events.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/events`,
    body,
  });
}

/**
 * hook_execution and git_workspace records become events.k8s.io/v1 Events on the IssueRun.
 * Each has a name derived from the run (name and uid), slot, attempt and record number, so
 * replaying a Pod's log after a controller restart meets 409 AlreadyExists instead of
 * duplicating the history.
 */
export function createEventRecorder(options: {
  client: KubeClient;
  reportingInstance: string;
  /** How failed writes are tried again (EVENT_RETRY by default). */
  retry?: { baseMs: number; maxMs: number; deadlineMs: number };
}): EventRecorder {
  async function create(event: EventBody): Promise<boolean> {
    const { run } = event;
    const body = eventObject(
      {
        name: event.name,
        namespace: run.namespace,
        action: event.action,
        reason: event.reason,
        type: event.type,
        note: event.note,
        regarding: ownObjectRef(ISSUERUN_KIND, run),
        related: { apiVersion: 'v1', kind: 'Pod', name: event.podName, namespace: run.namespace },
      },
      options.reportingInstance,
      event.now,
    );
    const deadline = Date.now() + (options.retry ?? EVENT_RETRY).deadlineMs;
    for (let failures = 0; ; failures++) {
      try {
        await postEvent(options.client, run.namespace, body);
        return true;
      } catch (error) {
        if (isConflict(error)) return false;
        const { baseMs, maxMs } = options.retry ?? EVENT_RETRY;
        const delay = exponentialDelay(failures, baseMs, maxMs);
        if (!retryable(error) || Date.now() + delay > deadline) throw error;
        await sleep(delay);
      }
    }
  }

  return {
    recordHook(input) {
      const reason = hookEventReason(input.message);
      return create({
        name: hookEventName(input.run, input.slot, input.attempt, input.seq),
        run: input.run,
        podName: input.podName,
        action: 'RunHook',
        reason,
        type: reason === 'HookStarted' || reason === 'HookSucceeded' ? 'Normal' : 'Warning',
        note: hookEventNote(input.message, input.slot, input.recovered),
        now: input.now,
      });
    },
    recordGit(input) {
      return create({
        name: gitEventName(input.run, input.slot, input.attempt, input.seq),
        run: input.run,
        podName: input.podName,
        action: 'GitWorkspace',
        ...gitEvent(input.message),
        now: input.now,
      });
    },
  };
}

/** Writes lifecycle Events (lifecycle.ts); resolves once each is in or was there already. */
export type LifecycleEventWriter = (events: readonly LifecycleEvent[]) => Promise<void>;

/**
 * Lifecycle Events go before the status write that records their change, one try each: an
 * apiserver that cannot take one (no answer, 429, 5xx) fails the reconcile, which is tried
 * again with the queue's backoff and computes the same Events (the same names, so the ones
 * already in meet 409). One it refuses outright (403, 422) would never go in: it is logged
 * and left, so a run never waits on its history.
 */
export function createLifecycleEventWriter(options: {
  client: KubeClient;
  reportingInstance: string;
  now?: () => Date;
  onRefused?: (event: LifecycleEvent, error: unknown) => void;
}): LifecycleEventWriter {
  return async (events) => {
    for (const event of events) {
      const body = eventObject(event, options.reportingInstance, options.now?.() ?? new Date());
      try {
        await postEvent(options.client, event.namespace, body);
      } catch (error) {
        if (isConflict(error)) continue;
        if (retryable(error)) throw error;
        options.onRefused?.(event, error);
      }
    }
  };
}

/** The onRefused of a lifecycle Event writer in a controller: a warning, and on. */
export function warnRefusedEvent(logger: {
  warn: (fields: Record<string, unknown>, message: string) => void;
}): (event: LifecycleEvent, error: unknown) => void {
  return (event, error) =>
    logger.warn({ event: event.name, err: errorMessage(error) }, 'cannot record an Event');
}
