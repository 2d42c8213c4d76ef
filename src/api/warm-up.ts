import { z } from 'zod';
import { TREE_DIGEST_PATTERN } from './workspace-source.js';

/**
 * The warm-up contract: what a Workflow's warm-up Pod (`lorenz runner --prepare`) is given and
 * what it reports back, shared by the runner and the warm controller so the two cannot
 * disagree (docs/snapshots.md#warm-workspaces).
 *
 * A warm-up prepares the workspace every dispatched issue of the Workflow starts from, at the
 * head of the git workspace's default branch: it clones the default branch into
 * `<volume>/.lorenz-source/` (SOURCE_TREE_DIR), runs the repository's setup and the
 * `after_create` hook there, and digests the tree. The controller then snapshots the volume
 * and records the digest in the Workflow's `status.warm`.
 */

/**
 * The issue a warm-up renders its hooks with. A warm snapshot serves every issue, so the
 * hooks it runs (after_create) must not depend on the issue: the controller refuses
 * `workspace.warm` when after_create renders differently for two issues, and this fixed
 * issue is what the runner renders with.
 */
export const WARM_UP_ISSUE = {
  id: null,
  identifier: 'warm-up',
  title: 'Warm-up of the Workflow prepared workspace',
  description: null,
  priority: null,
  state: null,
  state_type: null,
  branch_name: null,
  url: null,
  assignee_id: null,
  blocked_by: [],
  labels: [],
  created_at: null,
  updated_at: null,
} as const;

/** The termination message is capped by the kubelet at 4096 bytes: errors are cut to this. */
export const WARM_UP_ERROR_CHARS = 1_500;

const warmUpPrepared = z.object({
  outcome: z.literal('prepared'),
  digest: z.string().regex(new RegExp(TREE_DIGEST_PATTERN)),
  /** The default branch's commit the tree was cloned at; null without workspace.git. */
  commit: z.string().nullable(),
  files: z.number().int().nonnegative(),
  bytes: z.number().int().nonnegative(),
  /** Clone, repository setup and after_create, in milliseconds. */
  prepareMs: z.number().nonnegative(),
  /** The tree digest, in milliseconds. */
  digestMs: z.number().nonnegative(),
});

const warmUpUnchanged = z.object({
  outcome: z.literal('unchanged'),
  /** The default branch's head, equal to `--unless-commit`: nothing was prepared. */
  commit: z.string(),
});

/**
 * A head check (`--unless-commit`) found the default branch moved on. A check prepares
 * nothing, whatever it finds: its Pod has no claim to prepare on, and the controller starts a
 * full warm-up next.
 */
const warmUpMoved = z.object({
  outcome: z.literal('moved'),
  /** The default branch's head now. */
  commit: z.string(),
});

const warmUpFailed = z.object({
  outcome: z.literal('failed'),
  /** A LorenzError code (workspace_clone_failed, hook_failed, ...) or runner_failed. */
  errorCode: z.string(),
  error: z.string(),
});

export const warmUpResultSchema = z.discriminatedUnion('outcome', [
  warmUpPrepared,
  warmUpUnchanged,
  warmUpMoved,
  warmUpFailed,
]);
export type WarmUpResult = z.infer<typeof warmUpResultSchema>;

/** The termination message's text: one JSON object, errors cut to fit the kubelet's cap. */
export function encodeWarmUpResult(result: WarmUpResult): string {
  if (result.outcome !== 'failed') return JSON.stringify(result);
  return JSON.stringify({ ...result, error: result.error.slice(0, WARM_UP_ERROR_CHARS) });
}

/** The result a warm-up Pod's termination message holds, or null when it holds none. */
export function decodeWarmUpResult(text: string | undefined): WarmUpResult | null {
  if (text === undefined || text.trim() === '') return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  const parsed = warmUpResultSchema.safeParse(value);
  return parsed.success ? parsed.data : null;
}
