import { z } from 'zod';

/**
 * Warm workspaces (docs/snapshots.md#warm-workspaces): a Workflow keeps a VolumeSnapshot of
 * its workspace prepared at the default branch's head, and its runs start from it. The spec
 * says how often the head is checked and what runs do while no snapshot is ready; the status
 * is the warm controller's alone (src/controller/warm/), written as a merge patch of
 * `status.warm` that no other writer of the Workflow's status touches.
 */

/** How often the default branch's head is checked when spec.workspace.warm gives no interval. */
export const DEFAULT_WARM_REFRESH_INTERVAL = '10m';
/** The shortest interval the controller checks at: a shorter one is taken as this. */
export const MIN_WARM_REFRESH_MS = 60_000;

/** Go-style durations of whole hours, minutes and seconds (`10m`, `1h30m`, `90s`). */
export const WARM_REFRESH_INTERVAL_PATTERN = '^([0-9]+h)?([0-9]+m)?([0-9]+s)?$';

export const WARM_FALLBACKS = ['wait', 'clean'] as const;
export type WarmFallback = (typeof WARM_FALLBACKS)[number];

export const warmWorkspaceSchema = z
  .object({
    refreshInterval: z
      .string()
      .min(2)
      .max(32)
      .regex(new RegExp(WARM_REFRESH_INTERVAL_PATTERN))
      .optional()
      .describe(
        `How often the default branch's head is checked (a warm-up that prepares nothing when the head has not moved), as hours, minutes and seconds (\`10m\`, \`1h30m\`); default ${DEFAULT_WARM_REFRESH_INTERVAL}, at least 1m.`,
      ),
    fallback: z
      .enum(WARM_FALLBACKS)
      .optional()
      .describe(
        'What runs do while no warm snapshot is ready: wait (the default: held Stalled, WarmWorkspaceNotReady) or clean (start from an empty volume).',
      ),
  })
  .describe(
    "Keep a VolumeSnapshot of the workspace prepared at the default branch's head, for runs to start from (docs/snapshots.md#warm-workspaces). Needs volumeClaimTemplate; not with source.",
  );
export type WarmWorkspace = z.infer<typeof warmWorkspaceSchema>;

const time = (description: string) =>
  z.string().meta({ format: 'date-time' }).optional().describe(description);

export const warmStatusSchema = z
  .object({
    snapshot: z
      .string()
      .optional()
      .describe('The newest ready warm VolumeSnapshot runs start from; absent until one is.'),
    digest: z.string().optional().describe("Its tree's digest, as the warm-up reported it."),
    commit: z
      .string()
      .optional()
      .describe('The default branch commit it holds; absent without workspace.git.'),
    readyAt: time('When the snapshot became ready.'),
    build: z
      .int()
      .min(0)
      .optional()
      .describe('The number of the last warm-up started: its objects are <workflow>-warm-<build>.'),
    building: z.string().optional().describe('The warm-up in progress; absent when none.'),
    checkedAt: time(
      "When the default branch's head was last checked (a warm-up that prepared or found it unchanged).",
    ),
    configDigest: z
      .string()
      .optional()
      .describe('sha256 of the configuration that shaped the snapshot; a change rebuilds it.'),
    failures: z
      .int()
      .min(1)
      .optional()
      .describe(
        'Warm-ups failed in a row since the last that succeeded; the next waits 30 s·2^(failures-1), at most 10 min. Absent after a success.',
      ),
    failedAt: time('When the last of those failures was recorded: the backoff runs from it.'),
    reason: z
      .string()
      .optional()
      .describe(
        'WarmUpRunning, WarmUpSucceeded, WarmUpFailed or WarmWorkspaceUnsupported: how the warm workspace stands.',
      ),
    message: z.string().optional().describe('A human-readable account of the reason.'),
  })
  .describe("The Workflow's warm workspace, written by the warm controller only.");
export type WarmStatus = z.infer<typeof warmStatusSchema>;

/** Every key of status.warm: a merge patch names those it drops as null. */
export const WARM_STATUS_KEYS = Object.keys(warmStatusSchema.shape) as (keyof WarmStatus)[];

/**
 * A refresh interval in milliseconds (DEFAULT_WARM_REFRESH_INTERVAL when absent), at least
 * MIN_WARM_REFRESH_MS; null when it does not parse (admission refuses those).
 */
export function warmRefreshMs(interval: string | undefined): number | null {
  const text = interval ?? DEFAULT_WARM_REFRESH_INTERVAL;
  const match = new RegExp(WARM_REFRESH_INTERVAL_PATTERN).exec(text);
  if (!match || text === '') return null;
  const [hours, minutes, seconds] = [match[1], match[2], match[3]].map((part) =>
    part === undefined ? 0 : Number.parseInt(part, 10),
  );
  const ms = (((hours ?? 0) * 60 + (minutes ?? 0)) * 60 + (seconds ?? 0)) * 1000;
  return Math.max(ms, MIN_WARM_REFRESH_MS);
}
