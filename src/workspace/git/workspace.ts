import { dirname, join, relative } from 'node:path';
import { LorenzError, errorMessage, isLorenzError } from '../../workflow/errors.js';
import {
  commandLine,
  failureOf,
  fetchBranch,
  git,
  runSteps,
  succeeded,
  trackingRef,
} from './commands.js';
import { commandContext, report, type GitWorkspaceOptions } from './context.js';
import {
  CHAINED_HOOKS,
  GIT_CONFIG_KEYS,
  chainedHookScript,
  credentialHelperScript,
  gitWrapperScript,
  prePushScript,
} from './guard-scripts.js';
import { isProtectedBranch, protectedPatterns } from './repo-and-branch.js';
import { mergeUp } from './merge-up.js';
import { pushBase, type PushBase } from './pushed.js';
import { readRepositorySetup, runSetupSteps } from './setup.js';
import { unusablePathEntry } from '../../executor/login-path.js';

/**
 * A git workspace, step by step: clone the repository into the new workspace (the last
 * `depth` commits), check out the branch (the remote's if it exists, else a new one
 * from the default branch), merge the default branch up into it, run the repository's
 * setup. Lorenz's scripts live beside the workspace, in `<root>/@lorenz-git/<workspace>`:
 * `@` never appears in a workspace's own name, so no issue can own that directory.
 */
export interface GitGuard {
  /** First on the agent's PATH, after its login profile: its `git` is the wrapper. */
  binDirectory: string;
  hooksDirectory: string;
  helper: string;
}

/** A workspace ready for an attempt: its scripts, and the remote's tips it began from. */
export interface PreparedGit {
  guard: GitGuard;
  /** What the remote had before this attempt pushed anything (the merge-up included). */
  pushBase: PushBase;
}

export const GUARD_PARENT = '@lorenz-git';

export function guardPaths(root: string, workspace: string): GitGuard & { directory: string } {
  const directory = join(root, GUARD_PARENT, relative(root, workspace).replaceAll('/', '+'));
  return {
    directory,
    binDirectory: join(directory, 'bin'),
    hooksDirectory: join(directory, 'hooks'),
    helper: join(directory, 'git-credential-lorenz'),
  };
}

/** Writes the helper, the hooks and the wrapper (the real git found on the caller's PATH). */
export async function installGuard(options: GitWorkspaceOptions): Promise<GitGuard> {
  const paths = guardPaths(options.root, options.workspace);
  const unusable = unusablePathEntry(paths.binDirectory);
  if (unusable !== null) {
    // A `:` would split the PATH entry: the agent would get the real git, unguarded.
    throw new LorenzError(
      'workspace_clone_failed',
      `workspace_clone_failed: the git wrapper's directory cannot go on PATH: ${unusable}`,
    );
  }
  const { executor } = options;
  const found = await executor.runCommand('command -v git', {
    cwd: options.root,
    timeoutMs: options.timeoutMs,
    env: options.env,
  });
  const realGit = found.output.trim().split('\n').pop() ?? '';
  if (!succeeded(found) || !realGit.startsWith('/')) {
    throw new LorenzError(
      'workspace_clone_failed',
      'workspace_clone_failed: git is not on the PATH',
    );
  }
  for (const directory of [paths.binDirectory, paths.hooksDirectory]) {
    await executor.ensureDirectory(directory);
  }
  const executable = { mode: 0o755 };
  await executor.writeFile(paths.helper, credentialHelperScript(), executable);
  await executor.writeFile(join(paths.binDirectory, 'git'), gitWrapperScript(realGit), executable);
  await executor.writeFile(join(paths.hooksDirectory, 'pre-push'), prePushScript(), executable);
  for (const name of CHAINED_HOOKS) {
    await executor.writeFile(join(paths.hooksDirectory, name), chainedHookScript(name), executable);
  }
  return paths;
}

/** The clone's credential settings: no helper but Lorenz's, and that one only with credentials. */
export function credentialConfig(options: GitWorkspaceOptions, guard: GitGuard): string[][] {
  // An empty helper first clears any the machine configures (a laptop's store, a keychain).
  const entries = [['credential.helper', '']];
  if (options.credentialsDirectory !== undefined) {
    entries.push([
      'credential.helper',
      `!${commandLine([guard.helper, options.credentialsDirectory])}`,
    ]);
  }
  return entries;
}

export function cloneFailed(options: GitWorkspaceOptions, what: string): LorenzError {
  return new LorenzError('workspace_clone_failed', `workspace_clone_failed: ${what}`, {
    repo: options.remote.url,
  });
}

/** Clones the remote's default branch into the (existing, empty) workspace; answers its name. */
export async function clone(options: GitWorkspaceOptions, guard: GitGuard): Promise<string> {
  const startedAt = Date.now();
  const config = [
    ...credentialConfig(options, guard),
    ['core.hooksPath', guard.hooksDirectory],
    ['user.name', options.git.userName],
    ['user.email', options.git.userEmail],
  ];
  const result = await git(
    commandContext(options),
    'clone',
    '--depth',
    String(options.git.depth),
    ...config.flatMap(([key, value]) => ['--config', `${key}=${value}`]),
    '--',
    options.remote.url,
    '.',
  );
  if (!succeeded(result)) {
    throw cloneFailed(
      options,
      `git clone ${options.remote.url} ${failureOf(result, options.timeoutMs)}`,
    );
  }
  const head = await git(commandContext(options), 'symbolic-ref', '--short', 'HEAD');
  const defaultBranch = head.output.trim();
  if (!succeeded(head) || defaultBranch === '') {
    throw cloneFailed(
      options,
      `the clone has no default branch: ${failureOf(head, options.timeoutMs)}`,
    );
  }
  report(
    options,
    'clone',
    'completed',
    `cloned ${options.remote.url} (last ${options.git.depth} commits of ${defaultBranch})`,
    startedAt,
  );
  return defaultBranch;
}

/** The branch: the remote's as it is, else a new one from the default branch. */
export async function checkOutBranch(
  options: GitWorkspaceOptions,
  defaultBranch: string,
): Promise<boolean> {
  const startedAt = Date.now();
  const { branch } = options;
  const patterns = protectedPatterns(options.git, defaultBranch);
  if (isProtectedBranch(patterns, branch)) {
    throw new LorenzError(
      'workspace_branch_unresolved',
      `workspace_branch_unresolved: the issue's branch ${JSON.stringify(branch)} is protected (the default branch is ${defaultBranch})`,
    );
  }
  const context = commandContext(options);
  const listed = await git(context, 'ls-remote', '--heads', 'origin', `refs/heads/${branch}`);
  if (!succeeded(listed)) {
    throw cloneFailed(options, `git ls-remote ${failureOf(listed, options.timeoutMs)}`);
  }
  const exists = listed.output.trim() !== '';
  const steps: string[][] = [
    ['git', 'config', GIT_CONFIG_KEYS.defaultBranch, defaultBranch],
    ...patterns.map((pattern) => ['git', 'config', '--add', GIT_CONFIG_KEYS.protected, pattern]),
    ['git', 'remote', 'set-branches', '--add', 'origin', branch],
    ...(exists
      ? [
          fetchBranch(options.git.depth, branch),
          ['git', 'checkout', '-B', branch, trackingRef(branch)],
        ]
      : [['git', 'checkout', '-b', branch]]),
    ['git', 'config', `branch.${branch}.remote`, 'origin'],
    ['git', 'config', `branch.${branch}.merge`, `refs/heads/${branch}`],
  ];
  const result = await runSteps(context, steps);
  if (!succeeded(result)) {
    throw cloneFailed(options, `checking out ${branch}: ${failureOf(result, options.timeoutMs)}`);
  }
  report(
    options,
    'branch',
    'completed',
    exists
      ? `checked out ${branch} as the remote has it`
      : `created ${branch} from ${defaultBranch}`,
    startedAt,
  );
  return exists;
}

/**
 * A new workspace becomes a clone on the branch, kept up with the default branch and
 * set up. Any failure throws with its code, after discarding what was cloned; a merge-up that
 * cannot be completed is undone and only warned about.
 */
export async function cloneWorkspace(options: GitWorkspaceOptions): Promise<PreparedGit> {
  try {
    const guard = await installGuard(options);
    const defaultBranch = await clone(options, guard);
    const existed = await checkOutBranch(options, defaultBranch);
    const base = await pushBase(options);
    if (existed) await mergeUp(options, defaultBranch);
    await runSetupSteps(options, await readRepositorySetup(options), 'setup');
    return { guard, pushBase: base };
  } catch (error) {
    await discardClone(options);
    if (isLorenzError(error)) throw error;
    throw cloneFailed(options, errorMessage(error));
  }
}

/** Nothing of a failed clone is kept: the next attempt starts from a new directory. */
async function discardClone(options: GitWorkspaceOptions): Promise<void> {
  await options.executor.removeTree(options.workspace).catch(() => undefined);
  await removeGuard(options);
}

/**
 * A workspace that already exists (a kept volume, a second `lorenz run`) is not cloned again:
 * if it is a clone, it gets this run's scripts and credentials; if not, it is left as it is.
 */
export async function attachWorkspace(options: GitWorkspaceOptions): Promise<PreparedGit | null> {
  const startedAt = Date.now();
  if ((await options.executor.pathKind(join(options.workspace, '.git'))) !== 'directory') {
    report(
      options,
      'clone',
      'warning',
      `${options.workspace} exists and is not a git clone: left as it is`,
      startedAt,
    );
    return null;
  }
  const guard = await installGuard(options);
  const context = commandContext(options);
  const result = await runSteps(context, [
    ['git', 'config', '--local', '--unset-all', 'credential.helper'],
  ]);
  // Exit 5: there was nothing to unset.
  if (!succeeded(result) && result.exitCode !== 5) {
    throw cloneFailed(
      options,
      `resetting credential.helper: ${failureOf(result, options.timeoutMs)}`,
    );
  }
  const configured = await runSteps(
    context,
    credentialConfig(options, guard).map(([key, value]) => [
      'git',
      'config',
      '--local',
      '--add',
      key as string,
      value as string,
    ]),
  );
  if (!succeeded(configured)) {
    throw cloneFailed(
      options,
      `configuring credentials: ${failureOf(configured, options.timeoutMs)}`,
    );
  }
  return { guard, pushBase: await pushBase(options) };
}

/**
 * Right before the agent: the clone's hooks path is Lorenz's again (setup or a hook may have
 * pointed it at the repository's own, e.g. husky's `.husky/_`; that path is kept as the one
 * Lorenz's hooks chain to), so the repository's hooks and the protection both run.
 */
export async function lockHooks(options: GitWorkspaceOptions, guard: GitGuard): Promise<void> {
  const context = commandContext(options);
  const current = await git(context, 'config', '--local', '--get', 'core.hooksPath');
  const path = current.output.trim();
  if (succeeded(current) && path !== '' && path !== guard.hooksDirectory) {
    const moved = await runSteps(context, [
      ['git', 'config', '--local', GIT_CONFIG_KEYS.repositoryHooks, path],
      ['git', 'config', '--local', 'core.hooksPath', guard.hooksDirectory],
    ]);
    if (!succeeded(moved)) {
      throw cloneFailed(
        options,
        `restoring core.hooksPath: ${failureOf(moved, options.timeoutMs)}`,
      );
    }
  } else if (!succeeded(current) || path === '') {
    await git(context, 'config', '--local', 'core.hooksPath', guard.hooksDirectory);
  }
}

/**
 * What goes first on PATH for the agent and the commands that run after it (after_run,
 * before_remove), inside their login shell (src/executor/login-path.ts): Lorenz's git.
 */
export function guardedPath(guard: GitGuard): readonly string[] {
  return [guard.binDirectory];
}

/** Teardown steps (best-effort) and Lorenz's scripts, before the workspace is removed. */
export async function teardownWorkspace(options: GitWorkspaceOptions): Promise<void> {
  try {
    const setup = await readRepositorySetup(options);
    await runSetupSteps(options, setup, 'teardown');
  } catch {
    // Best-effort: a teardown that fails is reported by runSetupSteps and otherwise ignored.
  }
  await removeGuard(options);
}

export async function removeGuard(options: GitWorkspaceOptions): Promise<void> {
  const paths = guardPaths(options.root, options.workspace);
  await options.executor.removeTree(paths.directory).catch(() => undefined);
  await options.executor.removeEmptyDirectory(dirname(paths.directory)).catch(() => false);
}
