import type { IssueRun, SlotStatus } from '../../api/index.js';
import type { AttemptRecord, EventRecord, RunRecord, TokenCounts } from '../../archive/types.js';
import type { Redactor } from '../../runner/redact.js';
import { PUSHED_COMMITS_LIMIT, PUSHED_SUBJECT_LIMIT } from '../../workspace/git/index.js';
import { ANNOTATION_ISSUE_ID } from '../shared/constants.js';

/**
 * The pure half of the archiver: an IssueRun, what its Pods' logs said and its Events,
 * mapped into the archive's records. Every string that leaves here has gone through the
 * run's redactor: the Pod log is redacted by the runner, the run object and its Events are
 * not guaranteed to be.
 */

/** A time of the object's metadata as RFC 3339 (the JSON client gives strings already). */
export const timeText = (value: string | Date | undefined | null): string | undefined =>
  value instanceof Date ? value.toISOString() : (value ?? undefined);

const ZERO: TokenCounts = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };

const TERMINAL = new Set(['Succeeded', 'Failed']);
export const isTerminalPhase = (phase: string | undefined): boolean =>
  phase !== undefined && TERMINAL.has(phase);

function tokens(usage: Partial<TokenCounts> | undefined): TokenCounts {
  if (!usage) return { ...ZERO };
  return {
    inputTokens: usage.inputTokens ?? 0,
    outputTokens: usage.outputTokens ?? 0,
    totalTokens: usage.totalTokens ?? 0,
  };
}

/** The run object as archived: metadata without managedFields (bookkeeping, no history). */
export function archivedObject(run: IssueRun): Record<string, unknown> {
  const { managedFields: _managedFields, ...metadata } = run.metadata as Record<string, unknown>;
  return {
    apiVersion: run.apiVersion,
    kind: run.kind,
    metadata,
    spec: run.spec,
    ...(run.status ? { status: run.status } : {}),
  };
}

/** The IssueRun as it stands (as it ended, once its phase is terminal). */
export function runRecord(run: IssueRun, redactor: Redactor, deletedAt?: string): RunRecord {
  const { metadata, spec, status } = run;
  const issue = spec.issue;
  const record: RunRecord = {
    uid: metadata.uid ?? '',
    namespace: metadata.namespace ?? '',
    name: metadata.name ?? '',
    workflow: spec.workflowRef?.name ?? '',
    issueId: metadata.annotations?.[ANNOTATION_ISSUE_ID] ?? issue.id ?? issue.identifier,
    issueIdentifier: issue.identifier,
    issueTitle: issue.title,
    ...(issue.url ? { issueUrl: issue.url } : {}),
    ...(issue.state ? { issueState: issue.state } : {}),
    phase: status?.phase ?? 'Pending',
    ...(status?.reason ? { reason: status.reason } : {}),
    ...(status?.message ? { message: status.message } : {}),
    attempts: status?.attempt ?? 0,
    createdAt: timeText(metadata.creationTimestamp) ?? '',
    ...(status?.startTime ? { startedAt: status.startTime } : {}),
    ...(status?.completionTime ? { finishedAt: status.completionTime } : {}),
    ...(status?.git?.branch ? { branch: status.git.branch } : {}),
    usage: tokens(status?.usage),
    object: archivedObject(run),
    ...(deletedAt ? { deletedAt } : {}),
  };
  return redactor.value(record);
}

/** What the archiver read of one run Pod's log (its records, as the runner wrote them). */
export interface PodLogFacts {
  hooks: Record<string, unknown>[];
  gitBranch?: string;
  pushedCommits?: string[];
  turns: number;
  usage?: TokenCounts;
}

/**
 * A `push` git record's commits as the archive keeps them (`AttemptRecord.git.pushedCommits`):
 * `SHA subject`, one a commit, newest first. The log is the runner's, but read defensively:
 * an entry without a hex sha is dropped, and at most PUSHED_COMMITS_LIMIT are kept.
 */
export function pushedCommitLines(commits: unknown): string[] {
  if (!Array.isArray(commits)) return [];
  const lines: string[] = [];
  for (const commit of commits as unknown[]) {
    if (typeof commit !== 'object' || commit === null) continue;
    const { sha, subject } = commit as { sha?: unknown; subject?: unknown };
    if (typeof sha !== 'string' || !/^[0-9a-f]{7,64}$/.test(sha)) continue;
    const text =
      typeof subject === 'string'
        ? subject.replace(/\s+/g, ' ').slice(0, PUSHED_SUBJECT_LIMIT)
        : '';
    lines.push(text ? `${sha} ${text}` : sha);
    if (lines.length >= PUSHED_COMMITS_LIMIT) break;
  }
  return lines;
}

/** One run Pod as the archiver saw it in the cache. */
export interface PodFacts {
  name: string;
  uid: string;
  slot: number;
  attempt: number;
  node?: string;
  image?: string;
  phase?: string;
  startedAt?: string;
  finishedAt?: string;
}

const ATTEMPT_FAILED = /^attempt \d+ failed \(([A-Za-z]+): ([\s\S]*)\); attempt \d+ starts at /;
const ATTEMPT_CONTINUED = /^attempt \d+ succeeded and the issue is still active/;

/**
 * What ended one attempt, from its slot's status: the slot's own phase and reason while
 * the attempt is its last; once a next one is scheduled the status says what the earlier one
 * ended with (RetryScheduled: "attempt N failed (Reason: message); ..."), and once the next
 * one runs, what was last seen of it stands (`phase` of its Pod, else Failed).
 */
export function attemptOutcome(
  slot: SlotStatus | undefined,
  attempt: number,
  podPhase: string | undefined,
): { phase: string; reason?: string; message?: string } {
  if (slot && slot.attempt === attempt) {
    const failed = slot.message ? ATTEMPT_FAILED.exec(slot.message) : null;
    if (slot.reason === 'RetryScheduled' && failed) {
      return { phase: 'Failed', reason: failed[1] ?? 'Failed', message: failed[2] ?? '' };
    }
    if (slot.reason === 'ContinuationScheduled' && slot.message?.match(ATTEMPT_CONTINUED)) {
      return { phase: 'Succeeded', reason: 'ContinuationScheduled', message: slot.message };
    }
    if (isTerminalPhase(slot.phase)) {
      return {
        phase: slot.phase ?? 'Failed',
        ...(slot.reason ? { reason: slot.reason } : {}),
        ...(slot.message ? { message: slot.message } : {}),
      };
    }
  }
  return { phase: isTerminalPhase(podPhase) ? (podPhase ?? 'Failed') : 'Failed' };
}

/** One slot×attempt: its Pod, what ended it (the slot status seen for it), its log's records. */
export function attemptRecord(input: {
  runUid: string;
  slot: number;
  attempt: number;
  /** The slot's status as last seen while this attempt was its own. */
  status: SlotStatus | undefined;
  pod: PodFacts | undefined;
  log: PodLogFacts | undefined;
  redactor: Redactor;
}): AttemptRecord {
  const { status, pod, log } = input;
  const ownStatus = status?.attempt === input.attempt ? status : undefined;
  const outcome = attemptOutcome(ownStatus, input.attempt, pod?.phase);
  const git =
    log?.gitBranch || (log?.pushedCommits?.length ?? 0) > 0
      ? {
          ...(log?.gitBranch ? { branch: log.gitBranch } : {}),
          ...(log?.pushedCommits?.length ? { pushedCommits: log.pushedCommits } : {}),
        }
      : undefined;
  const record: AttemptRecord = {
    runUid: input.runUid,
    slot: input.slot,
    attempt: input.attempt,
    podName: pod?.name ?? ownStatus?.podName ?? '',
    podUid: pod?.uid ?? '',
    ...(pod?.node ? { node: pod.node } : {}),
    ...(pod?.image ? { image: pod.image } : {}),
    ...(ownStatus?.host ? { host: ownStatus.host } : {}),
    ...outcome,
    ...(pod?.startedAt ? { startedAt: pod.startedAt } : {}),
    ...(pod?.finishedAt ? { finishedAt: pod.finishedAt } : {}),
    turns: Math.max(ownStatus?.turns ?? 0, log?.turns ?? 0),
    usage: tokens(ownStatus?.usage ?? log?.usage),
    hooks: log?.hooks ?? [],
    ...(git ? { git } : {}),
  };
  return input.redactor.value(record);
}

/** A core/v1 Event as listed (the fields the archive keeps). */
export interface CoreEvent {
  metadata?: { uid?: string; creationTimestamp?: string };
  involvedObject?: { kind?: string; name?: string };
  type?: string;
  reason?: string;
  message?: string;
  note?: string;
  count?: number;
  firstTimestamp?: string | null;
  lastTimestamp?: string | null;
  eventTime?: string | null;
  series?: { count?: number; lastObservedTime?: string } | null;
}

/** The Events of a run and of its Pods, as archived (events.k8s.io ones read through core). */
export function eventRecords(
  runUid: string,
  events: readonly CoreEvent[],
  redactor: Redactor,
): EventRecord[] {
  return events
    .filter((event) => event.metadata?.uid)
    .map((event) => {
      const first = event.firstTimestamp ?? event.eventTime ?? event.metadata?.creationTimestamp;
      const last = event.series?.lastObservedTime ?? event.lastTimestamp ?? first;
      return redactor.value({
        runUid,
        uid: event.metadata?.uid ?? '',
        involvedKind: event.involvedObject?.kind ?? '',
        involvedName: event.involvedObject?.name ?? '',
        type: event.type ?? 'Normal',
        reason: event.reason ?? '',
        message: event.message ?? event.note ?? '',
        count: event.series?.count ?? event.count ?? 1,
        ...(first ? { firstTime: first } : {}),
        ...(last ? { lastTime: last } : {}),
      });
    });
}
