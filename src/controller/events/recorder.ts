import type { KubeClient } from '../runtime/client.js';
import { isConflict } from '../runtime/client.js';
import type { HookExecutionMessage } from '../../workflow/events.js';
import { API_VERSION, ISSUERUN_KIND } from '../../api/index.js';
import { hookEventName } from '../shared/names.js';
import type { ObjectIdentity } from '../shared/owner.js';
import { hookEventNote, hookEventReason } from './records.js';

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

export interface EventRecorder {
  /** Creates the Event of a hook record; false when it already existed (a replay). */
  recordHook(input: HookEventInput): Promise<boolean>;
}

/**
 * hook_execution records become events.k8s.io/v1 Events on the IssueRun. Each has a name
 * derived from the run (name and uid), slot, attempt and record number, so replaying a Pod's log after a
 * controller restart meets 409 AlreadyExists instead of duplicating the history.
 */
export function createEventRecorder(options: {
  client: KubeClient;
  reportingInstance: string;
}): EventRecorder {
  return {
    async recordHook(input) {
      const reason = hookEventReason(input.message);
      const body = {
        apiVersion: 'events.k8s.io/v1',
        kind: 'Event',
        metadata: {
          name: hookEventName(input.run, input.slot, input.attempt, input.seq),
          namespace: input.run.namespace,
        },
        eventTime: microTime(input.now),
        reportingController: REPORTING_CONTROLLER,
        reportingInstance: options.reportingInstance,
        action: 'RunHook',
        reason,
        type: reason === 'HookStarted' || reason === 'HookSucceeded' ? 'Normal' : 'Warning',
        note: hookEventNote(input.message, input.slot, input.recovered),
        regarding: {
          apiVersion: API_VERSION,
          kind: ISSUERUN_KIND,
          name: input.run.name,
          namespace: input.run.namespace,
          uid: input.run.uid,
        },
        related: {
          apiVersion: 'v1',
          kind: 'Pod',
          name: input.podName,
          namespace: input.run.namespace,
        },
      };
      try {
        await options.client.request({
          method: 'POST',
          path: `/apis/events.k8s.io/v1/namespaces/${encodeURIComponent(input.run.namespace)}/events`,
          body,
        });
        return true;
      } catch (error) {
        if (isConflict(error)) return false;
        throw error;
      }
    },
  };
}
