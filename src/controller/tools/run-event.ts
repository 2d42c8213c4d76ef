import type { Logger } from 'pino';
import { ISSUERUN_KIND } from '../../api/index.js';
import { errorMessage } from '../../workflow/errors.js';
import { ownObjectRef } from '../events/lifecycle.js';
import { REPORTING_CONTROLLER, microTime } from '../events/recorder.js';
import type { KubeClient } from '../runtime/client.js';

/** The gateway's Events on an IssueRun: a tool call, a decision a runner's policy made alone. */
export interface RunEvent {
  namespace: string;
  run: string;
  uid: string;
  /** The name's middle part: `<run>.<kind>-<random>`. */
  kind: string;
  action: string;
  reason: string;
  type: 'Normal' | 'Warning';
  note: string;
}

/** events.k8s.io refuses a note past 1 KiB; the end of a long one is cut, marked "…". */
const NOTE_MAX = 1000;

export type RunEventWriter = (event: RunEvent) => void;

/**
 * Posts the Event and does not wait: a call is never held up or failed by its record, and
 * a record that cannot be written is only logged.
 */
export function runEventWriter(
  client: KubeClient,
  identity: string,
  logger: Logger,
): RunEventWriter {
  return (event) => {
    const note =
      event.note.length > NOTE_MAX ? `${event.note.slice(0, NOTE_MAX - 1)}…` : event.note;
    client
      .request({
        method: 'POST',
        path: `/apis/events.k8s.io/v1/namespaces/${encodeURIComponent(event.namespace)}/events`,
        body: {
          apiVersion: 'events.k8s.io/v1',
          kind: 'Event',
          metadata: { generateName: `${event.run}.${event.kind}-`, namespace: event.namespace },
          eventTime: microTime(new Date()),
          reportingController: REPORTING_CONTROLLER,
          reportingInstance: identity,
          action: event.action,
          reason: event.reason,
          type: event.type,
          note,
          regarding: ownObjectRef(ISSUERUN_KIND, {
            name: event.run,
            namespace: event.namespace,
            uid: event.uid,
          }),
        },
      })
      .catch((error: unknown) => {
        logger.warn(
          { err: errorMessage(error), run: event.run, reason: event.reason },
          'cannot record an event',
        );
      });
  };
}
