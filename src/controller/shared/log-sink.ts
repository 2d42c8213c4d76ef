/**
 * What reads a run Pod's log hands on, line by line, to whoever keeps it (the archiver):
 * the IssueRun controller reads each log once (its log follower) and the archive gets every
 * line from that read, without a second stream per Pod.
 */

/** One run Pod's log: which Pod, of which run, slot and attempt. */
export interface PodLogSource {
  namespace: string;
  podName: string;
  /** A Pod is known by its uid: another Pod of the same name is another log. */
  podUid: string;
  /** namespace/name of the IssueRun. */
  runKey: string;
  /** The run object's uid: a run re-created under the same name owns none of these logs. */
  runUid: string;
  slot: number;
  attempt: number;
}

/**
 * Gets each line read (without its newline) with its byte offset in the log as read from
 * its start: every read starts at 0, so a re-read hands on the same lines at the same offsets.
 */
export type PodLogLineSink = (source: PodLogSource, line: string, offset: number) => void;

/**
 * The longest log line held, in characters: a longer one (a 200 MB line of output) is cut
 * with a marker before it is held whole.
 */
export const MAX_LOG_LINE_LENGTH = 1024 * 1024;
