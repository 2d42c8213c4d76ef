import type { CommandResult } from '../../executor/types.js';
import { failureOf, git, runSteps, succeeded, trackingRef } from './commands.js';
import { isProtectedBranch, protectedPatterns } from './repo-and-branch.js';
import { commandContext, report, type GitWorkspaceOptions } from './context.js';

/**
 * Kept up with the default branch: an issue branch that exists and is behind gets the
 * default branch merged in and pushed, before setup and before the agent, so its pull
 * request is never more than one run behind. A conflict or a refused push is undone: the
 * branch is left exactly as the remote has it, with a warning.
 */

/** Times the shallow history is deepened looking for a merge base before fetching it all. */
const DEEPEN_ATTEMPTS = 3;

async function mergeBase(
  options: GitWorkspaceOptions,
  defaultRef: string,
): Promise<{ base: string; defaultSha: string } | null> {
  const context = commandContext(options);
  for (let attempt = 0; attempt <= DEEPEN_ATTEMPTS + 1; attempt += 1) {
    const found = await runSteps(context, [
      ['git', 'rev-parse', defaultRef],
      ['git', 'merge-base', defaultRef, 'HEAD'],
    ]);
    const [defaultSha = '', base = ''] = found.output.trim().split('\n');
    if (succeeded(found) && base !== '') return { base, defaultSha };
    // A shallow clone may stop short of the fork point: deepen, then fetch everything.
    const refs = [options.branch, `+refs/heads/${defaultRef.split('/').pop() ?? ''}:${defaultRef}`];
    const deepen =
      attempt < DEEPEN_ATTEMPTS
        ? await git(context, 'fetch', `--deepen=${options.git.depth}`, 'origin', ...refs)
        : attempt === DEEPEN_ATTEMPTS
          ? await git(context, 'fetch', '--unshallow', 'origin')
          : null;
    if (deepen === null || !succeeded(deepen)) break;
  }
  return null;
}

async function undo(options: GitWorkspaceOptions, tracking: string): Promise<CommandResult> {
  return runSteps(commandContext(options), [['git', 'reset', '--hard', '--quiet', tracking]]);
}

export async function mergeUp(options: GitWorkspaceOptions, defaultBranch: string): Promise<void> {
  const startedAt = Date.now();
  const context = commandContext(options);
  const defaultRef = trackingRef(defaultBranch);
  const tracking = trackingRef(options.branch);
  const warn = (detail: string) => report(options, 'merge_up', 'warning', detail, startedAt);
  const found = await mergeBase(options, defaultRef);
  if (found === null) {
    warn(`not merging ${defaultBranch} into ${options.branch}: they share no history`);
    return;
  }
  if (found.base === found.defaultSha) return; // already up to date: nothing to report
  const merged = await git(context, 'merge', '--no-edit', '--quiet', defaultRef);
  if (!succeeded(merged)) {
    await git(context, 'merge', '--abort');
    await undo(options, tracking);
    warn(
      `merging ${defaultBranch} into ${options.branch} failed and was undone; the branch is as the remote has it: ${failureOf(merged, options.timeoutMs)}`,
    );
    return;
  }
  // The push path checks protection itself too, not only the pre-push hook it runs.
  if (isProtectedBranch(protectedPatterns(options.git, defaultBranch), options.branch)) {
    await undo(options, tracking);
    warn(`not pushing ${options.branch}: it is protected`);
    return;
  }
  const pushed = await git(
    context,
    'push',
    '--quiet',
    'origin',
    `HEAD:refs/heads/${options.branch}`,
  );
  if (!succeeded(pushed)) {
    await undo(options, tracking);
    warn(
      `the remote refused the merge of ${defaultBranch} into ${options.branch}; undone, the branch is as the remote has it: ${failureOf(pushed, options.timeoutMs)}`,
    );
    return;
  }
  // The remote-tracking ref follows the push, so later work compares with what was pushed.
  await git(context, 'update-ref', tracking, 'HEAD');
  report(
    options,
    'merge_up',
    'completed',
    `merged ${defaultBranch} into ${options.branch} and pushed`,
    startedAt,
  );
}
