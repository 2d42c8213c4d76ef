import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { INPUT_FILES, RUNNER_FLAGS } from '../api/run-pod.js';
import { SOURCE_TREE_DIR } from '../api/workspace-source.js';
import { WARM_UP_ISSUE, encodeWarmUpResult, type WarmUpResult } from '../api/warm-up.js';
import { createLocalExecutor } from '../executor/local.js';
import type { Executor } from '../executor/types.js';
import { loadWorkflowText } from '../template/load-workflow.js';
import type { WorkflowConfig } from '../workflow/config.js';
import { LorenzError, errorMessage, isLorenzError } from '../workflow/errors.js';
import type { EventSink, LorenzEvent } from '../workflow/events.js';
import { normalizeIssue } from '../workflow/issue.js';
import { assertWorkspaceRoot, createWorkspaceDirectory } from '../workspace/containment.js';
import {
  clonePrepared,
  credentialSecrets,
  loadGitCredentials,
  releasePreparedClone,
  remoteDefaultHead,
  removeGuard,
  resolveRemote,
  type GitGuard,
  type GitWorkspaceOptions,
} from '../workspace/git/index.js';
import { runHook } from '../workspace/hooks.js';
import { workspaceTreeDigest } from '../workspace/tree-digest.js';
import type { PrepareArgs } from './args.js';
import type { RunnerProcess } from './process.js';
import { readVerifiedInputs, requireInput } from './inputs.js';
import { readSecret } from './read-secret.js';
import { createRedactor, secretsFromEnv, type Redactor } from './redact.js';

/**
 * `lorenz runner --prepare`: a Workflow's warm-up Pod (docs/snapshots.md#the-warm-up-pod). It
 * prepares `<root>/.lorenz-source` as every dispatched issue will start from it: the default
 * branch cloned, the repository's setup run, after_create run (rendered with WARM_UP_ISSUE),
 * then digests the tree. Events go to stdout as a run's do, ending with `warm_up_completed`;
 * the WarmUpResult goes to the termination message. Exit 0 prepared or unchanged, 1 failed.
 * On SIGTERM (`signal`) the clone, setup or after_create is stopped.
 */
export type PrepareOptions = PrepareArgs & RunnerProcess;

/** The slot every record of a warm-up names: it prepares one tree. */
const SLOT = 0;

export async function runPrepare(options: PrepareOptions): Promise<number> {
  // As in a run: no secret value leaves the Pod in what it reports, and hooks do not get the
  // copies of them made for the redactor.
  const { secrets, env: visibleEnv } = secretsFromEnv(options.env);
  const git = await readSecret(options.gitCredentials, loadGitCredentials, credentialSecrets);
  const redact = createRedactor([...secrets, ...git.secrets]);
  const emit = (raw: LorenzEvent): void => {
    const event = redact.value(raw);
    options.write(`${JSON.stringify({ ...event, at: new Date().toISOString() })}\n`);
  };
  const executor = options.executor ?? createLocalExecutor();
  let result: WarmUpResult;
  try {
    if (git.error !== undefined) throw git.error;
    const config = await loadConfig(options);
    result = await prepare({
      options,
      config,
      executor,
      emit,
      redact,
      env: { ...visibleEnv, LORENZ_WORKSPACE_ROOT: options.workspaceRoot },
      credentialsDirectory: git.value?.directory,
    });
  } catch (error) {
    result = {
      outcome: 'failed',
      errorCode: failureCode(error, options.signal),
      error: redact.text(errorMessage(error)),
    };
    emit({ type: 'stderr', message: `lorenz runner: ${result.error}`, slot: SLOT });
  } finally {
    // Nothing after_create started may outlive the warm-up (the snapshot comes next).
    if (!options.executor) await executor.shutdown();
    await git.value?.dispose();
  }
  emit({ type: 'warm_up_completed', message: result });
  try {
    await writeFile(options.terminationLogPath, encodeWarmUpResult(result));
  } catch (error) {
    emit({
      type: 'stderr',
      message: `cannot write the termination message: ${errorMessage(error)}`,
    });
  }
  return result.outcome === 'failed' ? 1 : 0;
}

function failureCode(error: unknown, signal: AbortSignal | undefined): string {
  if (signal?.aborted === true) return 'cancelled';
  return isLorenzError(error) ? error.code : 'runner_failed';
}

/** WORKFLOW.md from the verified inputs: the only input a warm-up needs. */
async function loadConfig(options: PrepareOptions): Promise<WorkflowConfig> {
  const inputs = await readVerifiedInputs(options.inputsDir, options.inputsDigestFile);
  const text = requireInput(inputs, INPUT_FILES.workflow);
  return loadWorkflowText(text, `inputs/${INPUT_FILES.workflow}`).config;
}

interface PrepareContext {
  options: PrepareOptions;
  config: WorkflowConfig;
  executor: Executor;
  emit: EventSink;
  redact: Redactor;
  env: NodeJS.ProcessEnv;
  credentialsDirectory: string | undefined;
}

/**
 * The steps, in order. The remote is asked first, so an unchanged head touches nothing on the
 * volume. Whatever fails, Lorenz's scripts go, and so does a half-prepared tree: the volume
 * never holds one for a snapshot to take.
 */
async function prepare(context: PrepareContext): Promise<WarmUpResult> {
  const startedAt = performance.now();
  const { executor, emit, options } = context;
  const root = options.workspaceRoot;
  const tree = join(root, SOURCE_TREE_DIR);
  await executor.ensureDirectory(root);
  await assertWorkspaceRoot(executor, root);
  const git = gitOptions(context, tree);
  let guard: GitGuard | null = null;
  let made = false;
  try {
    const head = git ? await remoteDefaultHead(git) : null;
    if (options.unlessCommit !== undefined) {
      // A head check: its Pod has no claim, so it reports and prepares nothing either way.
      if (!head) {
        throw new LorenzError(
          'invalid_workflow_config',
          `--${RUNNER_FLAGS.unlessCommit} checks the default branch of workspace.git, and the Workflow has none`,
        );
      }
      const outcome = head.commit === options.unlessCommit ? 'unchanged' : 'moved';
      return { outcome, commit: head.commit };
    }
    await removeStaleTree(context, tree);
    made = true;
    await createWorkspaceDirectory(executor, root, tree);
    emit({ type: 'workspace_prepared', message: { path: tree, created: true, slot: SLOT } });
    let commit: string | null = null;
    if (git) {
      const cloned = await clonePrepared({ ...git, branch: head?.branch ?? 'HEAD' });
      ({ guard, commit } = cloned);
    }
    await afterCreate(context, tree);
    if (git && guard) await releasePreparedClone(git, guard);
    const prepareMs = Math.round(performance.now() - startedAt);
    const digestStartedAt = performance.now();
    const digest = await workspaceTreeDigest(tree);
    const digestMs = Math.round(performance.now() - digestStartedAt);
    made = false;
    const { files, bytes } = digest;
    return {
      outcome: 'prepared',
      digest: digest.digest,
      commit,
      files,
      bytes,
      prepareMs,
      digestMs,
    };
  } finally {
    if (git) await removeGuard(git);
    if (made) await executor.removeTree(tree).catch(() => undefined);
  }
}

/** A retried warm-up Pod on the same claim finds the last one's tree: it starts clean. */
async function removeStaleTree(context: PrepareContext, tree: string): Promise<void> {
  if ((await context.executor.pathKind(tree)) === 'missing') return;
  await context.executor.removeTree(tree);
  context.emit({ type: 'workspace_removed', message: { path: tree, slot: SLOT } });
}

/** after_create as a run's lifecycle runs it: same env, timeout, streaming and redaction. */
async function afterCreate(context: PrepareContext, tree: string): Promise<void> {
  const { options, config } = context;
  await runHook({
    executor: context.executor,
    emit: context.emit,
    ...(options.drained ? { outputDrained: options.drained } : {}),
    hookName: 'after_create',
    command: config.hooks.afterCreate,
    workspace: tree,
    root: options.workspaceRoot,
    issue: normalizeIssue(WARM_UP_ISSUE, 'the warm-up issue'),
    timeoutMs: config.hooks.timeoutMs,
    slot: SLOT,
    env: context.env,
    ...(options.signal ? { signal: options.signal } : {}),
    runs: { next: 0 },
    holdOutput: (text) => context.redact.secretPrefixAtEnd(text),
  });
}

/** workspace.git's options for the tree; null without workspace.git. */
function gitOptions(context: PrepareContext, tree: string): GitWorkspaceOptions | null {
  const git = context.config.workspace.git;
  if (!git) return null;
  return {
    executor: context.executor,
    emit: context.emit,
    git,
    remote: resolveRemote(git),
    // What the events name until the remote says which branch is its default.
    branch: 'HEAD',
    root: context.options.workspaceRoot,
    workspace: tree,
    slot: SLOT,
    env: context.env,
    timeoutMs: context.config.hooks.timeoutMs,
    signal: context.options.signal ?? new AbortController().signal,
    credentialsDirectory: context.credentialsDirectory,
  };
}
