import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import type { McpServer } from '../agent/index.js';
import type { AgentInbox } from '../agent/inbox.js';
import { createLazyAcpAgentStep } from '../agent/lazy.js';
import {
  INPUT_FILES,
  ISSUE_STATE_PATH,
  RUNNER_FLAGS,
  RUN_POD_PATHS,
  promptInputFile,
  type RunDescriptor,
} from '../api/run-pod.js';
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
import { ensembleSize } from '../workspace/ensemble.js';
import { workspacePath } from '../workspace/paths.js';
import { TREE_DIGEST_PATTERN } from '../api/workspace-source.js';
import { restoreSnapshotWorkspace } from './snapshot-restore.js';
import { credentialSecrets, loadGitCredentials } from '../workspace/git/index.js';
import { readVerifiedInputs, requireInput } from './inputs.js';
import { createIssueStateCheck } from './issue-state.js';
import { readSecret } from './read-secret.js';
import { createRedactor, secretsFromEnv } from './redact.js';
import { renderHooks } from './rendered-hooks.js';
import { encodeTerminationSummary, summarizeSlot } from './summary.js';
import { connectWorker, readWorkerCredentials, sshKeySecrets, type RunnerSsh } from './ssh.js';
import { gatewayServer, readToolsToken, type RunnerTools } from './tools.js';
import { runnerInbox } from './inbox-wiring.js';
import { readRunBudget } from './budget.js';
import type { RunBudget } from '../workflow/budget.js';

/**
 * `lorenz runner`: the entrypoint of a run Pod. It runs one ensemble slot of one IssueRun
 * with the core engine and the local executor, reports every event as a JSON line on
 * stdout (the controller follows the Pod log), and leaves a compact summary in the
 * termination message. It never talks to the Kubernetes API.
 */
export interface RunnerOptions {
  inputsDir: string;
  slot: number;
  /** The workspace volume: the lifecycle's root, unless it runs on an SSH worker. */
  workspaceRoot: string;
  issueStateFile: string;
  /** The digest the inputs must have (a downward-API file); absent: the manifest alone. */
  inputsDigestFile?: string | undefined;
  terminationLogPath: string;
  /** With a persistent claim the tree outlives the Pod: no before_remove, no removal. */
  keepWorkspace: boolean;
  /** Run the hooks only (no agent step). */
  noAgent: boolean;
  /** The digest of the snapshot's prepared tree the claim was restored from; absent: clean. */
  sourceDigest?: string | undefined;
  /** The agent-tools gateway to offer the agent; absent: no tools. */
  tools?: RunnerTools | undefined;
  /** The directory of per-host git credential files (the mounted Secret); absent: anonymous. */
  gitCredentials?: string | undefined;
  /** The SSH worker of this slot (the mounted key Secret and the chosen host); with worker.ssh_hosts. */
  ssh?: RunnerSsh | undefined;
  env: NodeJS.ProcessEnv;
  write: (line: string) => void;
  /** A promise while `write`'s destination is behind (a full stdout pipe); absent: never. */
  drained?: () => Promise<void> | undefined;
  /** Aborted on SIGTERM: the agent stops, after_run still runs. */
  signal?: AbortSignal;
  executor?: Executor;
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

/** Where the controller puts everything (the run-Pod contract), so the flags are optional. */
export const RUNNER_DEFAULTS = {
  inputsDir: RUN_POD_PATHS.inputs,
  workspaceRoot: RUN_POD_PATHS.workspace,
  issueStateFile: ISSUE_STATE_PATH,
  terminationLogPath: RUN_POD_PATHS.terminationLog,
} as const;

/** The flags `lorenz runner` parses (their help: cli/command-help.ts). */
export const RUNNER_OPTIONS = {
  [RUNNER_FLAGS.inputs]: { type: 'string', default: RUNNER_DEFAULTS.inputsDir },
  [RUNNER_FLAGS.slot]: { type: 'string', default: '0' },
  [RUNNER_FLAGS.workspace]: { type: 'string', default: RUNNER_DEFAULTS.workspaceRoot },
  [RUNNER_FLAGS.issueStateFile]: { type: 'string', default: RUNNER_DEFAULTS.issueStateFile },
  [RUNNER_FLAGS.inputsDigestFile]: { type: 'string' },
  [RUNNER_FLAGS.terminationLog]: {
    type: 'string',
    default: RUNNER_DEFAULTS.terminationLogPath,
  },
  [RUNNER_FLAGS.keepWorkspace]: { type: 'boolean', default: false },
  [RUNNER_FLAGS.noAgent]: { type: 'boolean', default: false },
  [RUNNER_FLAGS.toolsUrl]: { type: 'string' },
  [RUNNER_FLAGS.toolsTokenFile]: { type: 'string' },
  [RUNNER_FLAGS.toolsServerName]: { type: 'string', default: 'lorenz' },
  [RUNNER_FLAGS.gitCredentials]: { type: 'string' },
  [RUNNER_FLAGS.sshKey]: { type: 'string' },
  [RUNNER_FLAGS.knownHosts]: { type: 'string' },
  [RUNNER_FLAGS.sshHost]: { type: 'string' },
  [RUNNER_FLAGS.sourceDigest]: { type: 'string' },
} as const;

export function parseRunnerArgs(
  argv: string[],
): Omit<RunnerOptions, 'env' | 'write' | 'signal' | 'executor' | 'createAgentStep'> {
  const { values } = parseArgs({
    args: argv,
    options: RUNNER_OPTIONS,
    strict: true,
    allowPositionals: false,
  });
  const slotText = values[RUNNER_FLAGS.slot];
  const slot = Number(slotText);
  if (!Number.isInteger(slot) || slot < 0)
    throw new Error(`--${RUNNER_FLAGS.slot}: not a slot number: ${slotText}`);
  const toolsUrl = values[RUNNER_FLAGS.toolsUrl];
  const tokenFile = values[RUNNER_FLAGS.toolsTokenFile];
  if ((toolsUrl === undefined) !== (tokenFile === undefined)) {
    throw new Error(
      `--${RUNNER_FLAGS.toolsUrl} and --${RUNNER_FLAGS.toolsTokenFile} go together: give both or neither`,
    );
  }
  const sourceDigest = values[RUNNER_FLAGS.sourceDigest];
  if (sourceDigest !== undefined && !new RegExp(TREE_DIGEST_PATTERN).test(sourceDigest)) {
    throw new Error(
      `--${RUNNER_FLAGS.sourceDigest}: not a sha256:<64 hex> digest: ${sourceDigest}`,
    );
  }
  const ssh: RunnerSsh = {
    keyFile: values[RUNNER_FLAGS.sshKey],
    knownHostsFile: values[RUNNER_FLAGS.knownHosts],
    host: values[RUNNER_FLAGS.sshHost],
  };
  return {
    inputsDir: values[RUNNER_FLAGS.inputs],
    slot,
    workspaceRoot: values[RUNNER_FLAGS.workspace],
    issueStateFile: values[RUNNER_FLAGS.issueStateFile],
    inputsDigestFile: values[RUNNER_FLAGS.inputsDigestFile],
    terminationLogPath: values[RUNNER_FLAGS.terminationLog],
    keepWorkspace: values[RUNNER_FLAGS.keepWorkspace],
    noAgent: values[RUNNER_FLAGS.noAgent],
    ...(sourceDigest === undefined ? {} : { sourceDigest }),
    ...(values[RUNNER_FLAGS.gitCredentials] === undefined
      ? {}
      : { gitCredentials: values[RUNNER_FLAGS.gitCredentials] }),
    ...(Object.values(ssh).some((value) => value !== undefined) ? { ssh } : {}),
    ...(toolsUrl !== undefined && tokenFile !== undefined
      ? {
          tools: {
            url: toolsUrl,
            tokenFile,
            serverName: values[RUNNER_FLAGS.toolsServerName],
          },
        }
      : {}),
  };
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

/**
 * A claim restored from a snapshot: its prepared tree checked against the digest and made the
 * slot's workspace before the lifecycle (and so before any hook) starts. The controller never
 * gives a snapshot source to a run on an SSH worker (the tree is on the volume, not the host).
 */
async function restoreSource(
  options: RunnerOptions,
  plan: RunPlan,
  remote: boolean,
  emit: (event: LorenzEvent) => void,
): Promise<ReadonlySet<number>> {
  if (options.sourceDigest === undefined || remote) return new Set();
  const size = ensembleSize(plan.issue, plan.config.agent.ensembleSize);
  const workspace = workspacePath(options.workspaceRoot, plan.issue.identifier, options.slot, size);
  const restored = await restoreSnapshotWorkspace({
    root: options.workspaceRoot,
    workspace,
    expectedDigest: options.sourceDigest,
  });
  if (restored.kind === 'reused') return new Set();
  const { digest, files, bytes, durationMs } = restored;
  emit({
    type: 'workspace_restored',
    message: { path: workspace, digest, files, bytes, durationMs, slot: options.slot },
  });
  return new Set([options.slot]);
}

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
    const restoredSlots = await restoreSource(options, plan, remote, emit);
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

/** The `lorenz runner` command: argv after the subcommand; SIGTERM cancels the run. */
export async function runRunnerCommand(argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof parseRunnerArgs>;
  try {
    parsed = parseRunnerArgs(argv);
  } catch (error) {
    process.stderr.write(`lorenz runner: ${errorMessage(error)}\n`);
    return 2;
  }
  const controller = new AbortController();
  const onTerm = (): void => controller.abort();
  process.on('SIGTERM', onTerm);
  process.on('SIGINT', onTerm);
  try {
    return await runRunner({
      ...parsed,
      env: process.env,
      write: (line) => process.stdout.write(line),
      drained: stdoutDrained(),
      signal: controller.signal,
    });
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
