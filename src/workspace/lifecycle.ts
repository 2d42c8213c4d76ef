import { dirname } from 'node:path';
import type { Executor } from '../executor/types.js';
import { errorMessage, isLorenzError } from '../workflow/errors.js';
import type { EventSink, HookName, RunSummary, SlotSummary } from '../workflow/events.js';
import type { Issue } from '../workflow/issue.js';
import type { WorkflowConfig } from '../workflow/config.js';
import type { AgentStep } from './agent-step.js';
import {
  assertWorkspaceCwd,
  assertWorkspaceRoot,
  createWorkspaceDirectory,
} from './containment.js';
import { allSlots, ensembleSize } from './ensemble.js';
import { runHook, type HookRunCounter } from './hooks.js';
import { resolveWorkspaceRoot, workerRoot, workspacePath } from './paths.js';
import { resolveSkillSources, syncSkills } from './skills.js';
import {
  guardedPath,
  adoptRestoredClone,
  attachWorkspace,
  cloneWorkspace,
  lockHooks,
  resolveBranchName,
  resolveRemote,
  stageCredentialsOnWorker,
  teardownWorkspace,
  reportPushed,
  type PreparedGit,
  type GitWorkspaceOptions,
  type WorkerCredentials,
  type ResolvedRemote,
} from './git/index.js';

export interface LifecycleOptions {
  config: WorkflowConfig;
  issue: Issue;
  executor: Executor;
  emit: EventSink;
  /** A promise while the sink of `emit` is behind: streamed hook output waits for it. */
  outputDrained?: () => Promise<void> | undefined;
  /** The agent turn loop; absent for `--no-agent` (hooks only). */
  agent?: AgentStep;
  attempt: number | null;
  /** Root resolution and the hooks' environment; process.env by default. */
  env?: NodeJS.ProcessEnv;
  /** Cancellation: stops before_run/after_create and the agent; after_run still runs. */
  signal?: AbortSignal;
  /** Which ensemble slots to run; all of them by default. */
  slots?: number[];
  /** before_remove and removal at the end; true by default. */
  cleanup?: boolean;
  /**
   * How many trailing characters of a hook's streamed output to hold back at a cut that is
   * not the output's end (the runner's redactor: a suffix that may begin a secret value).
   */
  holdOutput?: (text: string) => number;
  /** SIGTERM→SIGKILL grace for hooks (5000 ms by default). */
  hookKillGraceMs?: number;
  /** Where relative `agent.skills` paths start: the WORKFLOW.md's directory; cwd by default. */
  workflowDirectory?: string;
  /**
   * Slots whose workspace was just restored from a snapshot (the runner checked its digest):
   * not new, so no after_create, but its clone is adopted onto the issue's branch.
   */
  restoredSlots?: ReadonlySet<number>;
  /** For `workspace.git`: the branch worked out earlier (an IssueRun's), and credentials. */
  git?: {
    /** The issue's branch as first worked out; rendered from workspace.git.branch if absent. */
    branch?: string | undefined;
    /** The directory of per-host credential files; absent: anonymous. */
    credentialsDirectory?: string | undefined;
  };
}

/** What `workspace.git` resolves to for this run, or why it cannot be used. */
type GitPlan = { remote: ResolvedRemote; branch: string } | { error: unknown } | null;

function planGit(options: LifecycleOptions): GitPlan {
  const git = options.config.workspace.git;
  if (!git) return null;
  try {
    return {
      remote: resolveRemote(git),
      branch: options.git?.branch ?? resolveBranchName(git, options.issue),
    };
  } catch (error) {
    return { error };
  }
}

interface RunContext {
  options: LifecycleOptions;
  root: string;
  size: number;
  /** workspace.isolation `none`: the root is every issue's workspace, no hooks, no removal. */
  shared: boolean;
  env: NodeJS.ProcessEnv;
  signal: AbortSignal;
  /** One overlay per directory: in shared mode every slot's workspace is the same root. */
  skillSyncs: Map<string, Promise<string[]>>;
  git: GitPlan;
  /** Where the credential helper reads (a copy on the worker for an SSH executor). */
  credentialsDirectory: string | undefined;
  /** Every slot's hooks are numbered on one count: they share the log. */
  hookRuns: HookRunCounter;
}

/**
 * One issue, every requested slot in parallel, each on its own: create the workspace →
 * after_create (new directory only) → skills overlay → before_run → agent → after_run
 * (always, once before_run has passed) → before_remove → remove. A slot's failure is
 * recorded in the summary, never thrown; `run_completed` carries the summary at the end.
 */
export async function runIssueLifecycle(options: LifecycleOptions): Promise<RunSummary> {
  const env = options.env ?? process.env;
  const size = ensembleSize(options.issue, options.config.agent.ensembleSize);
  let root: string;
  try {
    root = await resolveRoot(options, env);
  } catch (error) {
    // The worker is unreachable before anything started: every slot fails alike.
    return completeRun(
      options,
      (options.slots ?? allSlots(size)).map((slot) => {
        const summary: SlotSummary = { slot, workspace: '', succeeded: false, turns: 0 };
        summary.errorCode = isLorenzError(error) ? error.code : 'workspace_error';
        summary.error = errorMessage(error);
        return summary;
      }),
    );
  }
  const context: RunContext = {
    options,
    root,
    size,
    shared: options.config.workspace.isolation === 'none',
    env,
    signal: options.signal ?? new AbortController().signal,
    skillSyncs: new Map(),
    git: planGit(options),
    credentialsDirectory: options.git?.credentialsDirectory,
    hookRuns: { next: 0 },
  };
  const credentials = await placeCredentials(context);
  try {
    const slots = await Promise.all(
      (options.slots ?? allSlots(size)).map((slot) => runSlot(context, slot)),
    );
    if (size > 1 && !context.shared && options.cleanup !== false) {
      await removeEnsembleParent(context);
    }
    return completeRun(options, slots);
  } finally {
    await credentials?.dispose().catch(() => {});
  }
}

/**
 * On an SSH worker git runs on the host, so its credential helper needs the files there: a
 * private copy for this run (see worker-credentials.ts). If it cannot be made, every slot
 * of a git workspace fails saying so.
 */
async function placeCredentials(context: RunContext): Promise<WorkerCredentials | null> {
  const { executor, config } = context.options;
  const local = context.credentialsDirectory;
  if (!executor.remote || local === undefined || !context.git || 'error' in context.git) {
    return null;
  }
  try {
    const placed = await stageCredentialsOnWorker(executor, local, config.worker.sshTimeoutMs);
    context.credentialsDirectory = placed.directory;
    return placed;
  } catch (error) {
    context.git = { error };
    return null;
  }
}

function completeRun(options: LifecycleOptions, slots: SlotSummary[]): RunSummary {
  const summary: RunSummary = {
    identifier: options.issue.identifier,
    succeeded: slots.every((slot) => slot.succeeded),
    slots,
  };
  options.emit({ type: 'run_completed', message: summary });
  return summary;
}

/** On a remote worker, `~` means the worker's HOME (asked over the connection). */
async function resolveRoot(options: LifecycleOptions, env: NodeJS.ProcessEnv): Promise<string> {
  const resolved = resolveWorkspaceRoot(options.config.workspace.root, env);
  if (!options.executor.remote) return resolved.root;
  return workerRoot(resolved, await options.executor.homeDirectory());
}

async function runSlot(context: RunContext, slot: number): Promise<SlotSummary> {
  const { options, root, shared } = context;
  const workspace = shared
    ? root
    : workspacePath(root, options.issue.identifier, slot, context.size);
  const summary: SlotSummary = { slot, workspace, succeeded: false, turns: 0 };
  let preparedGit: PreparedGit | null = null;
  // From the agent on, the workspace holds what the agent wrote: the commands that run there
  // (the agent, then after_run and before_remove, which may run its scripts) find Lorenz's
  // git first. after_create and before_run do not: they may still point core.hooksPath at
  // the repository's own hooks (husky), which lockHooks then takes up before the agent.
  let pathFirst: readonly string[] | undefined;
  const hook = (hookName: HookName, command: string | null, signal?: AbortSignal) =>
    shared
      ? Promise.resolve(null)
      : runHook({
          executor: options.executor,
          emit: options.emit,
          ...(options.outputDrained ? { outputDrained: options.outputDrained } : {}),
          hookName,
          command,
          workspace,
          root,
          issue: options.issue,
          timeoutMs: options.config.hooks.timeoutMs,
          killGraceMs: options.hookKillGraceMs,
          slot,
          env: context.env,
          ...(pathFirst ? { pathFirst } : {}),
          signal,
          runs: context.hookRuns,
          ...(options.holdOutput ? { holdOutput: options.holdOutput } : {}),
        });
  let prepared = false;
  const git = gitOptions(context, workspace, slot);
  try {
    // A run that cannot name its repository or its branch fails before touching the disk.
    if (context.git && 'error' in context.git) throw context.git.error;
    const created = await prepareWorkspace(context, workspace);
    if (git) preparedGit = await prepareClone(git, created, options.restoredSlots?.has(slot));
    const guard = preparedGit?.guard ?? null;
    prepared = true;
    options.emit({ type: 'workspace_prepared', message: { path: workspace, created, slot } });
    const { hooks } = options.config;
    if (created) await hook('after_create', hooks.afterCreate, context.signal);
    const skills = await overlaySkills(context, workspace);
    if (skills.length > 0) {
      options.emit({ type: 'skills_synced', message: { path: workspace, skills, slot } });
    }
    // The attempt begins with before_run: from there on, after_run runs whatever happens
    // (before_run failing or killed included), as Lorenz does: after_run always runs
    // (docs/design.md#the-lifecycle-order).
    try {
      await hook('before_run', hooks.beforeRun, context.signal);
      if (git && guard) await lockHooks(git, guard);
      if (guard) pathFirst = guardedPath(guard);
      await runAgent(context, workspace, summary, pathFirst);
    } finally {
      await hook('after_run', hooks.afterRun);
      // after_run may push too: what the attempt pushed is read once it is over.
      if (git && preparedGit) await reportPushed(git, preparedGit.pushBase);
    }
  } catch (error) {
    recordFailure(context, summary, error);
  } finally {
    if (prepared && !shared && options.cleanup !== false) {
      await hook('before_remove', options.config.hooks.beforeRemove);
      if (git) await teardownWorkspace(git);
      await removeWorkspace(context, workspace, slot);
    }
  }
  return summary;
}

/** A new workspace is cloned; a restored one adopted onto the issue's branch; any other attached. */
function prepareClone(
  git: GitWorkspaceOptions,
  created: boolean,
  restored: boolean | undefined,
): Promise<PreparedGit | null> {
  if (created) return cloneWorkspace(git);
  return restored ? adoptRestoredClone(git) : attachWorkspace(git);
}

function overlaySkills(context: RunContext, workspace: string): Promise<string[]> {
  let sync = context.skillSyncs.get(workspace);
  if (!sync) {
    const { executor, config, workflowDirectory } = context.options;
    // Resolved inside the promise, so a source that expands to nothing fails the slot.
    sync = Promise.resolve().then(() => {
      const base = workflowDirectory ?? process.cwd();
      const sources = resolveSkillSources(config.agent.skills, base, context.env);
      return syncSkills(executor, workspace, sources);
    });
    context.skillSyncs.set(workspace, sync);
  }
  return sync;
}

/** Shared mode uses the (checked) root itself; otherwise a contained per-slot directory. */
async function prepareWorkspace(context: RunContext, workspace: string): Promise<boolean> {
  const { executor } = context.options;
  const rootCreated = await executor.ensureDirectory(context.root);
  await assertWorkspaceRoot(executor, context.root);
  if (context.shared) return rootCreated;
  return createWorkspaceDirectory(executor, context.root, workspace);
}

function gitOptions(
  context: RunContext,
  workspace: string,
  slot: number,
): GitWorkspaceOptions | null {
  const plan = context.git;
  const git = context.options.config.workspace.git;
  if (!plan || 'error' in plan || !git) return null;
  return {
    executor: context.options.executor,
    emit: context.options.emit,
    git,
    remote: plan.remote,
    branch: plan.branch,
    root: context.root,
    workspace,
    slot,
    env: context.env,
    timeoutMs: context.options.config.hooks.timeoutMs,
    signal: context.signal,
    credentialsDirectory: context.credentialsDirectory,
  };
}

async function runAgent(
  context: RunContext,
  workspace: string,
  summary: SlotSummary,
  pathFirst: readonly string[] | undefined,
): Promise<void> {
  const { options, signal } = context;
  if (signal.aborted) {
    summary.errorCode = 'cancelled';
    summary.error = 'run cancelled before the agent started';
    return;
  }
  if (!options.agent) {
    summary.succeeded = true;
    return;
  }
  const result = await options.agent({
    workspace,
    slot: summary.slot,
    ensembleSize: context.size,
    issue: options.issue,
    attempt: options.attempt,
    signal,
    emit: options.emit,
    ...(pathFirst ? { pathFirst } : {}),
  });
  summary.turns = result.turns;
  if (result.usage) summary.usage = result.usage;
  if (result.ok) summary.succeeded = true;
  else {
    summary.errorCode = result.code;
    summary.error = result.message;
  }
}

function recordFailure(context: RunContext, summary: SlotSummary, error: unknown): void {
  summary.succeeded = false;
  summary.errorCode = context.signal.aborted
    ? 'cancelled'
    : isLorenzError(error)
      ? error.code
      : 'workspace_error';
  summary.error = errorMessage(error);
}

/**
 * An ensemble's slots live in `<root>/<identifier>/<slot>`: once they are removed, the
 * issue's directory goes too, if nothing else is in it (a slot kept, a file of a hook's).
 */
async function removeEnsembleParent(context: RunContext): Promise<void> {
  const { executor, issue } = context.options;
  const parent = dirname(workspacePath(context.root, issue.identifier, 0, context.size));
  try {
    await assertWorkspaceCwd(executor, context.root, parent);
    await executor.removeEmptyDirectory(parent);
  } catch {
    // Missing, or not ours to remove (a symlink, outside the root): leave it.
  }
}

/** Re-check containment first: never remove through a symlink or the root itself. */
async function removeWorkspace(
  context: RunContext,
  workspace: string,
  slot: number,
): Promise<void> {
  const { executor, emit } = context.options;
  try {
    await assertWorkspaceCwd(executor, context.root, workspace);
    await executor.removeTree(workspace);
    emit({ type: 'workspace_removed', message: { path: workspace, slot } });
  } catch (error) {
    emit({
      type: 'stderr',
      message: `Not removing workspace ${workspace}: ${errorMessage(error)}`,
      slot,
    });
  }
}
