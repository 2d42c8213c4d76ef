import { join } from 'node:path';
import { LorenzError } from '../../workflow/errors.js';
import { failureOf, runSteps, succeeded } from './commands.js';
import {
  INFERENCE_FILES,
  SETUP_FILES,
  SetupFileError,
  inferSetup,
  parseSetupFile,
  type RepositorySetup,
  type SetupStep,
} from './setup-file.js';
import { commandContext, report, type GitWorkspaceOptions } from './context.js';

/** How much of a failed step's output its error quotes. */
const OUTPUT_HEAD = 200;

const setupFailed = (message: string): LorenzError =>
  new LorenzError('workspace_setup_failed', `workspace_setup_failed: ${message}`);

/** The repository's setup file (the first that exists), else what its lock files imply. */
export async function readRepositorySetup(options: GitWorkspaceOptions): Promise<RepositorySetup> {
  const { executor, workspace } = options;
  for (const file of SETUP_FILES) {
    const path = join(workspace, file);
    const kind = await executor.pathKind(path);
    if (kind === 'missing') continue;
    // A symlink could point anywhere on the machine: only the repository's own file counts.
    if (kind !== 'file') throw setupFailed(`${file} must be a regular file, not a ${kind}`);
    const text = (await executor.readFile(path)) ?? '';
    try {
      const parsed = parseSetupFile(text, file);
      if (parsed.setup !== null)
        return { source: file, setup: parsed.setup, teardown: parsed.teardown };
      const inferred = await infer(options);
      return {
        source: `${file} (setup inferred)`,
        setup: inferred.steps,
        teardown: parsed.teardown,
      };
    } catch (error) {
      if (error instanceof SetupFileError) throw setupFailed(error.message);
      throw error;
    }
  }
  const inferred = await infer(options);
  const source =
    inferred.from.length > 0 ? `inferred from ${inferred.from.join(' and ')}` : 'no setup file';
  return { source, setup: inferred.steps, teardown: [] };
}

async function infer(options: GitWorkspaceOptions) {
  const present = new Set<string>();
  for (const file of INFERENCE_FILES) {
    if ((await options.executor.pathKind(join(options.workspace, file))) === 'file')
      present.add(file);
  }
  return inferSetup(present);
}

function checkAllowed(options: GitWorkspaceOptions, step: SetupStep, where: string): void {
  const [binary] = step;
  if (!options.git.setupBinaries.includes(binary)) {
    throw setupFailed(
      `${where}: ${JSON.stringify(binary)} is not an allowed binary (workspace.git.setup_binaries: ${options.git.setupBinaries.join(', ')})`,
    );
  }
}

/**
 * Runs setup (fail-fast: throws workspace_setup_failed naming the binary and the start of its
 * output) or teardown (best-effort: a failure is reported and the rest still runs).
 */
export async function runSetupSteps(
  options: GitWorkspaceOptions,
  setup: RepositorySetup,
  which: 'setup' | 'teardown',
): Promise<void> {
  const steps = which === 'setup' ? setup.setup : setup.teardown;
  if (steps.length === 0) return;
  const startedAt = Date.now();
  const context = commandContext(options);
  for (const [index, step] of steps.entries()) {
    const where = `${setup.source} ${which}[${index}]`;
    try {
      checkAllowed(options, step, where);
      const result = await runSteps(context, [step]);
      if (!succeeded(result)) {
        throw setupFailed(
          `${where} ${step[0]} ${failureOf(result, options.timeoutMs, OUTPUT_HEAD)}`,
        );
      }
    } catch (error) {
      if (which === 'setup' || !(error instanceof LorenzError)) {
        if (error instanceof LorenzError) {
          report(options, which, 'failed', error.message, startedAt, error.code);
        }
        throw error;
      }
      report(options, which, 'warning', error.message, startedAt);
    }
  }
  report(
    options,
    which,
    'completed',
    `${which}: ${steps.map((step) => step.join(' ')).join('; ')} (${setup.source})`,
    startedAt,
  );
}
