import { lstat, mkdir, rename } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { SOURCE_TREE_DIR } from '../api/workspace-source.js';
import { LorenzError } from '../workflow/errors.js';
import type { EventSink } from '../workflow/events.js';
import type { Issue } from '../workflow/issue.js';
import { ensembleSize } from '../workspace/ensemble.js';
import { workspacePath } from '../workspace/paths.js';
import { verifyWorkspaceDigest } from '../workspace/tree-digest.js';

/**
 * The warm start's first step, before any hook (docs/snapshots.md): a claim restored from a
 * snapshot holds the prepared tree in SOURCE_TREE_DIR at its root. Its digest must be the one
 * the run was given; then it becomes the issue's workspace by a rename (same volume: no copy),
 * so the lifecycle finds the workspace there and does not run after_create again.
 *
 * A later attempt of the same run finds the workspace already in place (its claim outlives
 * the Pod): that tree is the run's own work, checked when it was restored, and is reused.
 */
export type SnapshotRestore =
  | { kind: 'restored'; digest: string; files: number; bytes: number; durationMs: number }
  | { kind: 'reused' };

export async function restoreSnapshotWorkspace(options: {
  /** The volume's root (the lifecycle's workspace root). */
  root: string;
  /** The issue's workspace below it (workspacePath). */
  workspace: string;
  /** `sha256:<hex>`, from the run's source. */
  expectedDigest: string;
}): Promise<SnapshotRestore> {
  const startedAt = performance.now();
  if (await exists(options.workspace)) return { kind: 'reused' };
  const source = join(options.root, SOURCE_TREE_DIR);
  if (!(await exists(source))) {
    throw new LorenzError(
      'snapshot_tree_missing',
      `snapshot_tree_missing: the restored volume has no ${SOURCE_TREE_DIR}/ at ${options.root} and no workspace ${options.workspace}: the snapshot holds no prepared workspace`,
      { root: options.root },
    );
  }
  const tree = await verifyWorkspaceDigest(source, options.expectedDigest);
  await mkdir(dirname(options.workspace), { recursive: true });
  await rename(source, options.workspace);
  return {
    kind: 'restored',
    digest: tree.digest,
    files: tree.files,
    bytes: tree.bytes,
    durationMs: Math.round(performance.now() - startedAt),
  };
}

/**
 * The runner's restore step: with a source digest, the slot's workspace made from the claim's
 * prepared tree before the lifecycle (and so before any hook) starts, and a
 * `workspace_restored` record written. Answers the slots restored (the lifecycle adopts their
 * clone instead of making one). The controller never gives a snapshot source to a run on an
 * SSH worker (the tree is on the volume, not the host): `remote` restores nothing.
 */
export async function restoreSource(options: {
  root: string;
  issue: Issue;
  /** agent.ensemble_size as configured (the issue's labels may change it). */
  configuredEnsembleSize: number;
  slot: number;
  /** `--source-digest`; absent: a clean start, nothing restored. */
  sourceDigest: string | undefined;
  remote: boolean;
  emit: EventSink;
}): Promise<ReadonlySet<number>> {
  if (options.sourceDigest === undefined || options.remote) return new Set();
  const size = ensembleSize(options.issue, options.configuredEnsembleSize);
  const workspace = workspacePath(options.root, options.issue.identifier, options.slot, size);
  const restored = await restoreSnapshotWorkspace({
    root: options.root,
    workspace,
    expectedDigest: options.sourceDigest,
  });
  if (restored.kind === 'reused') return new Set();
  const { digest, files, bytes, durationMs } = restored;
  options.emit({
    type: 'workspace_restored',
    message: { path: workspace, digest, files, bytes, durationMs, slot: options.slot },
  });
  return new Set([options.slot]);
}

async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}
