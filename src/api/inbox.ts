import { z } from 'zod';

/**
 * The inbox's part of the API (docs/approvals.md): an agent's permission requests and
 * questions that wait for a person, the decisions made on them, and the steering comments
 * for a running agent.
 *
 * The flow, and who writes what:
 * - The runner in the run Pod holds the ACP request open and POSTs it to the agent-tools
 *   gateway with its attempt's token (INBOX_PATHS.requests). The gateway, on any replica,
 *   stores it in an IssueRun annotation (`inboxRequestAnnotation(id)`): a metadata patch,
 *   which no status write can wipe.
 * - The inbox controller (the leader's) copies it into `status.inbox.pending`, comments on
 *   the issue once through the tracker writer, and reads the comments (every
 *   `agent.approvals.poll_interval_ms`, and at once on a tracker webhook) for `/approve`,
 *   `/deny`, answers, `/steer` and `/stop`. A decision made in Kubernetes (`spec.decisions`,
 *   written by `lorenz approve` and the web view: a patch on the IssueRun, so RBAC decides
 *   who may) counts the same. Decisions go to `status.inbox.decided`.
 * - The runner long-polls the gateway (INBOX_PATHS.request(id)), which answers from the
 *   IssueRun in its informer cache. Steers are taken the same way (INBOX_PATHS.steers); the
 *   gateway marks what a slot took in `inboxSteeredAnnotation(slot)`.
 * Nothing in the Pod holds a tracker credential, and a controller restart loses nothing: the
 * request is on the IssueRun and the reply is on the issue.
 */

/** Bounds of everything an agent or a commenter can make long. */
export const INBOX_LIMITS = {
  requestIdLength: 40,
  titleLength: 1024,
  commandLength: 4096,
  pathLength: 1024,
  paths: 16,
  /** Options kept of a request; the rest are counted in `optionsOmitted`. */
  options: 16,
  optionTextLength: 256,
  messageLength: 4096,
  reasonLength: 2048,
  answerLength: 16_384,
  steerLength: 16_384,
  /** Requests waiting at once per run; more are decided at once by `on_timeout`. */
  pending: 8,
  /** Decisions kept in status (newest). */
  decided: 32,
  /** Steers kept in status (newest). */
  steers: 16,
  /** Comment ids kept as acted upon (newest), so a comment is never acted on twice. */
  handledComments: 256,
  /** Authors told once per request that they are not approvers. */
  noticed: 16,
  /** spec.decisions entries. */
  specDecisions: 32,
  /** The longest a runner's long poll may ask to wait. */
  maxWaitMs: 30_000,
} as const;

/** The runner's endpoints on the agent-tools gateway, under the same bearer token as /mcp. */
export const INBOX_PATHS = {
  /** POST an InboxRequest (idempotent by id): 202 {id}. */
  requests: '/inbox/v1/requests',
  /** GET ?wait_ms=N (≤ maxWaitMs): 200 {decision: InboxDecision | null}. */
  request: (id: string) => `/inbox/v1/requests/${encodeURIComponent(id)}`,
  /** POST a PolicyReport (a decision policy made alone): 202; the gateway records an Event. */
  reports: '/inbox/v1/reports',
  /** POST {slot}: 200 {steers: SteerDelivery[]}; each steer is handed to a slot once. */
  steers: '/inbox/v1/steers',
} as const;

/** Where the gateway leaves a runner's request for the inbox controller (one per request). */
export const INBOX_REQUEST_ANNOTATION_PREFIX = 'inbox.lorenz.dev/request-';
export const inboxRequestAnnotation = (id: string): string =>
  `${INBOX_REQUEST_ANNOTATION_PREFIX}${id}`;
/** The highest steer seq a slot has taken (a decimal string). */
export const INBOX_STEERED_ANNOTATION_PREFIX = 'inbox.lorenz.dev/steered-';
export const inboxSteeredAnnotation = (slot: number): string =>
  `${INBOX_STEERED_ANNOTATION_PREFIX}${slot}`;

/**
 * The hidden marker every comment Lorenz writes for the inbox starts with, so the
 * controller never reads its own comments as replies (the tracker user may be an approver).
 */
export const INBOX_COMMENT_MARKER = '<!-- lorenz:inbox -->';

/** Reasons of the inbox: slot reasons while waiting, and the Events it writes. */
export const InboxReasons = {
  /** A slot waits for a person to answer a permission request. */
  AwaitingApproval: 'AwaitingApproval',
  /** A slot waits for a person to answer a question. */
  AwaitingAnswer: 'AwaitingAnswer',
  ApprovalRequested: 'ApprovalRequested',
  ApprovalGranted: 'ApprovalGranted',
  ApprovalDenied: 'ApprovalDenied',
  ApprovalTimedOut: 'ApprovalTimedOut',
  /** A rule (or the default) allowed a request without asking. */
  ApprovalAllowedByPolicy: 'ApprovalAllowedByPolicy',
  /** A rule (or the default) denied a request without asking. */
  ApprovalDeniedByPolicy: 'ApprovalDeniedByPolicy',
  QuestionAsked: 'QuestionAsked',
  QuestionAnswered: 'QuestionAnswered',
  SteerReceived: 'SteerReceived',
  SteerDelivered: 'SteerDelivered',
  StopRequested: 'StopRequested',
  /** A reply the inbox did not act on (not an approver, already decided, no request). */
  ReplyIgnored: 'ReplyIgnored',
  /** The tracker refused the inbox's comment; the request still times out as configured. */
  TrackerCommentFailed: 'TrackerCommentFailed',
} as const;
export type InboxReason = (typeof InboxReasons)[keyof typeof InboxReasons];

const REQUEST_ID = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/;
const time = (description: string) =>
  z.string().meta({ format: 'date-time' }).describe(description);
const bounded = (max: number, description: string) => z.string().max(max).describe(description);

export const inboxRequestIdSchema = z
  .string()
  .min(1)
  .max(INBOX_LIMITS.requestIdLength)
  .regex(REQUEST_ID)
  .describe('The request id the runner made (`a<attempt>-s<slot>-<n>`): unique within the run.');

export const inboxOptionSchema = z
  .object({
    optionId: bounded(INBOX_LIMITS.optionTextLength, 'The ACP option id.'),
    name: bounded(INBOX_LIMITS.optionTextLength, 'The option as the agent named it.'),
    kind: bounded(64, 'allow_once, allow_always, reject_once or reject_always.'),
  })
  .describe('One option the agent offered.');

export const inboxRequestSchema = z
  .object({
    id: inboxRequestIdSchema,
    kind: z
      .enum(['permission', 'question'])
      .describe('permission (ACP session/request_permission) or question (an elicitation).'),
    slot: z.int().min(0).describe('The ensemble slot whose agent asks.'),
    attempt: z.int().min(1).describe('The attempt whose agent asks.'),
    turn: z.int().min(0).describe('The turn that asks.'),
    title: bounded(
      INBOX_LIMITS.titleLength,
      "The tool call's title, or the question's first line.",
    ),
    toolKind: bounded(64, 'The ACP tool kind (execute, edit, read, …).').optional(),
    command: bounded(INBOX_LIMITS.commandLength, 'The command line, for a command.').optional(),
    paths: z
      .array(bounded(INBOX_LIMITS.pathLength, 'A path the tool call touches.'))
      .max(INBOX_LIMITS.paths)
      .optional()
      .describe('The paths the tool call touches, for edits and reads.'),
    options: z
      .array(inboxOptionSchema)
      .max(INBOX_LIMITS.options)
      .describe('The options the agent offered (bounded; see optionsOmitted).'),
    optionsOmitted: z.int().min(0).optional().describe('How many more options were offered.'),
    message: bounded(INBOX_LIMITS.messageLength, 'The question, for a question.').optional(),
    rule: z
      .int()
      .min(0)
      .optional()
      .describe('The index of the agent.approvals rule that said ask (absent: the default).'),
    ruleReason: bounded(
      INBOX_LIMITS.reasonLength,
      "The rule's reason, shown with the request.",
    ).optional(),
    askedAt: time('When the runner asked.'),
    deadline: time('When the wait ends with agent.approvals.on_timeout.'),
  })
  .describe('A permission request or a question waiting for a person.');

export const inboxPendingSchema = inboxRequestSchema
  .extend({
    commentId: bounded(256, 'The comment the request was posted as on the issue.').optional(),
    commentedAt: time('When that comment was posted.').optional(),
    commentError: bounded(
      INBOX_LIMITS.reasonLength,
      'Why the tracker refused the comment (tried again until the deadline).',
    ).optional(),
    noticed: z
      .array(bounded(256, 'A comment author.'))
      .max(INBOX_LIMITS.noticed)
      .optional()
      .describe('Authors already told they may not answer this request.'),
  })
  .describe('A request in status.inbox.pending.');

export const inboxVerdictSchema = z.enum([
  'approve',
  'approve_always',
  'deny',
  'answer',
  'timeout',
]);
export type InboxVerdict = z.infer<typeof inboxVerdictSchema>;

/**
 * What a decision says beside its verdict, as a person writes it (spec.decisions) and as the
 * inbox records it (status.inbox.decided); only the descriptions differ.
 */
const decisionWords = (described: { reason: string; by: string }) => ({
  reason: bounded(INBOX_LIMITS.reasonLength, described.reason).optional(),
  answer: bounded(INBOX_LIMITS.answerLength, "A question's answer.").optional(),
  by: bounded(256, described.by).optional(),
});

export const inboxDecisionSchema = z
  .object({
    requestId: inboxRequestIdSchema,
    verdict: inboxVerdictSchema.describe(
      'approve, approve_always (for the rest of the attempt), deny, answer (a question), or timeout (agent.approvals.on_timeout applies).',
    ),
    ...decisionWords({
      reason: "A denial's reason, given to the agent.",
      by: 'Who decided (a tracker user, or the Kubernetes user of spec.decisions).',
    }),
    via: z
      .enum(['comment', 'kubernetes', 'timeout'])
      .describe('comment (on the issue), kubernetes (spec.decisions) or timeout.'),
    commentId: bounded(256, 'The reply that decided, for via comment.').optional(),
    at: time('When the decision was made.'),
  })
  .describe('The answer to one request.');

export const inboxSteerSchema = z
  .object({
    seq: z.int().min(1).describe('Counts up per run; a slot takes each seq once.'),
    text: bounded(INBOX_LIMITS.steerLength, 'What the person asks of the agent.'),
    by: bounded(256, 'Who wrote it.').optional(),
    commentId: bounded(256, 'The comment it came from.').optional(),
    at: time('When it was read.'),
  })
  .describe('A /steer comment, given to the agent as its next turn.');

export const inboxStatusSchema = z
  .object({
    pending: z
      .array(inboxPendingSchema)
      .max(INBOX_LIMITS.pending)
      .optional()
      .describe('Requests waiting for a person.'),
    decided: z
      .array(inboxDecisionSchema)
      .max(INBOX_LIMITS.decided)
      .optional()
      .describe('Decisions made (newest last, bounded).'),
    steers: z
      .array(inboxSteerSchema)
      .max(INBOX_LIMITS.steers)
      .optional()
      .describe('Steers read from the issue (newest last, bounded).'),
    steerSeq: z.int().min(0).optional().describe('The seq of the newest steer.'),
    handledComments: z
      .array(bounded(256, 'A comment id.'))
      .max(INBOX_LIMITS.handledComments)
      .optional()
      .describe('Comments already acted upon or answered (newest last, bounded).'),
    lastReadTime: time("When the issue's comments were last read.").optional(),
    stopRequested: z.boolean().optional().describe('Whether a /stop comment cancelled the run.'),
    reason: z.string().max(256).optional().describe('CamelCase reason of the last inbox problem.'),
    message: bounded(INBOX_LIMITS.reasonLength, 'Human-readable detail of it.').optional(),
  })
  .describe('The inbox of the run: requests waiting, decisions, steers (docs/approvals.md).');

export const specDecisionSchema = z
  .object({
    requestId: inboxRequestIdSchema,
    verdict: z
      .enum(['approve', 'approve_always', 'deny', 'answer'])
      .describe('approve, approve_always, deny or answer.'),
    ...decisionWords({
      reason: "A denial's reason.",
      by: 'Who decided, as the writer says it (lorenz approve: the kubeconfig user).',
    }),
  })
  .describe('A decision made in Kubernetes (lorenz approve, the web view).');

export const specDecisionListSchema = z
  .array(specDecisionSchema)
  .max(INBOX_LIMITS.specDecisions)
  .describe(
    'Answers to the requests in status.inbox.pending, by request id: written by `lorenz approve` and the web view. Who may write them is who may patch the IssueRun.',
  );

/** A decision the runner's policy made alone, reported for the record (an Event). */
export const policyReportSchema = z.object({
  request: inboxRequestSchema.omit({ deadline: true }),
  outcome: z.enum(['allow', 'deny']),
  /** always: an earlier `/approve always` of the same rule. */
  via: z.enum(['policy', 'always', 'rate_limit', 'unavailable']),
});

/** What the gateway hands a runner for a steer. */
export const steerDeliverySchema = inboxSteerSchema.pick({ seq: true, text: true, by: true });

export type InboxRequest = z.infer<typeof inboxRequestSchema>;
export type InboxOption = z.infer<typeof inboxOptionSchema>;
export type InboxPending = z.infer<typeof inboxPendingSchema>;
export type InboxDecision = z.infer<typeof inboxDecisionSchema>;
export type InboxSteer = z.infer<typeof inboxSteerSchema>;
export type InboxStatus = z.infer<typeof inboxStatusSchema>;
export type SpecDecision = z.infer<typeof specDecisionSchema>;
export type PolicyReport = z.infer<typeof policyReportSchema>;
export type SteerDelivery = z.infer<typeof steerDeliverySchema>;
