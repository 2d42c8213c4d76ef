import { z } from 'zod';

/**
 * Where an attempt's workspace starts from (docs/snapshots.md): a clean, empty volume, or a
 * VolumeSnapshot of a prepared one paired with the sha256 digest of the tree it holds. The
 * digest is what makes a snapshot trustworthy: the runner computes the restored tree's
 * digest before the first hook and refuses to run on anything else, so whoever can write a
 * snapshot's content still cannot hand a run a tree other than the one the Workflow names.
 */

/** The API group of VolumeSnapshots (the external-snapshotter's CRDs), as a claim's dataSource names it. */
export const SNAPSHOT_API_GROUP = 'snapshot.storage.k8s.io';
export const SNAPSHOT_API_VERSION = 'v1';
export const VOLUME_SNAPSHOT_KIND = 'VolumeSnapshot';

/**
 * The directory at the root of a snapshot's volume that holds the prepared workspace. A run's
 * workspace is `<volume>/<issue identifier>`, so one snapshot serves every issue: the runner
 * checks this directory's digest and renames it to the issue's workspace.
 */
export const SOURCE_TREE_DIR = '.lorenz-source';

/** `sha256:` and 64 lower-case hex digits, as workspaceTreeDigest answers. */
export const TREE_DIGEST_PATTERN = '^sha256:[0-9a-f]{64}$';

export const workspaceSourceSchema = z
  .object({
    clean: z
      .object({})
      .optional()
      .describe('Start from an empty volume (the default when no source is given).'),
    volumeSnapshot: z
      .object({
        name: z
          .string()
          .min(1)
          .max(253)
          .describe(
            "A VolumeSnapshot (snapshot.storage.k8s.io/v1) in the run's namespace; a claim can only be restored from a snapshot of its own namespace.",
          ),
      })
      .optional()
      .describe(
        `Restore the workspace claim from this snapshot: its volume holds the prepared workspace in ${SOURCE_TREE_DIR}/. Needs workspace.volumeClaimTemplate.`,
      ),
    digest: z
      .string()
      .regex(new RegExp(TREE_DIGEST_PATTERN))
      .optional()
      .describe(
        `The sha256 digest of the tree in the snapshot's ${SOURCE_TREE_DIR}/ (docs/snapshots.md#the-workspace-digest); the runner refuses a tree with any other digest before the first hook (snapshot_digest_mismatch).`,
      ),
  })
  .meta({
    'x-kubernetes-validations': [
      {
        rule: 'has(self.clean) != has(self.volumeSnapshot)',
        message: 'exactly one of clean and volumeSnapshot must be set',
      },
      {
        rule: 'has(self.volumeSnapshot) == has(self.digest)',
        message: 'digest goes with volumeSnapshot, and only with it',
      },
    ],
  })
  .describe(
    "What the workspace starts from: clean, or a VolumeSnapshot paired with its tree's digest.",
  );
export type WorkspaceSource = z.infer<typeof workspaceSourceSchema>;

/** What an attempt started from, as the IssueRun's status records it. */
export const workspaceSourceStatusSchema = z
  .object({
    type: z.enum(['Clean', 'VolumeSnapshot']).describe('Clean or VolumeSnapshot.'),
    volumeSnapshot: z.string().optional().describe('The snapshot the claim was restored from.'),
    digest: z.string().optional().describe("The tree's digest the runner checked."),
    commit: z
      .string()
      .optional()
      .describe('For a warm snapshot: the commit of the default branch it was prepared at.'),
  })
  .describe('What the workspace started from, fixed when the run first started.');
export type WorkspaceSourceStatus = z.infer<typeof workspaceSourceStatusSchema>;

const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== '' ? value : undefined;

/**
 * A run's `status.workspaceSource` as one line, for people (`lorenz describe run`, the web
 * view): `clean`, or the snapshot with its digest and, for a warm one, the commit it was
 * prepared at. Undefined when nothing is recorded (the run has not started). Takes the raw
 * JSON both readers hold: a live object, or one from the archive.
 */
export function workspaceStartText(source: unknown): string | undefined {
  if (typeof source !== 'object' || source === null) return undefined;
  const record = source as Record<string, unknown>;
  if (record.type === 'Clean') return 'clean';
  const snapshot = text(record.volumeSnapshot);
  if (snapshot === undefined) return undefined;
  const commit = text(record.commit);
  const details = [text(record.digest), commit ? `commit ${commit}` : undefined].filter(Boolean);
  return `VolumeSnapshot ${snapshot}${details.length ? ` (${details.join(', ')})` : ''}`;
}
