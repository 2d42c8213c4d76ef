import { failureOf, fetchBranch, git, runSteps, succeeded, trackingRef } from './commands.js';
import { commandContext, report, type GitWorkspaceOptions } from './context.js';
import { mergeUp } from './merge-up.js';
import { pushBase } from './pushed.js';
import { attachWorkspace, checkOutBranch, cloneFailed, type PreparedGit } from './workspace.js';

/**
 * A workspace restored from a snapshot (docs/snapshots.md) is a clone prepared on the default
 * branch, set up, not yet the issue's. It is not cloned again and its setup is not run again:
 * it gets this run's scripts and credentials, the default branch is brought up to the remote's
 * tip (a fast-forward: a prepared clone has no commits of its own), and the branch is
 * checked out as a fresh clone would (the remote's, kept up with the default; else a new one).
 */
export async function adoptRestoredClone(options: GitWorkspaceOptions): Promise<PreparedGit> {
  const startedAt = Date.now();
  const attached = await attachWorkspace(options);
  if (!attached) {
    throw cloneFailed(options, `${options.workspace}: the snapshot's workspace is not a git clone`);
  }
  const context = commandContext(options);
  const head = await git(context, 'symbolic-ref', '--short', 'HEAD');
  const defaultBranch = head.output.trim();
  if (!succeeded(head) || defaultBranch === '') {
    throw cloneFailed(
      options,
      `the snapshot's clone is not on a branch: ${failureOf(head, options.timeoutMs)}`,
    );
  }
  const caughtUp = await runSteps(context, [
    fetchBranch(options.git.depth, defaultBranch),
    ['git', 'merge', '--ff-only', '--quiet', trackingRef(defaultBranch)],
  ]);
  if (!succeeded(caughtUp)) {
    throw cloneFailed(
      options,
      `bringing the snapshot's ${defaultBranch} up to the remote's: ${failureOf(caughtUp, options.timeoutMs)}`,
    );
  }
  report(
    options,
    'clone',
    'completed',
    `restored from a snapshot, ${defaultBranch} at the remote's tip`,
    startedAt,
  );
  const existed = await checkOutBranch(options, defaultBranch);
  if (existed) await mergeUp(options, defaultBranch);
  return { guard: attached.guard, pushBase: await pushBase(options) };
}
