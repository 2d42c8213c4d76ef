import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Every character outside [A-Za-z0-9_.-] becomes `_`: `feat/login` → `feat_login`. */
export function safeIdentifier(identifier: string): string {
  return identifier.replace(/[^A-Za-z0-9_.-]/g, '_');
}

/**
 * `<root>/<safe-identifier>` for a solo run, `<root>/<safe-identifier>/<slot>` for an
 * ensemble, so that slots of one issue never share a directory.
 */
export function workspacePath(
  root: string,
  identifier: string,
  slot: number,
  size: number,
): string {
  const base = join(root, safeIdentifier(identifier));
  return size > 1 ? join(base, String(slot)) : base;
}

export interface ResolvedRoot {
  /** The expanded root this machine uses. */
  root: string;
  /** The value as chosen before expansion; a remote worker expands `~` against its own HOME. */
  rootExpression: string;
}

export const DEFAULT_ROOT_NAME = 'lorenz_workspaces';
const WHOLE_VARIABLE = /^\$([A-Za-z_][A-Za-z0-9_]*)$/;

function nonEmpty(value: string | null | undefined): string | null {
  return value !== undefined && value !== null && value !== '' ? value : null;
}

function homeOf(env: NodeJS.ProcessEnv): string | null {
  return nonEmpty(env.HOME) ?? nonEmpty(env.USERPROFILE);
}

/**
 * Expand `~`, `~/…` (against HOME, else USERPROFILE) and a whole-value `$VAR`. Anything else,
 * `$HOME/work` included, stays literal. Null when a `$VAR` or `~` has nothing to expand to. The
 * workspace root and `agent.skills` entries are expanded alike
 * (docs/design.md#the-lifecycle-order).
 */
export function expandPath(expression: string, env: NodeJS.ProcessEnv): string | null {
  if (expression === '~' || expression.startsWith('~/')) {
    const home = homeOf(env);
    return home === null ? null : join(home, expression.slice(1));
  }
  const variable = WHOLE_VARIABLE.exec(expression);
  if (variable) return nonEmpty(env[variable[1] as string]);
  return expression;
}

/**
 * The root on a remote worker: a `~` or `~/…` expression expands against the worker's HOME
 * (docs/design.md#the-lifecycle-order); anything else is used as this machine expanded it.
 */
export function workerRoot(resolved: ResolvedRoot, workerHome: string): string {
  const expression = resolved.rootExpression;
  if (expression === '~' || expression.startsWith('~/')) {
    return join(workerHome, expression.slice(1));
  }
  return resolved.root;
}

/**
 * The workspace root: LORENZ_WORKSPACE_ROOT if non-empty, else `workspace.root`, else
 * `<tmpdir>/lorenz_workspaces`. A value that expands to nothing (an unset `$VAR`) counts as
 * absent, so the next source applies rather than a relative, empty root.
 */
export function resolveWorkspaceRoot(
  configRoot: string | null,
  env: NodeJS.ProcessEnv,
): ResolvedRoot {
  for (const expression of [nonEmpty(env.LORENZ_WORKSPACE_ROOT), nonEmpty(configRoot)]) {
    if (expression === null) continue;
    const root = expandPath(expression, env);
    if (root !== null) return { root, rootExpression: expression };
  }
  const fallback = join(tmpdir(), DEFAULT_ROOT_NAME);
  return { root: fallback, rootExpression: fallback };
}
