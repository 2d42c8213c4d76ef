import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeDecision, planDispatch, type DispatchEntry } from '../dispatch/policy.js';
import { loadWorkflowFile } from '../template/load-workflow.js';
import { createTracker } from '../tracker/index.js';
import type { WorkflowConfig } from '../workflow/config.js';
import { UsageError, outputOption, parseFlags, requireOption } from './usage.js';

type Output = (text: string) => void;

/** The policy settings of a configuration, as the controller uses them. */
function settingsOf(config: WorkflowConfig) {
  return {
    activeStates: config.tracker.activeStates,
    terminalStates: config.tracker.terminalStates,
    maxConcurrentAgents: config.agent.maxConcurrentAgents,
    maxConcurrentAgentsByState: config.agent.maxConcurrentAgentsByState,
    ensembleSize: config.agent.ensembleSize,
  };
}

function printText(entries: readonly DispatchEntry[], out: Output): void {
  if (entries.length === 0) {
    out('no candidates\n');
    return;
  }
  const width = Math.max(...entries.map((entry) => entry.issue.identifier.length));
  const stateWidth = Math.max(...entries.map((entry) => (entry.issue.state ?? '-').length));
  for (const { issue, decision } of entries) {
    const state = (issue.state ?? '-').padEnd(stateWidth);
    out(`${issue.identifier.padEnd(width)}  ${state}  ${describeDecision(decision)}\n`);
  }
}

function printJson(entries: readonly DispatchEntry[], out: Output): void {
  const rows = entries.map(({ issue, decision }) => ({
    identifier: issue.identifier,
    state: issue.state,
    decision: decision.kind,
    ...(decision.kind === 'blocked' ? { blockedBy: decision.by } : {}),
    ...(decision.kind === 'over-cap' ? { cap: decision.cap, slots: decision.slots } : {}),
    ...(decision.kind === 'dispatch' ? { slots: decision.slots } : {}),
  }));
  out(`${JSON.stringify(rows, null, 2)}\n`);
}

/** The flags `lorenz poll` parses (their help: cli/command-help.ts). */
export const POLL_OPTIONS = {
  workflow: { type: 'string' },
  once: { type: 'boolean', default: false },
  'dry-run': { type: 'boolean', default: false },
  output: { type: 'string', default: 'text' },
  'no-agent': { type: 'boolean', default: false },
  'ssh-key': { type: 'string' },
  'known-hosts': { type: 'string' },
} as const;

/**
 * `lorenz poll --workflow FILE (--dry-run | --once) [--output text|json] [--no-agent]
 * [--ssh-key FILE] [--known-hosts FILE]`: asks the tracker
 * the Workflow names for its candidates and prints, in dispatch order, what the controller
 * would do with each (the same policy). With `--once` and without `--dry-run` it then runs
 * the dispatched issues here, one after another, through `lorenz run`'s engine. Keys come
 * from the configuration or its `$VAR`s and are never printed.
 */
export async function pollCommand(args: string[], out: Output, err: Output): Promise<number> {
  const values = parseFlags(args, POLL_OPTIONS);
  const path = requireOption(values.workflow, '--workflow');
  const output = outputOption(values.output, ['text', 'json']);
  if (!values.once && !values['dry-run']) {
    throw new UsageError('poll needs --dry-run (show the decisions) or --once (run them once)');
  }
  const workflow = await loadWorkflowFile(path);
  for (const warning of workflow.warnings) err(`warning: ${path}: ${warning}\n`);
  const tracker = createTracker(workflow.config);
  const candidates = await tracker.fetchCandidates();
  const entries = planDispatch(candidates, [], settingsOf(workflow.config));
  if (output === 'json') printJson(entries, out);
  else printText(entries, out);
  if (values['dry-run']) return 0;

  const { runCommand } = await import('./run-command.js');
  const dir = await mkdtemp(join(tmpdir(), 'lorenz-poll-'));
  let failed = 0;
  try {
    for (const { issue, decision } of entries) {
      if (decision.kind !== 'dispatch') continue;
      const issueFile = join(dir, `${issue.identifier.replace(/[^A-Za-z0-9_-]/g, '_')}.json`);
      await writeFile(issueFile, `${JSON.stringify(issue, null, 2)}\n`);
      const run = [
        '--workflow',
        path,
        '--issue',
        issueFile,
        ...(values['no-agent'] ? ['--no-agent'] : []),
        // For worker.ssh_hosts: each run connects to its worker with the same key.
        ...(values['ssh-key'] ? ['--ssh-key', values['ssh-key']] : []),
        ...(values['known-hosts'] ? ['--known-hosts', values['known-hosts']] : []),
      ];
      const code = await runCommand(run, out, err);
      if (code !== 0) failed += 1;
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return failed > 0 ? 1 : 0;
}
