import { lstat, readdir, realpath } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import type { Executor } from '../executor/types.js';
import { LorenzError } from '../workflow/errors.js';
import { expandPath } from './paths.js';

/** Fixed, as in Lorenz (docs/design.md#the-lifecycle-order): not configurable. */
export const SKILLS_DIRECTORY = join('.lorenz', 'skills');

/**
 * The `agent.skills` entries as paths on this machine: `~`, `~/…` and a whole-value `$VAR`
 * are expanded, and a relative path is taken from the WORKFLOW.md's directory, not from
 * wherever `lorenz` happens to be started. An entry that expands to nothing is missing.
 */
export function resolveSkillSources(
  sources: readonly string[],
  workflowDirectory: string,
  env: NodeJS.ProcessEnv,
): string[] {
  return sources.map((source) => {
    const expanded = expandPath(source, env);
    if (expanded === null) {
      throw new LorenzError(
        'workspace_skill_source_missing',
        `workspace_skill_source_missing: ${source} (expands to nothing)`,
        { path: source },
      );
    }
    return resolve(workflowDirectory, expanded);
  });
}

/**
 * Skill sources live on the machine that runs Lorenz, so they are checked with node:fs;
 * the workspace side goes through the executor (it may be remote later).
 */
async function checkSource(source: string): Promise<string> {
  let stats;
  try {
    stats = await lstat(source);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      throw new LorenzError(
        'workspace_skill_source_missing',
        `workspace_skill_source_missing: ${source}`,
        { path: source },
      );
    }
    throw error;
  }
  if (stats.isSymbolicLink()) {
    throw new LorenzError(
      'workspace_skill_source_symlink',
      `workspace_skill_source_symlink: ${source}`,
      { path: source },
    );
  }
  if (!stats.isDirectory()) {
    throw new LorenzError(
      'workspace_skill_source_unsupported',
      `workspace_skill_source_unsupported: ${source} is not a directory`,
      { path: source },
    );
  }
  await rejectSymlinksBelow(source);
  return realpath(source);
}

async function rejectSymlinksBelow(directory: string): Promise<void> {
  const entries = await readdir(directory, { recursive: true, withFileTypes: true });
  for (const entry of entries) {
    if (entry.isSymbolicLink()) {
      const link = join(entry.parentPath, entry.name);
      throw new LorenzError(
        'workspace_skill_source_symlink',
        `workspace_skill_source_symlink: ${link}`,
        {
          path: link,
        },
      );
    }
  }
}

function unsafeSymlink(path: string): LorenzError {
  return new LorenzError('workspace_unsafe_symlink', `unsafe symlink in workspace path: ${path}`, {
    path,
  });
}

/**
 * Anything the overlay writes through must not be a symlink the workspace planted: a link at
 * `.lorenz`, `.lorenz/skills`, a skill's target or the `.gitignore` could point back at a
 * skill source (or anywhere else) and let a later hook, or this write, change what it leads to.
 */
async function refuseSymlink(executor: Executor, path: string): Promise<void> {
  if ((await executor.pathKind(path)) === 'symlink') throw unsafeSymlink(path);
}

async function ensureRealDirectory(executor: Executor, path: string): Promise<void> {
  const kind = await executor.pathKind(path);
  if (kind === 'missing') await executor.ensureDirectory(path);
  else if (kind === 'symlink') throw unsafeSymlink(path);
  else if (kind !== 'directory') {
    throw new LorenzError(
      'invalid_workspace_cwd',
      `invalid_workspace_cwd: skills overlay path is not a directory: ${path}`,
      { path },
    );
  }
}

async function sameRealpath(executor: Executor, target: string, source: string): Promise<boolean> {
  try {
    return (await executor.realpath(target)) === source;
  } catch {
    return false;
  }
}

/**
 * Overlay skill directories into `<workspace>/.lorenz/skills/<basename>`, (re)writing a
 * `.gitignore` of `*` there so the agent never commits them. Every source is checked before
 * anything is copied; duplicates (by realpath) are copied once; a target is replaced unless
 * it already is the source. Resolves to the names overlaid; no sources, no overlay.
 */
export async function syncSkills(
  executor: Executor,
  workspace: string,
  sources: readonly string[],
): Promise<string[]> {
  if (sources.length === 0) return [];
  const unique = new Map<string, string>(); // realpath → basename
  for (const source of sources) {
    const real = await checkSource(source);
    if (!unique.has(real)) unique.set(real, basename(resolve(source)));
  }
  const dotLorenz = join(workspace, '.lorenz');
  const skillsRoot = join(workspace, SKILLS_DIRECTORY);
  await ensureRealDirectory(executor, dotLorenz);
  await ensureRealDirectory(executor, skillsRoot);
  const targets = [...unique].map(([real, name]) => ({
    real,
    name,
    target: join(skillsRoot, name),
  }));
  // Checked before anything is written, so a refused overlay leaves the workspace as it was.
  for (const { target } of targets) await refuseSymlink(executor, target);
  const gitignore = join(skillsRoot, '.gitignore');
  await refuseSymlink(executor, gitignore);
  await executor.writeFile(gitignore, '*\n');
  const names: string[] = [];
  for (const { real, name, target } of targets) {
    // With no symlink on the way, a target shares the source's realpath only when the source
    // itself lies in the workspace: there is nothing to copy then.
    if (!(await sameRealpath(executor, target, real))) {
      await executor.copyTree(real, target, { within: workspace });
    }
    names.push(name);
  }
  return names;
}
