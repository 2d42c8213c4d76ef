/**
 * The run archive: what is kept of every IssueRun after its Pods, Events and the object itself
 * are gone. One small interface with two implementations (an embedded SQLite file, and
 * PostgreSQL for clusters that run more than one controller replica), chosen by a DSN.
 *
 * This layer knows nothing of Kubernetes types: the archiver (src/controller/archive) maps an
 * IssueRun and its Pods into these records, and the readers (the CLI, the read API) get them
 * back. Every write is an upsert by a natural key, so a controller that restarts mid-archive
 * and writes the same record again leaves it once.
 */

/** One IssueRun as it ended (or as it stands, while it runs). Keyed by the object's uid. */
export interface RunRecord {
  uid: string;
  namespace: string;
  name: string;
  /** spec.workflowRef.name; empty for a run created without a Workflow. */
  workflow: string;
  issueId: string;
  issueIdentifier: string;
  issueTitle: string;
  issueUrl?: string;
  /** The issue's tracker state when the run was last archived (its state at the end). */
  issueState?: string;
  /** Pending, Running, Succeeded or Failed. */
  phase: string;
  /** CamelCase reason of the phase (IssueCompleted, HookFailed, Cancelled, ...). */
  reason?: string;
  message?: string;
  /** The highest attempt of any slot. */
  attempts: number;
  /** RFC 3339 times. */
  createdAt: string;
  startedAt?: string;
  finishedAt?: string;
  /** The issue branch, for git workspaces. */
  branch?: string;
  usage: TokenCounts;
  /**
   * The IssueRun object (metadata without managedFields, spec, status: conditions, slots,
   * hook records), already redacted by the writer.
   */
  object: Record<string, unknown>;
  /** When the IssueRun was deleted from the cluster: the archive is then all that is left. */
  deletedAt?: string;
}

export interface TokenCounts {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
}

/** One attempt of one slot: one run Pod. Keyed by (runUid, slot, attempt). */
export interface AttemptRecord {
  runUid: string;
  slot: number;
  attempt: number;
  podName: string;
  podUid: string;
  /** The node the Pod ran on, and the runner image. */
  node?: string;
  image?: string;
  /** The SSH worker the attempt ran on, for SSH workers. */
  host?: string;
  phase: string;
  /** What ended the attempt: the slot's reason (HookFailed, AgentFailed, ...) and detail. */
  reason?: string;
  message?: string;
  startedAt?: string;
  finishedAt?: string;
  turns: number;
  usage: TokenCounts;
  /** The attempt's hook_execution records, in order (each record's message). */
  hooks: Record<string, unknown>[];
  /** For git workspaces: the branch and the commits the attempt pushed. */
  git?: { branch?: string; pushedCommits?: string[] };
}

/** One Kubernetes Event of the run or of one of its Pods. Keyed by the Event's uid. */
export interface EventRecord {
  runUid: string;
  uid: string;
  /** IssueRun or Pod, and that object's name. */
  involvedKind: string;
  involvedName: string;
  type: string;
  reason: string;
  message: string;
  count: number;
  firstTime?: string;
  lastTime?: string;
}

/**
 * A piece of one run Pod's log (the runner's JSON lines: hook records and output, the agent
 * transcript), at its byte offset in that log. Keyed by (podUid, offset): a re-read of the
 * same log after a restart writes the same pieces again, and they are kept once.
 */
export interface LogAppend {
  runUid: string;
  podUid: string;
  slot: number;
  attempt: number;
  /** Byte offset of `data` in the Pod's log as read from its start. */
  offset: number;
  /** Whole lines (each ending in "\n"), UTF-8, already redacted. */
  data: string;
  /**
   * Most bytes kept of this Pod's log: its first half and its last half. When the log grows
   * past it, pieces after the head are dropped, oldest first; readers see a marker where.
   */
  capBytes: number;
}

export interface LogPiece {
  podUid: string;
  slot: number;
  attempt: number;
  offset: number;
  data: string;
}

/** What readers of a log get: its pieces in order, and markers where pieces were dropped. */
export type LogEntry =
  | { kind: 'data'; piece: LogPiece }
  | {
      kind: 'elided';
      podUid: string;
      slot: number;
      attempt: number;
      offset: number;
      bytes: number;
    };

export interface RunQuery {
  /** Only these namespaces (the ones the reader may see); all when unset. */
  namespaces?: readonly string[];
  workflow?: string;
  /** The issue's identifier (ENG-42) or tracker id. */
  issue?: string;
  phase?: string;
  reason?: string;
  /** Runs created at or after / before these RFC 3339 times. */
  since?: string;
  until?: string;
  /** Include runs still in the cluster (default true); false: only deleted ones. */
  includeLive?: boolean;
  /** Page size (default 100, at most 1000). */
  limit?: number;
  /** The `continue` token of the previous page. */
  continue?: string;
}

/** A page of runs, newest first (createdAt, then uid). */
export interface RunPage {
  runs: RunRecord[];
  /** Set when more runs follow: pass it as `continue`. */
  continue?: string;
}

export interface ArchivedRun {
  run: RunRecord;
  attempts: AttemptRecord[];
  events: EventRecord[];
}

export interface RunRef {
  uid?: string;
  /** With name: the newest run of that name in the namespace (names are reused). */
  namespace?: string;
  name?: string;
}

export interface LogFilter {
  slot?: number;
  attempt?: number;
}

export interface UsageQuery {
  namespaces?: readonly string[];
  workflow?: string;
  /** Days (UTC, YYYY-MM-DD), inclusive. */
  from?: string;
  to?: string;
}

export interface UsageRow extends TokenCounts {
  namespace: string;
  workflow: string;
  /** UTC day of the runs' creation, YYYY-MM-DD. */
  day: string;
  runs: number;
  failed: number;
}

export interface ArchiveStore {
  readonly kind: 'sqlite' | 'postgres';
  /** Where it is, with any password masked: safe to log and print. */
  readonly location: string;
  /** Creates or upgrades the schema (versioned migrations in src/archive/migrations). */
  migrate(): Promise<void>;
  putRun(run: RunRecord): Promise<void>;
  putAttempt(attempt: AttemptRecord): Promise<void>;
  putEvents(events: readonly EventRecord[]): Promise<void>;
  appendLog(piece: LogAppend): Promise<void>;
  listRuns(query: RunQuery): Promise<RunPage>;
  getRun(ref: RunRef): Promise<ArchivedRun | undefined>;
  /** The run's log entries in order (by slot, attempt, offset), streamed. */
  readLog(runUid: string, filter?: LogFilter): AsyncIterable<LogEntry>;
  usageByDay(query: UsageQuery): Promise<UsageRow[]>;
  close(): Promise<void>;
}

/** Stable codes of archive failures (ArchiveError.code). */
export type ArchiveErrorCode =
  | 'archive_dsn_invalid'
  | 'archive_unavailable'
  | 'archive_disk_full'
  | 'archive_schema_newer'
  | 'archive_query_invalid'
  /** A record a writer passed is malformed (a createdAt that is not an RFC 3339 time, ...). */
  | 'archive_record_invalid';

export class ArchiveError extends Error {
  readonly code: ArchiveErrorCode;
  constructor(code: ArchiveErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ArchiveError';
    this.code = code;
  }
}

/** The default cap of one Pod's archived log (head and tail kept), in bytes. */
export const DEFAULT_LOG_CAP_BYTES = 32 * 1024 * 1024;
