import { writeFile } from 'node:fs/promises';
import type { McpServer } from '../agent/index.js';
import type { AgentInbox } from '../agent/inbox.js';
import { createLazyAcpAgentStep } from '../agent/lazy.js';
import { INPUT_FILES, promptInputFile, type RunDescriptor } from '../api/run-pod.js';
import { createLocalExecutor } from '../executor/local.js';
import type { Executor } from '../executor/types.js';
import type { WorkflowConfig } from '../workflow/config.js';
import {
  LorenzError,
  errorMessage,
  isLorenzError,
  type SlotErrorCode,
} from '../workflow/errors.js';
import type { HookExecutionMessage, LorenzEvent, RunSummary } from '../workflow/events.js';
import { normalizeIssue, type Issue } from '../workflow/issue.js';
import { loadWorkflowText } from '../template/load-workflow.js';
import { markStartup } from '../workflow/startup-marks.js';
import type { AgentStep } from '../workspace/agent-step.js';
import { runIssueLifecycle } from '../workspace/lifecycle.js';
import { restoreSource } from './snapshot-restore.js';
import { parseRunnerInvocation, type RunnerArgs, type RunnerInvocation } from './args.js';
import { runPrepare } from './prepare.js';
import type { RunnerProcess } from './process.js';
import { credentialSecrets, loadGitCredentials } from '../workspace/git/index.js';
import { readVerifiedInputs, requireInput } from './inputs.js';
import { createIssueStateCheck } from './issue-state.js';
import { readSecret } from './read-secret.js';
import { createRedactor, secretsFromEnv } from './redact.js';
import { renderHooks } from './rendered-hooks.js';
import { encodeTerminationSummary, summarizeSlot } from './summary.js';
import { connectWorker, readWorkerCredentials, sshKeySecrets } from './ssh.js';
import { gatewayServer, readToolsToken } from './tools.js';
import { runnerInbox } from './inbox-wiring.js';
import { readRunBudget } from './budget.js';
import type { RunBudget } from '../workflow/budget.js';

export {
  PREPARE_FLAGS,
  RUNNER_DEFAULTS,
  RUNNER_OPTIONS,
  parseRunnerArgs,
  parseRunnerInvocation,
  type PrepareArgs,
  type RunnerArgs,
} from './args.js';

/**
 * `lorenz runner`: the entrypoint of a run Pod. It runs one ensemble slot of one IssueRun
 * with the core engine and the local executor, reports every event as a JSON line on
 * stdout (the controller follows the Pod log), and leaves a compact summary in the
 * termination message. It never talks to the Kubernetes API.
 * On SIGTERM (`signal`) the agent stops; after_run still runs.
 */
export interface RunnerOptions extends RunnerArgs, RunnerProcess {
  /** Seam for tests: the agent step for a config and a rendered prompt. */
  createAgentStep?: (options: {
    config: WorkflowConfig;
    prompt: string;
    isIssueActive: () => Promise<boolean>;
    env: NodeJS.ProcessEnv;
    executor: Executor;
    mcpServers: readonly McpServer[];
    /** agent.approvals' inbox; absent without it. */
    inbox?: AgentInbox | undefined;
    /** The attempt's budget (RUN_BUDGET_ENV); absent: no limits. */
    budget?: RunBudget | undefined;
  }) => AgentStep;
}

interface RunPlan {
  config: WorkflowConfig;
  issue: Issue;
  attempt: number | null;
  prompt: string;
  /** workspace.git's branch as the IssueRun keeps it; absent: the engine renders it. */
  branch: string | undefined;
}

async function planRun(options: RunnerOptions): Promise<RunPlan> {
  const inputs = await readVerifiedInputs(options.inputsDir, options.inputsDigestFile);
  markStartup('inputs_verified');
  const loaded = loadWorkflowText(
    requireInput(inputs, INPUT_FILES.workflow),
    `inputs/${INPUT_FILES.workflow}`,
  );
  const issue = normalizeIssue(
    JSON.parse(requireInput(inputs, INPUT_FILES.issue)),
    `inputs/${INPUT_FILES.issue}`,
  );
  const run = JSON.parse(requireInput(inputs, INPUT_FILES.run)) as Partial<RunDescriptor>;
  const prompt = requireInput(inputs, promptInputFile(options.slot));
  // The Pod's volume is the root of a local run only: on an SSH worker the lifecycle happens
  // under workspace.root as written, `~` being the worker's home (the engine resolves it there).
  const config: WorkflowConfig = onWorker(loaded.config)
    ? loaded.config
    : { ...loaded.config, workspace: { ...loaded.config.workspace, root: options.workspaceRoot } };
  // The engine renders the hooks again as it runs them; it must be what the controller
  // rendered and recorded, or this runner and that controller disagree on the engine.
  const expected = JSON.parse(requireInput(inputs, INPUT_FILES.hooks)) as unknown;
  if (JSON.stringify(renderHooks(config, issue)) !== JSON.stringify(expected)) {
    throw new LorenzError(
      'input_digest_mismatch',
      `input_digest_mismatch: the hooks rendered in the Pod differ from ${INPUT_FILES.hooks}`,
    );
  }
  const branch = typeof run.branch === 'string' ? run.branch : undefined;
  markStartup('workflow_loaded');
  return { config, issue, attempt: run.attempt ?? null, prompt, branch };
}

const onWorker = (config: WorkflowConfig): boolean => config.worker.sshHosts.length > 0;

function defaultAgentStep(
  options: Parameters<NonNullable<RunnerOptions['createAgentStep']>>[0],
): AgentStep {
  return createLazyAcpAgentStep({
    config: options.config,
    renderPrompt: () => options.prompt,
    isIssueActive: options.isIssueActive,
    env: options.env,
    executor: options.executor,
    mcpServers: options.mcpServers,
    inbox: options.inbox,
    budget: options.budget,
  });
}

/** Runs the slot; resolves the exit code (0 success, 1 failure). */
// eslint-disable-next-line max-lines-per-function -- the runner's lifecycle in order; its finally must see every resource opened above it
export async function runRunner(options: RunnerOptions): Promise<number> {
  const hooks: HookExecutionMessage[] = [];
  // Secret values never leave the Pod in what it reports: not in a hook's output, an agent
  // message or an error; and hooks and the agent do not get the copies made for this.
  const { secrets, env: visibleEnv } = secretsFromEnv(options.env);
  // The tools token is one more secret: a hook that prints it shows [redacted]. So are the
  // git tokens (a hook or the agent may print a remote's answer, or the file), and the SSH
  // key: read here once, it never leaves this process but for the SSH client.
  const tools = await readSecret(options.tools, readToolsToken, (token) => (token ? [token] : []));
  const git = await readSecret(options.gitCredentials, loadGitCredentials, credentialSecrets);
  const ssh = await readSecret(
    options.ssh?.keyFile === undefined ? undefined : options.ssh,
    readWorkerCredentials,
    (read) => sshKeySecrets(read.privateKey),
  );
  const token = tools.value;
  const credentials = git.value;
  const redact = createRedactor([...secrets, ...tools.secrets, ...git.secrets, ...ssh.secrets]);
  const emit = (raw: LorenzEvent): void => {
    const event = redact.value(raw);
    if (event.type === 'hook_execution') hooks.push(event.message);
    // `at`: when the runner wrote it, so readers of the log (the web view's timeline) know
    // when each step happened without the kubelet's timestamps.
    options.write(`${JSON.stringify({ ...event, at: new Date().toISOString() })}\n`);
  };
  let summary: RunSummary | null = null;
  let failure: { code: SlotErrorCode; message: string } | undefined;
  let executor = options.executor;
  // The namespace for the hooks starts while the inputs are verified and the workflow loaded
  // (a run on an SSH worker does not need it and ends it then).
  // The environment of hooks and agent here; the first hook's process starts ahead with it.
  const localEnv = { ...visibleEnv, LORENZ_WORKSPACE_ROOT: options.workspaceRoot };
  const local = executor
    ? undefined
    : createLocalExecutor({ startNamespaceNow: true, commandsAhead: { env: localEnv } });
  try {
    if (tools.error !== undefined) throw tools.error;
    if (git.error !== undefined) throw git.error;
    const mcpServers = options.tools && token ? [gatewayServer(options.tools, token)] : [];
    const plan = await planRun(options);
    const remote = onWorker(plan.config);
    if (executor === undefined && remote) {
      if (ssh.error !== undefined) throw ssh.error;
      await local?.shutdown();
      executor = await connectWorker(
        plan.config,
        options.ssh ?? {},
        ssh.value ?? (await readWorkerCredentials(options.ssh ?? {})),
      );
    }
    executor ??= local ?? createLocalExecutor();
    const env = remote ? visibleEnv : localEnv;
    const isIssueActive = createIssueStateCheck({
      stateFile: options.issueStateFile,
      fallbackState: plan.issue.state,
      activeStates: plan.config.tracker.activeStates,
      terminalStates: plan.config.tracker.terminalStates,
    });
    const budget = readRunBudget(options.env);
    const makeStep = options.createAgentStep ?? defaultAgentStep;
    const agent = options.noAgent
      ? undefined
      : makeStep({
          config: plan.config,
          prompt: plan.prompt,
          isIssueActive,
          env,
          executor,
          mcpServers,
          inbox: runnerInbox({ ...plan, tools: options.tools, token, slot: options.slot, emit }),
          budget,
        });
    const restoredSlots = await restoreSource({
      root: options.workspaceRoot,
      issue: plan.issue,
      configuredEnsembleSize: plan.config.agent.ensembleSize,
      slot: options.slot,
      sourceDigest: options.sourceDigest,
      remote,
      emit,
    });
    summary = await runIssueLifecycle({
      config: plan.config,
      issue: plan.issue,
      executor,
      emit,
      ...(options.drained ? { outputDrained: options.drained } : {}),
      ...(agent ? { agent } : {}),
      attempt: plan.attempt,
      env,
      ...(options.signal ? { signal: options.signal } : {}),
      slots: [options.slot],
      cleanup: !options.keepWorkspace,
      restoredSlots,
      git: { branch: plan.branch, credentialsDirectory: credentials?.directory },
      // Streamed hook output is redacted record by record: a cut never splits a secret.
      holdOutput: (text) => redact.secretPrefixAtEnd(text),
    });
  } catch (error) {
    failure = {
      code: isLorenzError(error) ? error.code : 'runner_failed',
      message: redact.text(errorMessage(error)),
    };
    emit({ type: 'stderr', message: `lorenz runner: ${failure.message}`, slot: options.slot });
  } finally {
    // Nothing a hook started may outlive the runner, not even what left its process group.
    if (!options.executor) {
      await executor?.shutdown();
      // Failed before the lifecycle chose where to run: the early namespace ends here.
      if (executor === undefined) await local?.shutdown();
    }
    await credentials?.dispose();
  }
  if (!summary) {
    // The lifecycle never ran to its end: still close the stream with run_completed.
    emit({
      type: 'run_completed',
      message: {
        identifier: '',
        succeeded: false,
        slots: [
          {
            slot: options.slot,
            workspace: '',
            succeeded: false,
            errorCode: failure?.code ?? 'runner_failed',
            error: failure?.message ?? '',
            turns: 0,
          },
        ],
      },
    });
  }
  const cancelled = options.signal?.aborted === true;
  const termination = summarizeSlot({
    slot: options.slot,
    summary: redact.value(summary),
    hooks,
    cancelled,
    ...(failure ? { failure } : {}),
  });
  try {
    await writeFile(options.terminationLogPath, encodeTerminationSummary(termination));
  } catch (error) {
    options.write(
      `${JSON.stringify({ type: 'stderr', message: `cannot write the termination message: ${errorMessage(error)}`, at: new Date().toISOString() })}\n`,
    );
  }
  return termination.succeeded ? 0 : 1;
}

/**
 * The `lorenz runner` command: argv after the subcommand. A run, or with `--prepare` a
 * warm-up (prepare.ts); SIGTERM cancels either. Exit 0 done, 1 failed, 2 a usage error.
 */
export async function runRunnerCommand(argv: string[]): Promise<number> {
  let invocation: RunnerInvocation;
  try {
    invocation = parseRunnerInvocation(argv);
  } catch (error) {
    process.stderr.write(`lorenz runner: ${errorMessage(error)}\n`);
    return 2;
  }
  const controller = new AbortController();
  const onTerm = (): void => controller.abort();
  process.on('SIGTERM', onTerm);
  process.on('SIGINT', onTerm);
  const io = {
    env: process.env,
    write: (line: string) => process.stdout.write(line),
    drained: stdoutDrained(),
    signal: controller.signal,
  };
  try {
    return invocation.mode === 'prepare'
      ? await runPrepare({ ...invocation.args, ...io })
      : await runRunner({ ...invocation.args, ...io });
  } finally {
    process.off('SIGTERM', onTerm);
    process.off('SIGINT', onTerm);
  }
}

/**
 * process.stdout on a pipe is asynchronous: writes queue in memory while the reader (the
 * container runtime's log writer, a slow `kubectl logs`) is behind. This tells the hooks to
 * stop reading their output until the queue drains, so a hook that prints 1 GB is held back
 * by the pipe rather than held in memory.
 */
function stdoutDrained(): () => Promise<void> | undefined {
  let draining: Promise<void> | undefined;
  return () => {
    if (!process.stdout.writableNeedDrain) return undefined;
    draining ??= new Promise<void>((resolve) => {
      process.stdout.once('drain', () => {
        draining = undefined;
        resolve();
      });
    });
    return draining;
  };
}
