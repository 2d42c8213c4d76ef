import { z } from 'zod';
import { HOOK_NAMES, type HookName } from '../workflow/events.js';
import { conditionListSchema } from './conditions.js';
import { kueueQueueNameSchema } from './queue.js';
import { customResourceSchema, usageSchema } from './meta.js';
import { workspaceSourceSchema, workspaceSourceStatusSchema } from './workspace-source.js';
import { OUTPUT_LIMIT, TRUNCATED_OUTPUT_MAX_LENGTH } from '../workspace/output.js';
import { pullRequestStatusSchema, reviewStatusSchema } from './review.js';
import { inboxStatusSchema, specDecisionListSchema } from './inbox.js';
import { dayUsageSchema, USAGE_DAYS_KEPT } from './budget.js';

/**
 * A field that may not change once the IssueRun exists. The rule sits on the field itself
 * (a transition rule: it runs only when the field is in both the old and the new object);
 * adding or removing an optional field is caught by the presence rule on the parent.
 */
function immutable<T extends z.ZodType>(schema: T, path: string): T {
  return schema.meta({
    'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: `${path} is immutable` }],
  });
}

/** A rule on the parent: the optional fields listed may be neither added nor removed. */
function presenceRule(fields: readonly string[], path: string) {
  const has = (root: string) => `[${fields.map((f) => `has(${root}.${f})`).join(', ')}]`;
  return {
    rule: `${has('self')} == ${has('oldSelf')}`,
    message: `fields of ${path} other than ${path === 'spec.issue' ? 'state' : 'cancelRequested'} cannot be added or removed`,
  };
}

// Bounds keep the CEL cost of the immutability rules within the apiserver's budget; they are
// far above what trackers produce.
const text = (max: number, description: string) =>
  z.string().max(max).nullable().optional().describe(description);

export const issueBlockerSchema = z
  .object({
    id: text(256, 'Tracker id of the blocking issue.'),
    identifier: text(256, 'Identifier of the blocking issue.'),
    state: text(256, 'State of the blocking issue.'),
    state_type: text(256, 'State type of the blocking issue.'),
  })
  .describe('An issue that blocks this one.');

const IMMUTABLE_OPTIONAL_ISSUE_FIELDS = [
  'id',
  'description',
  'priority',
  'state_type',
  'branch_name',
  'url',
  'assignee_id',
  'blocked_by',
  'labels',
  'assigned_to_worker',
  'created_at',
  'updated_at',
] as const;

export const issueRunIssueSchema = z
  .object({
    id: immutable(text(256, 'Tracker id of the issue.'), 'spec.issue.id'),
    identifier: immutable(
      z
        .string()
        .min(1)
        .max(256)
        .describe('Human identifier of the issue, e.g. ENG-123; names the workspace.'),
      'spec.issue.identifier',
    ),
    title: immutable(z.string().max(1024).describe('Title of the issue.'), 'spec.issue.title'),
    description: immutable(text(262144, 'Body of the issue.'), 'spec.issue.description'),
    priority: immutable(
      z.int().nullable().optional().describe('Priority (tracker-specific; lower is more urgent).'),
      'spec.issue.priority',
    ),
    state: text(
      256,
      'Tracker state. The only mutable issue field: patching it to a terminal state ends the turn loop.',
    ),
    state_type: immutable(
      text(256, 'Tracker state type (e.g. started, completed).'),
      'spec.issue.state_type',
    ),
    branch_name: immutable(text(512, 'Suggested branch name.'), 'spec.issue.branch_name'),
    url: immutable(text(2048, 'Link to the issue.'), 'spec.issue.url'),
    assignee_id: immutable(text(256, 'Tracker id of the assignee.'), 'spec.issue.assignee_id'),
    blocked_by: immutable(
      z.array(issueBlockerSchema).max(256).optional().describe('Issues blocking this one.'),
      'spec.issue.blocked_by',
    ),
    labels: immutable(
      z
        .array(z.string().max(256))
        .max(256)
        .optional()
        .describe('Labels (normalized to lower case by the controller).'),
      'spec.issue.labels',
    ),
    assigned_to_worker: immutable(
      z
        .boolean()
        .nullable()
        .optional()
        .describe('Whether the issue is assigned to this worker; missing means yes.'),
      'spec.issue.assigned_to_worker',
    ),
    created_at: immutable(text(64, 'Creation time (RFC 3339).'), 'spec.issue.created_at'),
    updated_at: immutable(text(64, 'Last update time (RFC 3339).'), 'spec.issue.updated_at'),
  })
  .meta({
    'x-kubernetes-validations': [presenceRule(IMMUTABLE_OPTIONAL_ISSUE_FIELDS, 'spec.issue')],
  })
  .describe('The normalized issue snapshot (snake_case keys, as the templates see them).');

export const issueRunSpecSchema = z
  .object({
    workflowRef: immutable(
      z
        .object({
          name: z.string().min(1).max(253).describe('Name of the Workflow in this namespace.'),
        })
        .describe('The Workflow that runs this issue.'),
      'spec.workflowRef',
    ),
    issue: issueRunIssueSchema,
    attempt: immutable(
      z
        .int()
        .min(1)
        .optional()
        .describe(
          'The number of the first attempt (default 1). Later attempts, by spec.retries, count up from it.',
        ),
      'spec.attempt',
    ),
    retries: z
      .int()
      .min(0)
      .max(1000)
      .optional()
      .describe(
        'How many times a failed slot is tried again, each a new Pod <run>-<slot>-<attempt> after min(10 s · 2^(attempt−1), agent.max_retry_backoff_ms). Default 0. A cancelled run is never retried.',
      ),
    continueWhileActive: z
      .boolean()
      .optional()
      .describe(
        "Keep working while the issue is active (set on the tracker's runs): every failure is retried with the backoff and every success continues as a new attempt 1 s later, as long as spec.issue.state is one of the Workflow's active states.",
      ),
    cancelRequested: z
      .boolean()
      .optional()
      .describe(
        'Set to true to cancel: the run Pod is stopped with a grace period in which after_run still runs.',
      ),
    decisions: specDecisionListSchema.optional(),
    queueName: immutable(
      kueueQueueNameSchema.describe(
        "A Kueue LocalQueue in this namespace for this run's Pods, in place of its Workflow's spec.queueName.",
      ),
      'spec.queueName',
    ).optional(),
    workspace: immutable(
      z
        .object({
          source: workspaceSourceSchema
            .optional()
            .describe(
              "What this run's workspace starts from, in place of its Workflow's spec.workspace.source (its claim template is the Workflow's).",
            ),
        })
        .describe("This run's workspace."),
      'spec.workspace',
    ).optional(),
  })
  .meta({ 'x-kubernetes-validations': [presenceRule(['attempt', 'workspace'], 'spec')] })
  .describe(
    'The desired state of an IssueRun. Immutable except cancelRequested, decisions, retries, continueWhileActive and issue.state.',
  );

export const runPhaseSchema = z.enum(['Pending', 'Running', 'Succeeded', 'Failed']);
export type RunPhase = z.infer<typeof runPhaseSchema>;

const time = (description: string) =>
  z.string().meta({ format: 'date-time' }).optional().describe(description);

export const slotStatusSchema = z
  .object({
    slot: z.int().min(0).describe('Ensemble slot (0 for a solo run).'),
    phase: runPhaseSchema.optional().describe('Phase of the slot.'),
    reason: z.string().optional().describe('CamelCase reason of the slot outcome.'),
    message: z.string().optional().describe('Human-readable detail.'),
    podName: z.string().optional().describe('The Pod of this slot (latest attempt).'),
    attempt: z.int().min(1).optional().describe('The attempt of this slot running or last run.'),
    host: z
      .string()
      .optional()
      .describe(
        'The SSH worker (an entry of worker.ssh_hosts) the attempt runs on: chosen by the controller, least loaded first, and recorded before its Pod is made.',
      ),
    nextAttemptTime: time('When the next attempt of this slot starts (while it waits to retry).'),
    turns: z.int().min(0).optional().describe('Agent turns run.'),
    firstTurnAfterMs: z
      .int()
      .min(0)
      .optional()
      .describe(
        "How long the attempt's start took: milliseconds from its Pod's creation to the agent's first turn (the runner's clock against the apiserver's). A warm start skips the clone and the setup.",
      ),
    usage: usageSchema.optional(),
  })
  .describe('The state of one ensemble slot.');

/** The limit of status.hooks[].output/error: OUTPUT_LIMIT characters plus the truncation marker. */
export const HOOK_OUTPUT_MAX_LENGTH = TRUNCATED_OUTPUT_MAX_LENGTH;

export const hookStatusSchema = z
  .object({
    slot: z.int().min(0).describe('Ensemble slot that ran the hook.'),
    name: z.enum(HOOK_NAMES as [HookName, ...HookName[]]).describe('Hook name.'),
    status: z.enum(['started', 'completed', 'failed']).describe('Hook execution status.'),
    exitCode: z.int().nullable().optional().describe('Exit code; null when killed or never run.'),
    durationMs: z.int().min(0).optional().describe('Milliseconds from spawn to exit.'),
    output: z
      .string()
      .max(HOOK_OUTPUT_MAX_LENGTH)
      .optional()
      .describe(`Output (stdout and stderr), truncated to ${OUTPUT_LIMIT} characters.`),
    outputTruncated: z.boolean().optional().describe('Whether output was truncated.'),
    error: z
      .string()
      .max(HOOK_OUTPUT_MAX_LENGTH)
      .nullable()
      .optional()
      .describe(`Error message, truncated to ${OUTPUT_LIMIT} characters.`),
    errorTruncated: z.boolean().optional().describe('Whether error was truncated.'),
  })
  .describe('The result of one hook execution.');

export const issueRunStatusSchema = z
  .object({
    observedGeneration: z.int().min(0).optional().describe('The generation last reconciled.'),
    phase: runPhaseSchema.optional().describe('Pending, Running, Succeeded or Failed.'),
    reason: z
      .string()
      .optional()
      .describe('CamelCase reason of the current phase (e.g. HookFailed, Cancelled).'),
    message: z.string().optional().describe('Human-readable detail.'),
    attempt: z.int().min(0).optional().describe('The highest attempt of any slot.'),
    startTime: time('When the first Pod of the run started.'),
    completionTime: time('When the run finished.'),
    duration: z
      .string()
      .optional()
      .describe(
        'How long the run took, from startTime to completionTime (e.g. 4m12s); written when it finishes, as a printer column cannot subtract times.',
      ),
    podName: z.string().optional().describe('The latest run Pod.'),
    slots: z
      .array(slotStatusSchema)
      .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['slot'] })
      .optional()
      .describe('Per ensemble slot results.'),
    hooks: z
      .array(hookStatusSchema)
      .optional()
      .describe('Per hook results, in order of execution.'),
    turn: z.int().min(0).optional().describe('Agent turns run (the maximum across slots).'),
    usage: usageSchema.optional(),
    usageDays: z
      .array(dayUsageSchema)
      .max(USAGE_DAYS_KEPT)
      .optional()
      .describe(
        `What the run used by day (the newest ${USAGE_DAYS_KEPT}), for the Workflow's daily budget.`,
      ),
    configDigest: z
      .string()
      .optional()
      .describe('sha256 of the WORKFLOW.md the run was rendered from.'),
    inputsConfigMap: z
      .string()
      .optional()
      .describe('The ConfigMap holding the rendered prompt and hooks.'),
    git: z
      .object({
        branch: z
          .string()
          .describe(
            "The issue's branch, worked out from workspace.git.branch when the run started and kept for every later attempt.",
          ),
        pullRequest: pullRequestStatusSchema.optional(),
      })
      .optional()
      .describe('The git workspace of the run (workspace.git).'),
    workspaceSource: workspaceSourceStatusSchema.optional(),
    review: reviewStatusSchema.optional(),
    inbox: inboxStatusSchema.optional(),
    conditions: conditionListSchema.optional(),
  })
  .describe('The observed state of an IssueRun.');

export const issueRunSchema = customResourceSchema(issueRunSpecSchema, issueRunStatusSchema);

export type IssueRunIssue = z.infer<typeof issueRunIssueSchema>;
export type IssueRunSpec = z.infer<typeof issueRunSpecSchema>;
export type IssueRunStatus = z.infer<typeof issueRunStatusSchema>;
export type SlotStatus = z.infer<typeof slotStatusSchema>;
export type HookStatus = z.infer<typeof hookStatusSchema>;
export type IssueRun = z.infer<typeof issueRunSchema>;
