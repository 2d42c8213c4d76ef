import { renderHookCommand } from '../template/hook.js';
import { renderPrompt } from '../template/prompt.js';
import { ensembleContext } from '../template/ensemble.js';
import { type HookName, HOOK_NAMES } from '../workflow/events.js';
import type { WorkflowConfig } from '../workflow/config.js';
import { type LoadedWorkflow, loadWorkflowFile } from '../template/load-workflow.js';
import { readIssueFile } from './issue-file.js';
import { UsageError, integerOption, parseFlags, requireOption } from './usage.js';

type Output = (text: string) => void;

async function loadReportingWarnings(path: string, warn: Output): Promise<LoadedWorkflow> {
  const workflow = await loadWorkflowFile(path);
  for (const warning of workflow.warnings) warn(`warning: ${path}: ${warning}\n`);
  return workflow;
}

function hookCommands(config: WorkflowConfig): Record<HookName, string | null> {
  return {
    after_create: config.hooks.afterCreate,
    before_run: config.hooks.beforeRun,
    after_run: config.hooks.afterRun,
    before_remove: config.hooks.beforeRemove,
  };
}

/** The flags `lorenz prompt render` parses (their help: cli/command-help.ts). */
export const PROMPT_RENDER_OPTIONS = {
  workflow: { type: 'string' },
  issue: { type: 'string' },
  attempt: { type: 'string' },
  slot: { type: 'string' },
  size: { type: 'string' },
} as const;

/** `lorenz prompt render --workflow FILE --issue ISSUE [--attempt N] [--slot I --size N]` */
export async function promptRenderCommand(
  args: string[],
  out: Output,
  err: Output,
): Promise<number> {
  const values = parseFlags(args, PROMPT_RENDER_OPTIONS);
  const workflow = await loadReportingWarnings(requireOption(values.workflow, '--workflow'), err);
  const issue = await readIssueFile(requireOption(values.issue, '--issue'));
  const size = integerOption(values.size, '--size') ?? 1;
  const slot = integerOption(values.slot, '--slot') ?? 0;
  if (size < 1) throw new UsageError('--size must be at least 1');
  if (slot >= size) throw new UsageError(`--slot ${slot} is out of range for --size ${size}`);
  const prompt = renderPrompt(workflow.promptTemplate, {
    issue,
    attempt: integerOption(values.attempt, '--attempt') ?? null,
    ensemble: ensembleContext(slot, size),
  });
  out(prompt.endsWith('\n') ? prompt : `${prompt}\n`);
  return 0;
}

/** The flags `lorenz hook render` parses (their help: cli/command-help.ts). */
export const HOOK_RENDER_OPTIONS = {
  workflow: { type: 'string' },
  hook: { type: 'string' },
  issue: { type: 'string' },
} as const;

/** `lorenz hook render --workflow FILE --hook NAME --issue ISSUE` */
export async function hookRenderCommand(args: string[], out: Output, err: Output): Promise<number> {
  const values = parseFlags(args, HOOK_RENDER_OPTIONS);
  const name = requireOption(values.hook, '--hook');
  if (!HOOK_NAMES.includes(name as HookName)) {
    throw new UsageError(`--hook must be one of ${HOOK_NAMES.join(', ')}, got '${name}'`);
  }
  const workflow = await loadReportingWarnings(requireOption(values.workflow, '--workflow'), err);
  const issue = await readIssueFile(requireOption(values.issue, '--issue'));
  const command = hookCommands(workflow.config)[name as HookName];
  if (command === null) {
    err(`${name} is not configured in ${workflow.source}\n`);
    return 1;
  }
  const rendered = renderHookCommand(command, issue);
  out(rendered.endsWith('\n') ? rendered : `${rendered}\n`);
  return 0;
}
