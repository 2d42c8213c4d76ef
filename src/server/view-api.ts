/**
 * The JSON shapes of `lorenz server`'s view API (`/api/v1/...`): what the web view (web/)
 * reads, and what anyone may script against. One file so the server and the browser code
 * agree by the compiler, not by convention (web/ imports these with `import type`).
 *
 * Versioning: fields are only ever added under /api/v1; a field that changes meaning gets a
 * new name. Every time is an RFC 3339 string in UTC. Every error is an `ApiErrorBody` with a
 * stable `code` and the HTTP status that goes with it.
 *
 *   GET  /api/v1/whoami                                      -> WhoAmI
 *   GET  /api/v1/workflows[?namespace=]                      -> WorkflowList
 *   GET  /api/v1/runs?namespace=&workflow=&phase=&reason=&issue=&since=&until=&source=&limit=&continue=
 *                                                            -> RunList
 *   GET  /api/v1/namespaces/{ns}/runs/{name}[?uid=]          -> RunDetail
 *   GET  /api/v1/namespaces/{ns}/runs/{name}/transcript[?uid=&slot=&attempt=&follow=true]
 *                                                            -> text/event-stream of TranscriptEvent
 *                                                               (follow=false: ends after the last entry)
 *   GET  /api/v1/namespaces/{ns}/runs/{name}/hooks/{seq}/output[?uid=]
 *                                                            -> text/plain; the hook run's whole output
 *   GET  /api/v1/usage?namespace=&workflow=&from=&to=        -> UsageReport
 *   GET  /api/v1/watch[?namespace=]                          -> text/event-stream of ChangeEvent
 *   POST /api/v1/namespaces/{ns}/runs/{name}/cancel          -> ActionResult
 *   POST /api/v1/namespaces/{ns}/runs/{name}/retry           -> ActionResult
 *   POST /api/v1/namespaces/{ns}/runs/{name}/decide          -> ActionResult
 *        body (application/json): DecideRequest; answers a request of RunDetail.inbox.pending
 *   POST /api/v1/namespaces/{ns}/workflows/{name}/suspend    -> ActionResult
 *   POST /api/v1/namespaces/{ns}/workflows/{name}/resume     -> ActionResult
 *
 * Authorization (server/auth.ts): in the cluster every request carries
 * `Authorization: Bearer <token>`; reads are filtered by SubjectAccessReviews for that user,
 * writes are made with the caller's own token, so the apiserver's RBAC decides. POSTs must
 * carry `X-Lorenz-Request: 1` (a header a cross-site form cannot send).
 */

// The shapes the archive keeps are shown as they are; type-only, so the browser bundle
// (web/) takes no code from the archive.
import type { AttemptRecord, EventRecord, TokenCounts, UsageRow } from '../archive/types.js';

export type { TokenCounts };

export type ApiErrorCode =
  | 'unauthenticated'
  | 'forbidden'
  | 'not_found'
  | 'bad_request'
  | 'conflict'
  | 'archive_unavailable'
  | 'kube_unavailable'
  | 'internal';

export interface ApiErrorBody {
  code: ApiErrorCode;
  message: string;
}

export interface WhoAmI {
  /** `cluster`: bearer tokens, checked per request; `local`: the kubeconfig's own user. */
  mode: 'cluster' | 'local';
  username: string;
  groups: string[];
  /** Whether runs that left the cluster can be read (an archive is configured and up). */
  archive: boolean;
}

export interface ConditionView {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

export interface WorkflowSummary {
  namespace: string;
  name: string;
  uid: string;
  suspended: boolean;
  tracker: {
    kind: string;
    /** The tracker's project or team, as the Workflow names it. */
    project?: string;
    /** From the Workflow's tracker condition; undefined before the first poll. */
    reachable?: boolean;
    lastPollTime?: string;
    lastError?: string;
  };
  /** Issues in an active state at the last poll. */
  candidates?: number;
  running: number;
  /** Of those, the runs whose agent waits on a person (AwaitingApproval, AwaitingAnswer). */
  awaiting?: number;
  /** Candidates not started, by why (blocked_by, over the cap, waiting on retry, ...). */
  blocked: { reason: string; count: number }[];
  /** Candidates left waiting because the Workflow's concurrency cap is reached. */
  overCap?: number;
  conditions: ConditionView[];
}

export interface WorkflowList {
  workflows: WorkflowSummary[];
  /** Failed runs of the last 24 h, newest first (at most 20). */
  recentFailures: RunSummary[];
}

export interface IssueView {
  id: string;
  identifier: string;
  title: string;
  /** The issue's page on the tracker, when the tracker gave one (http/https only). */
  url?: string;
  state?: string;
}

export interface RunSummary {
  uid: string;
  namespace: string;
  name: string;
  workflow: string;
  issue: IssueView;
  /** Pending, Running, Succeeded or Failed. */
  phase: string;
  reason?: string;
  message?: string;
  /** The highest attempt of any slot. */
  attempt: number;
  createdAt: string;
  startedAt?: string;
  finishedAt?: string;
  branch?: string;
  /** What the workspace started from (status.workspaceSource), as a line; unset before the start. */
  workspace?: string;
  usage: TokenCounts;
  /** `live`: the IssueRun is in the cluster; `archive`: only the archive has it. */
  source: 'live' | 'archive';
  deletedAt?: string;
  cancelRequested?: boolean;
  /** Requests the run's agent waits on (status.inbox.pending); unset when none. */
  awaiting?: number;
}

export interface RunList {
  runs: RunSummary[];
  /** Set when more (older) runs follow: pass it back as `continue`. */
  continue?: string;
}

export interface HookView {
  /** Position of the hook run among the started hook runs of its Pod's log (hook_output.seq). */
  seq?: number;
  hookName: string;
  status: string;
  exitCode?: number;
  startedAt?: string;
  durationMs?: number;
  /** The first 4096 characters, as in status; the whole output is at hooks/{seq}/output. */
  output?: string;
  outputTruncated?: boolean;
}

/**
 * An attempt as the archive keeps it (named fields, so a field the archive adds is not shown
 * until it is named here), with its hook records read into views.
 */
export interface AttemptView extends Pick<
  AttemptRecord,
  | 'slot'
  | 'attempt'
  | 'podName'
  | 'node'
  | 'host'
  | 'image'
  | 'phase'
  | 'reason'
  | 'message'
  | 'startedAt'
  | 'finishedAt'
  | 'turns'
  | 'usage'
  | 'git'
> {
  hooks: HookView[];
}

/** A Kubernetes Event of the run or its Pods, as the archive keeps it (named fields, as above). */
export type EventView = Pick<
  EventRecord,
  | 'involvedKind'
  | 'involvedName'
  | 'type'
  | 'reason'
  | 'message'
  | 'count'
  | 'firstTime'
  | 'lastTime'
>;

/** One bar of the run's timeline: where the time went, at a glance. */
export interface TimelineBar {
  kind: 'attempt' | 'hook' | 'git' | 'turn' | 'tool_call';
  slot: number;
  attempt: number;
  label: string;
  startedAt: string;
  /** Unset while it runs. */
  finishedAt?: string;
  status: 'running' | 'succeeded' | 'failed';
}

export interface RunDetail {
  run: RunSummary;
  attempts: AttemptView[];
  events: EventView[];
  timeline: TimelineBar[];
  conditions: ConditionView[];
  /** status.inbox: what the agent waits on and what was decided; unset when it is empty. */
  inbox?: InboxView;
}

/** A permission request or a question the agent waits on (status.inbox.pending[]). */
export interface InboxRequestView {
  id: string;
  kind: 'permission' | 'question';
  slot: number;
  attempt: number;
  turn: number;
  title: string;
  toolKind?: string;
  command?: string;
  paths?: string[];
  options: { optionId: string; name: string; kind: string }[];
  optionsOmitted?: number;
  /** The question, for a question. */
  message?: string;
  ruleReason?: string;
  askedAt: string;
  /** When the wait ends with agent.approvals.on_timeout. */
  deadline: string;
  /** Whether spec.decisions answers it already (the controller has not taken it yet). */
  answered?: boolean;
}

/** A decision made (status.inbox.decided[]). */
export interface InboxDecisionView {
  requestId: string;
  verdict: 'approve' | 'approve_always' | 'deny' | 'answer' | 'timeout';
  reason?: string;
  answer?: string;
  by?: string;
  via: 'comment' | 'kubernetes' | 'timeout';
  at: string;
}

export interface InboxView {
  /** Oldest first. */
  pending: InboxRequestView[];
  /** Newest last. */
  decided: InboxDecisionView[];
  /**
   * Who may answer: on the issue, the Workflow's agent.approvals approvers; in Kubernetes,
   * whoever may patch the IssueRun (the view's buttons).
   */
  answeredBy: string;
}

/** The body of POST .../runs/{name}/decide. */
export interface DecideRequest {
  /** The request to answer; unset: the oldest waiting one not answered yet. */
  requestId?: string;
  verdict: 'approve' | 'approve_always' | 'deny' | 'answer';
  /** A denial's reason, given to the agent. */
  reason?: string;
  /** A question's answer. */
  answer?: string;
}

/** One entry of a run's transcript, in log order. `text` is text, never markup. */
export type TranscriptEntry = { seq: number; slot: number; attempt: number; at?: string } & (
  | { kind: 'message' | 'thought'; text: string }
  | {
      kind: 'tool_call';
      toolCallId: string;
      title: string;
      toolKind?: string;
      status?: string;
      /** The call's input, as the agent reported it (JSON text). */
      input?: string;
    }
  | { kind: 'tool_result'; toolCallId: string; status: string; text: string }
  | { kind: 'plan'; entries: { content: string; status: string; priority?: string }[] }
  | {
      kind: 'turn';
      turn: number;
      status: 'started' | 'completed' | 'failed' | 'cancelled';
      detail?: string;
    }
  | { kind: 'hook'; hookName: string; status: string; hookSeq?: number; exitCode?: number }
  | { kind: 'hook_output'; hookName: string; hookSeq: number; text: string }
  | { kind: 'git'; step: string; status: string; detail?: string }
  | { kind: 'stderr'; text: string }
  /** Bytes of the log the archive's cap dropped here. */
  | { kind: 'elided'; bytes: number }
);

/**
 * SSE events of /transcript: `entry` (data: TranscriptEntry), `end` (data: {} — the run is
 * over and everything was sent), `error` (data: ApiErrorBody).
 */
export type TranscriptEvent =
  | { event: 'entry'; data: TranscriptEntry }
  | { event: 'end'; data: Record<string, never> }
  | { event: 'error'; data: ApiErrorBody };

/**
 * SSE events of /watch: `run` (data: RunSummary, added or changed), `run_deleted` (data: its
 * uid, namespace and name), `workflow` (data: WorkflowSummary), `workflow_deleted`, and
 * `heartbeat` every 15 s. Only what the caller may list is sent.
 */
export type ChangeEvent =
  | { event: 'run'; data: RunSummary }
  | { event: 'run_deleted'; data: { uid: string; namespace: string; name: string } }
  | { event: 'workflow'; data: WorkflowSummary }
  | { event: 'workflow_deleted'; data: { uid: string; namespace: string; name: string } }
  | { event: 'heartbeat'; data: { at: string } };

/** A day of one workflow's runs and tokens, as the archive sums them. */
export type UsageRowView = UsageRow;

export interface UsageReport {
  rows: UsageRowView[];
}

export interface ActionResult {
  /** What was done: `cancel_requested`, `retried`, `suspended`, `resumed`, `decided`. */
  action: 'cancel_requested' | 'retried' | 'suspended' | 'resumed' | 'decided';
  namespace: string;
  name: string;
  /** For `decided`: the request answered and the verdict written to spec.decisions. */
  requestId?: string;
  verdict?: DecideRequest['verdict'];
}
