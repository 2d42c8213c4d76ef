import { z } from 'zod';
import { LorenzError } from './errors.js';
import { describeZodIssue } from './zod-messages.js';

/**
 * The normalized issue, with snake_case keys (`branch_name`, `blocked_by`). Trackers normalize
 * into it, `lorenz run --issue FILE` reads it, IssueRun.spec.issue holds it, and WORKFLOW.md's
 * templates see it exactly as it is here.
 */
export const blockerSchema = z.object({
  id: z.string().nullable().default(null),
  identifier: z.string().nullable().default(null),
  state: z.string().nullable().default(null),
  state_type: z.string().nullable().default(null),
});

export const issueSchema = z.object({
  id: z.string().nullable().default(null),
  identifier: z.string().min(1),
  title: z.string(),
  description: z.string().nullable().default(null),
  priority: z.number().int().nullable().default(null),
  state: z.string().nullable().default(null),
  state_type: z.string().nullable().default(null),
  branch_name: z.string().nullable().default(null),
  url: z.string().nullable().default(null),
  assignee_id: z.string().nullable().default(null),
  blocked_by: z.array(blockerSchema).default([]),
  labels: z.array(z.string()).default([]),
  assigned_to_worker: z.boolean().nullable().optional(),
  created_at: z.string().nullable().default(null),
  updated_at: z.string().nullable().default(null),
});

export type IssueInput = z.input<typeof issueSchema>;
export type Blocker = z.output<typeof blockerSchema>;
/** A normalized issue. `assigned_to_worker` is always a boolean (missing means assigned). */
export type Issue = Omit<z.output<typeof issueSchema>, 'assigned_to_worker'> & {
  assigned_to_worker: boolean;
};

/**
 * Validate and normalize an issue: labels trimmed and lower-cased, missing keys null,
 * `assigned_to_worker` true unless it is explicitly false. `where` names the source
 * (`issue file F`, `spec.issue`) in the error: `issue file F: key "identifier" is required`.
 */
export function normalizeIssue(raw: unknown, where = 'issue'): Issue {
  const parsed = issueSchema.safeParse(raw, { reportInput: true });
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    // The offending values stay out of the detail: an issue may carry anything.
    throw new LorenzError(
      'invalid_issue',
      `${where}: ${first ? describeZodIssue(first) : 'not a valid issue'}`,
      { paths: parsed.error.issues.map((issue) => issue.path.map(String)) },
    );
  }
  const issue = parsed.data;
  return {
    ...issue,
    labels: issue.labels.map((label) => label.trim().toLowerCase()),
    assigned_to_worker: issue.assigned_to_worker !== false,
  };
}
