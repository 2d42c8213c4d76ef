import { z } from 'zod';
import { type GitlabTransport, gitlabFailure, gitlabGet } from './gitlab-transport.js';

// The shapes of GitLab REST v4 answers, as much of each as the review loop reads (extra
// fields pass). Where GitLab's docs say a field may be null, it may be null here too.

const author = z.object({ username: z.string() }).nullish();

export const userSchema = z.object({ username: z.string() });

export const projectSchema = z.object({
  id: z.number(),
  path_with_namespace: z.string().optional(),
  default_branch: z.string().nullable(),
});

export const branchSchema = z.object({
  name: z.string(),
  commit: z.object({ id: z.string() }),
});

export const compareSchema = z.object({
  commits: z.array(z.object({ id: z.string() })),
});

export const mergeRequestSchema = z.object({
  iid: z.number(),
  project_id: z.number(),
  source_project_id: z.number().nullish(),
  title: z.string(),
  state: z.enum(['opened', 'closed', 'merged', 'locked']),
  draft: z.boolean().optional(),
  work_in_progress: z.boolean().optional(),
  source_branch: z.string(),
  target_branch: z.string(),
  sha: z.string().nullable(),
  web_url: z.string(),
});
export type GitlabMergeRequest = z.infer<typeof mergeRequestSchema>;

export const approvalsSchema = z.object({
  approved_by: z.array(
    z.object({
      user: z.object({ username: z.string() }),
      approved_at: z.string().nullish(),
    }),
  ),
});

export const reviewerSchema = z.object({
  user: z.object({ username: z.string() }),
  state: z.string(),
  created_at: z.string().nullish(),
});

const position = z
  .object({
    new_path: z.string().nullish(),
    old_path: z.string().nullish(),
    new_line: z.number().nullish(),
    old_line: z.number().nullish(),
  })
  .nullish();

export const noteSchema = z.object({
  id: z.number(),
  type: z.string().nullish(),
  body: z.string(),
  author,
  created_at: z.string().nullish(),
  system: z.boolean(),
  position,
});
export type GitlabNote = z.infer<typeof noteSchema>;

export const discussionSchema = z.object({
  id: z.string(),
  notes: z.array(z.unknown()),
});

export const pipelineSchema = z.object({
  id: z.number(),
  sha: z.string(),
  status: z.string(),
  web_url: z.string().nullish(),
});

/** What a pipeline job and an external commit status share: each is one check of a commit. */
const checkSchema = z.object({
  id: z.number(),
  name: z.string(),
  status: z.string(),
  allow_failure: z.boolean().optional(),
});

export const jobSchema = checkSchema.extend({
  failure_reason: z.string().nullish(),
  web_url: z.string().nullish(),
});
export type GitlabJob = z.infer<typeof jobSchema>;

export const commitStatusSchema = checkSchema.extend({
  description: z.string().nullish(),
  target_url: z.string().nullish(),
});
export type GitlabCommitStatus = z.infer<typeof commitStatusSchema>;

/** One answer, checked: a wrong shape is `codehost_response`, naming the path. */
export function parseAnswer<T>(
  transport: GitlabTransport,
  schema: z.ZodType<T>,
  body: unknown,
  path: string,
): T {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue === undefined ? '' : ` (${issue.path.join('.') || 'root'}: ${issue.message})`;
  throw gitlabFailure(
    transport,
    'codehost_response',
    `GitLab's answer for ${path} is not what its API documents${where}`,
    { path },
  );
}

/** GET one URL and check its answer against the schema (parseAnswer, naming the URL's path). */
export async function getChecked<T>(
  transport: GitlabTransport,
  schema: z.ZodType<T>,
  url: string,
  signal: AbortSignal | undefined,
): Promise<T> {
  const answer = await gitlabGet(transport, url, { signal });
  return parseAnswer(transport, schema, answer.body, new URL(url).pathname);
}

/**
 * The items of a list that fit the schema; the others are dropped with a warning, so one
 * odd item (a note type this version does not know) does not hide the rest.
 */
export function parseItems<T>(
  schema: z.ZodType<T>,
  items: readonly unknown[],
  what: string,
  onWarning: (message: string) => void,
): T[] {
  const out: T[] = [];
  for (const item of items) {
    const parsed = schema.safeParse(item);
    if (parsed.success) out.push(parsed.data);
    else onWarning(`a GitLab ${what} that does not fit the documented shape was left out`);
  }
  return out;
}
