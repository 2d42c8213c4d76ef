import { dirname, resolve } from 'node:path';
import { createLazyAcpAgentStep } from '../agent/lazy.js';
import { createLocalExecutor } from '../executor/local.js';
import { renderPrompt } from '../template/prompt.js';
import { ensembleContext } from '../template/ensemble.js';
import type { AgentStep } from '../workspace/agent-step.js';
import { runIssueLifecycle } from '../workspace/lifecycle.js';
import {
  credentialSecrets,
  loadGitCredentials,
  type GitCredentials,
} from '../workspace/git/index.js';
import { createRedactor, redactError, secretsFromEnv, type Redactor } from '../runner/redact.js';
import { sshKeySecrets } from '../runner/ssh.js';
import { runnerInbox } from '../runner/inbox-wiring.js';
import { withCode } from '../workflow/errors.js';
import type { LorenzEvent } from '../workflow/events.js';
import type { Issue } from '../workflow/issue.js';
import { type LoadedWorkflow, loadWorkflowFile } from '../template/load-workflow.js';
import { isActiveState } from '../workflow/states.js';
import { markStartup } from '../workflow/startup-marks.js';
import { readIssueFile } from './issue-file.js';
import { chooseExecutor } from './ssh-worker.js';
import { onStdoutClosed } from './stdout.js';
import { integerOption, parseFlags, requireOption } from './usage.js';

type Output = (text: string) => void;

/** Where `lorenz run` and `lorenz poll` find git credentials when no flag names them. */
export const GIT_CREDENTIALS_VARIABLE = 'LORENZ_GIT_CREDENTIALS';

/**
 * `lorenz run --workflow FILE --issue ISSUE [--no-agent] [--attempt N] [--git-credentials P]
 * [--ssh-key FILE] [--known-hosts FILE]`: the whole lifecycle of one issue on this machine (or
 * on an SSH worker of `worker.ssh_hosts`), every update printed as one JSON line on stdout.
 */
export async function runCommand(args: string[], rawOut: Output, rawErr: Output): Promise<number> {
  // Nothing this command prints carries a secret it knows: `LORENZ_REDACT_*` values from the
  // start, then the tracker's key and the git tokens once read (the in-Pod runner's redactor).
  const { secrets: envSecrets, env } = secretsFromEnv(process.env);
  const secrets = [...envSecrets];
  let redact = createRedactor(secrets);
  const learn = (more: readonly (string | null | undefined)[]): void => {
    for (const secret of more) if (secret) secrets.push(secret, secret.trim());
    redact = createRedactor(secrets);
  };
  const out: Output = (text) => rawOut(redact.text(text));
  const err: Output = (text) => rawErr(redact.text(text));
  try {
    return await run(args, { out, err, env, learn, redact: () => redact });
  } catch (error) {
    throw redactError(error, redact);
  }
}

interface RunIo {
  out: Output;
  err: Output;
  /** The environment of hooks and the agent: this process's, less the values to redact. */
  env: NodeJS.ProcessEnv;
  /** More values to redact from here on. */
  learn(secrets: readonly (string | null | undefined)[]): void;
  redact(): Redactor;
}

/** The flags `lorenz run` parses (their help: cli/command-help.ts). */
export const RUN_OPTIONS = {
  workflow: { type: 'string' },
  issue: { type: 'string' },
  'no-agent': { type: 'boolean', default: false },
  attempt: { type: 'string' },
  'git-credentials': { type: 'string' },
  'ssh-key': { type: 'string' },
  'known-hosts': { type: 'string' },
} as const;

// eslint-disable-next-line max-lines-per-function -- `lorenz run` in order: parse, load, run, report; its finally closes what it opened
async function run(args: string[], io: RunIo): Promise<number> {
  const { out, err, env } = io;
  const values = parseFlags(args, RUN_OPTIONS);
  const workflowPath = requireOption(values.workflow, '--workflow');
  const issuePath = requireOption(values.issue, '--issue');
  // The namespace for the hooks starts while the workflow and the issue load, and the first
  // hook's process too (it runs with this process's environment, as every hook of the run).
  const local = createLocalExecutor({
    startNamespaceNow: true,
    commandsAhead: { env },
  });
  let workflow: LoadedWorkflow;
  let issue: Issue;
  let credentials: GitCredentials | null;
  let attempt: number | null;
  try {
    workflow = await loadWorkflowFile(workflowPath);
    io.learn([workflow.config.tracker.apiKey]);
    for (const warning of workflow.warnings) err(`warning: ${workflowPath}: ${warning}\n`);
    issue = await readIssueFile(issuePath);
    markStartup('workflow_loaded');
    attempt = integerOption(values.attempt, '--attempt') ?? null;
    const credentialsPath = values['git-credentials'] ?? process.env[GIT_CREDENTIALS_VARIABLE];
    // Only a workflow with workspace.git uses them; read up front so a bad file fails first.
    credentials =
      credentialsPath && workflow.config.workspace.git
        ? await loadGitCredentials(credentialsPath)
        : null;
    // A hook or the agent may print a remote's answer, the helper's or the file itself.
    if (credentials) io.learn(await credentialSecrets(credentials));
  } catch (error) {
    await local.shutdown();
    throw error;
  }
  // With worker.ssh_hosts, everything below happens on the first host that connects.
  const executor = await chooseExecutor(
    workflow.config,
    { sshKey: values['ssh-key'], knownHosts: values['known-hosts'] },
    () => local,
    (key) => io.learn(sshKeySecrets(key)),
  ).catch(async (error: unknown) => {
    await local.shutdown();
    throw error;
  });
  if (executor !== local) await local.shutdown();

  const emit = (raw: LorenzEvent): void => {
    // Value by value first: a secret with a character JSON escapes is still found whole.
    const event = io.redact().value(raw);
    out(`${JSON.stringify(event)}\n`);
    if (event.type === 'stderr' && typeof event.message === 'string') err(`${event.message}\n`);
  };

  const agent: AgentStep | undefined = values['no-agent']
    ? undefined
    : createLazyAcpAgentStep({
        config: workflow.config,
        executor,
        env,
        renderPrompt: (context) =>
          renderPrompt(workflow.promptTemplate, {
            issue: context.issue,
            attempt: context.attempt,
            ensemble: ensembleContext(context.slot, context.ensembleSize),
          }),
        // The issue file is the tracker of `lorenz run`: editing its state ends the turn loop.
        isIssueActive: async () => {
          const current: Issue = await readIssueFile(issuePath).catch(() => issue);
          return isActiveState(current.state, workflow.config.tracker);
        },
        // agent.approvals still decides here; with no gateway an ask gets on_timeout at once.
        inbox: runnerInbox({
          ...workflow,
          tools: undefined,
          token: undefined,
          slot: 0,
          attempt: null,
          emit,
        }),
      });

  // Ctrl-C / SIGTERM: stop the agent, let after_run and cleanup run, then exit. The handlers
  // stay installed: a second Ctrl-C must not kill this process mid-cleanup, which would leave
  // after_run's processes behind and the run unreported.
  const abort = new AbortController();
  const cancel: { by: NodeJS.Signals | null } = { by: null };
  const onSignal = (signal: NodeJS.Signals): void => {
    if (cancel.by !== null) return;
    cancel.by = signal;
    err(`lorenz: ${signal}: cancelling the run (after_run and cleanup still run)\n`);
    abort.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // The reader of stdout gone (`lorenz run | head`): nobody follows the run any more, so it
  // is cancelled like Ctrl-C rather than left to run its agent unseen, or crash mid-hook.
  const stopWatchingStdout = onStdoutClosed(() => onSignal('SIGPIPE'));
  try {
    const summary = await runIssueLifecycle({
      config: workflow.config,
      issue,
      executor,
      emit,
      attempt,
      env,
      signal: abort.signal,
      workflowDirectory: dirname(resolve(workflowPath)),
      // Streamed hook output is redacted record by record: a cut never splits a secret.
      holdOutput: (text) => io.redact().secretPrefixAtEnd(text),
      ...(agent ? { agent } : {}),
      ...(credentials ? { git: { credentialsDirectory: credentials.directory } } : {}),
    });
    for (const slot of summary.slots) {
      if (!slot.succeeded)
        err(`slot ${slot.slot} failed: ${withCode(slot.errorCode ?? 'error', slot.error ?? '')}\n`);
    }
    if (cancel.by !== null) err(`lorenz: cancelled by ${cancel.by}\n`);
    return summary.succeeded ? 0 : 1;
  } finally {
    // Nothing this run started may outlive it: daemons hooks left behind end here.
    await executor.shutdown();
    await credentials?.dispose();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    stopWatchingStdout();
  }
}
