import { failureOf, git, runSteps, succeeded } from './commands.js';
import { commandContext, type GitWorkspaceOptions } from './context.js';
import { readRepositorySetup, runSetupSteps } from './setup.js';
import {
  clone,
  cloneFailed,
  credentialConfig,
  installGuard,
  removeGuard,
  type GitGuard,
} from './workspace.js';

/**
 * A warm-up's clone (docs/snapshots.md#the-warm-up-pod): the remote's default branch, set up,
 * and nothing of the issue (no issue branch, no merge-up). It is what a snapshot holds, so
 * nothing of the Pod that made it may stay in it: Lorenz's scripts and the credentials are
 * outside the tree, and its config is left naming neither. adoptRestoredClone gives the
 * restored clone the run's own (attachWorkspace), as a kept workspace gets them.
 */

/** The remote's default branch as `git ls-remote --symref` answers it. */
export interface RemoteHead {
  commit: string;
  /** null when the remote does not say which branch its HEAD is (an old dumb server). */
  branch: string | null;
}

const HEAD_COMMIT = /^([0-9a-f]{40}|[0-9a-f]{64})\tHEAD$/;
const HEAD_SYMREF = /^ref: refs\/heads\/(\S+)\tHEAD$/;

/**
 * Asks the remote for its HEAD with the credentials the clone uses (Lorenz's helper, installed
 * beside the workspace, which need not exist yet: git runs in the root). Nothing is fetched.
 */
export async function remoteDefaultHead(options: GitWorkspaceOptions): Promise<RemoteHead> {
  const guard = await installGuard(options);
  const settings = credentialConfig(options, guard).flatMap(([key, value]) => [
    '-c',
    `${key}=${value}`,
  ]);
  const listed = await runSteps(commandContext(options, options.root), [
    ['git', ...settings, 'ls-remote', '--symref', options.remote.url, 'HEAD'],
  ]);
  if (!succeeded(listed)) {
    throw cloneFailed(
      options,
      `git ls-remote ${options.remote.url} ${failureOf(listed, options.timeoutMs)}`,
    );
  }
  // Output and errors come merged: only the two answer lines count, warnings are skipped.
  const lines = listed.output.split('\n').map((line) => line.trim());
  const commit = lines.map((line) => HEAD_COMMIT.exec(line)?.[1]).find(Boolean);
  if (commit === undefined) {
    throw cloneFailed(options, `${options.remote.url} has no default branch (no HEAD)`);
  }
  const branch = lines.map((line) => HEAD_SYMREF.exec(line)?.[1]).find(Boolean) ?? null;
  return { commit, branch };
}

/** A prepared clone: the default branch's name and the commit it was cloned at. */
export interface PreparedClone {
  guard: GitGuard;
  defaultBranch: string;
  commit: string;
}

/** Clones the default branch into the (new, empty) workspace and runs the repository's setup. */
export async function clonePrepared(options: GitWorkspaceOptions): Promise<PreparedClone> {
  const guard = await installGuard(options);
  const defaultBranch = await clone(options, guard);
  const head = await git(commandContext(options), 'rev-parse', '--verify', 'HEAD^{commit}');
  const commit = head.output.trim();
  if (!succeeded(head) || !/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(commit)) {
    throw cloneFailed(options, `reading the clone's HEAD: ${failureOf(head, options.timeoutMs)}`);
  }
  await runSetupSteps(options, await readRepositorySetup(options), 'setup');
  return { guard, defaultBranch, commit };
}

/**
 * After setup and after_create: the clone's config no longer names Lorenz's helper (the
 * credentials' path of this Pod) nor its hooks directory, and the scripts go. A hooks path
 * that setup or after_create set (husky's) is the repository's and stays: lockHooks takes
 * it up in the run, as in a fresh clone. Lorenz's own hooks path would be taken for the
 * repository's there, hence removed here.
 */
export async function releasePreparedClone(
  options: GitWorkspaceOptions,
  guard: GitGuard,
): Promise<void> {
  const context = commandContext(options);
  const helpers = await git(context, 'config', '--local', '--unset-all', 'credential.helper');
  // Exit 5: there was nothing to unset.
  if (!succeeded(helpers) && helpers.exitCode !== 5) {
    throw cloneFailed(
      options,
      `removing credential.helper: ${failureOf(helpers, options.timeoutMs)}`,
    );
  }
  const hooks = await git(context, 'config', '--local', '--get', 'core.hooksPath');
  if (succeeded(hooks) && hooks.output.trim() === guard.hooksDirectory) {
    const unset = await git(context, 'config', '--local', '--unset', 'core.hooksPath');
    if (!succeeded(unset)) {
      throw cloneFailed(options, `removing core.hooksPath: ${failureOf(unset, options.timeoutMs)}`);
    }
  }
  await removeGuard(options);
}
