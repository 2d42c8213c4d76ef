import type { InboxDecision, InboxRequest, PolicyReport, SteerDelivery } from '../api/inbox.js';
import type { TrackerWriter } from '../tracker/types.js';
import type { TokenSubject } from './token.js';

/**
 * What the controller knows about one attempt of a run, looked up by the names a token
 * carries. `workflow` only needs the tracker's state lists, so the parsed WorkflowConfig
 * can be passed as it is.
 */
export interface ResolvedRun {
  /** The IssueRun's metadata.uid (recorded with every call). */
  uid: string;
  /** Hex sha256 of this attempt's token (the Secret's annotation). */
  tokenHash: string;
  /** The normalized Issue.id of the run's issue: what the writer is called with. */
  issueId: string;
  /** The issue's identifier (ENG-42), accepted as `issue_id` besides the id. */
  issueIdentifier?: string | null;
  trackerKind: string;
  workflow: { tracker: { activeStates: readonly string[]; terminalStates: readonly string[] } };
  /**
   * States tracker_update_state may move the issue to. null/undefined: the Workflow's active
   * and terminal states plus `In Review`. An empty list allows none.
   */
  allowedStates?: readonly string[] | null;
  /** Whether tracker_create_issue is offered. */
  createIssue: boolean;
  /** Whether linear_graphql is offered (Linear only; not served yet). */
  linearGraphql: boolean;
  /** The run has finished: its token no longer opens anything. */
  revoked: boolean;
}

/** null when there is no such run or attempt (deleted, never existed, another attempt's). */
export type RunResolver = (
  namespace: string,
  run: string,
  attempt: number,
) => Promise<ResolvedRun | null> | ResolvedRun | null;

/** A caller whose token matched: the run it names and what the controller knows of it. */
export interface VerifiedRun extends TokenSubject {
  resolved: ResolvedRun;
}

/** The tracker a run's tools act on; null when its adapter cannot write. */
export type TrackerForRun = (
  run: VerifiedRun,
) => Promise<TrackerWriter | null | undefined> | TrackerWriter | null | undefined;

/** One tool call, as the controller records it (an Event and a metric). No arguments. */
export interface ToolCallRecord {
  namespace: string;
  run: string;
  uid: string;
  attempt: number;
  tool: string;
  /** The issue the call was aimed at (the run's own, or the one it was refused). */
  target: string;
  ok: boolean;
}

export interface ToolsRecorder {
  toolCalled(record: ToolCallRecord): void;
}

/** The slice of a pino logger the gateway uses, so this layer needs no controller import. */
export interface ToolsLogger {
  warn(fields: Record<string, unknown>, message: string): void;
  debug(fields: Record<string, unknown>, message: string): void;
}

export interface ToolsLimits {
  /** Calls per minute a run's bucket refills at; default 60. */
  callsPerMinute?: number;
  /** The bucket's size (calls allowed at once); default 20. */
  burst?: number;
  /** Verified tokens kept in memory; default 1024. */
  tokenCacheSize?: number;
  /** How long a verified token is trusted without asking resolveRun again; default 30 s. */
  tokenCacheTtlMs?: number;
}

/**
 * What the inbox endpoints need of the controller (src/controller/tools/inbox-store.ts): the
 * IssueRun's annotations and status, behind an interface so this layer needs no Kubernetes.
 * Every call names the verified run; the store never trusts a namespace or name from a body.
 */
export interface InboxStore {
  /**
   * Leaves the request for the inbox controller. Idempotent by id: a request already stored
   * (or already pending or decided) is not written again, and its first version stays.
   */
  storeRequest(run: VerifiedRun, request: InboxRequest): Promise<void>;
  /** The decision on a request, from the run's status.inbox.decided; null: none yet. */
  decisionOf(run: VerifiedRun, requestId: string): InboxDecision | null;
  /**
   * Settles at the next change of the run (an informer update), or when `signal` aborts,
   * whichever is first; whatever it registered to wait is gone when it settles.
   */
  nextChange(run: VerifiedRun, signal: AbortSignal): Promise<void>;
  /**
   * The run's steers this slot has not taken (seq above its mark), oldest first; the mark
   * is moved to the highest seq handed out before they are returned.
   */
  takeSteers(run: VerifiedRun, slot: number): Promise<SteerDelivery[]>;
  /** Records a decision the runner's policy made alone (an Event); must not throw. */
  policyDecided(run: VerifiedRun, report: PolicyReport): void;
}

export interface InboxLimits {
  /** Inbox calls per minute a run's bucket refills at (long polls, steers); default 120. */
  callsPerMinute?: number;
  /** The bucket's size; default 60. */
  burst?: number;
  /** The largest JSON body taken, in bytes; default 64 KiB. */
  maxBodyBytes?: number;
}
