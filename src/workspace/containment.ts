import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { Executor } from '../executor/types.js';
import { LorenzError } from '../workflow/errors.js';

/**
 * The agent's cwd (and every hook's) must stay inside the workspace root. Checks use the
 * executor's realpath/lstat so they hold on whatever machine the workspace lives on, and
 * they run again immediately before each hook: a workspace swapped for a symlink after it
 * was created is caught then.
 */

/** A relative path that climbs out: `..` or `../…`. (`..foo` and `...` are names inside.) */
const climbsOut = (rel: string): boolean => rel === '..' || rel.startsWith(`..${sep}`);

function inside(parent: string, child: string): boolean {
  const rel = relative(parent, child);
  return rel !== '' && !climbsOut(rel) && !isAbsolute(rel);
}

function unsafeSymlink(path: string): LorenzError {
  return new LorenzError('workspace_unsafe_symlink', `unsafe symlink in workspace path: ${path}`, {
    path,
  });
}

async function canonical(executor: Executor, path: string): Promise<string> {
  try {
    return await executor.realpath(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // A symlink loop cannot lead anywhere safe: it is refused like any other unsafe symlink.
    if (code === 'ELOOP') throw unsafeSymlink(path);
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      throw new LorenzError(
        'invalid_workspace_cwd',
        `invalid_workspace_cwd: workspace path does not exist: ${path}`,
        { path },
      );
    }
    throw error;
  }
}

/** The root must be a real directory, not a symlink; resolves to its canonical path. */
export async function assertWorkspaceRoot(executor: Executor, root: string): Promise<string> {
  const kind = await executor.pathKind(root);
  if (kind === 'symlink') throw unsafeSymlink(root);
  if (kind !== 'directory') {
    throw new LorenzError(
      'invalid_workspace_cwd',
      `invalid_workspace_cwd: workspace root is not a directory: ${root}`,
      { path: root },
    );
  }
  return canonical(executor, root);
}

/**
 * Reject a cwd that is blank, multi-line or missing, the root itself, outside the root, or
 * inside it only by name (a symlink leading out, or back onto the root). Resolves to the
 * canonical cwd.
 */
export async function assertWorkspaceCwd(
  executor: Executor,
  root: string,
  cwd: string,
): Promise<string> {
  if (cwd.trim() === '' || /[\r\n]/.test(cwd)) {
    throw new LorenzError(
      'invalid_workspace_cwd',
      `invalid_workspace_cwd: workspace cwd must be a single non-blank line: ${JSON.stringify(cwd)}`,
      { path: cwd },
    );
  }
  const literalRoot = resolve(root);
  const literalCwd = resolve(cwd);
  if (literalCwd === literalRoot) {
    throw new LorenzError('workspace_is_root', 'refusing to use workspace root as cwd', {
      path: cwd,
    });
  }
  if (!inside(literalRoot, literalCwd)) {
    throw new LorenzError('workspace_outside_root', `workspace outside root: ${cwd}`, {
      path: cwd,
      root,
    });
  }
  const canonicalRoot = await assertWorkspaceRoot(executor, root);
  const canonicalCwd = await canonical(executor, cwd);
  // Literally inside the root, so a canonical form elsewhere can only come from a symlink.
  if (!inside(canonicalRoot, canonicalCwd)) throw unsafeSymlink(cwd);
  if ((await executor.pathKind(canonicalCwd)) !== 'directory') {
    throw new LorenzError(
      'invalid_workspace_cwd',
      `invalid_workspace_cwd: workspace path is not a directory: ${cwd}`,
      { path: cwd },
    );
  }
  return canonicalCwd;
}

/**
 * Create the workspace directory one level at a time below the (already checked) root,
 * refusing to descend through a symlink, so `mkdir -p` never creates anything outside the
 * root. Resolves true when the final directory is new (after_create runs only then).
 */
export async function createWorkspaceDirectory(
  executor: Executor,
  root: string,
  workspace: string,
): Promise<boolean> {
  const rel = relative(resolve(root), resolve(workspace));
  if (rel === '' || climbsOut(rel) || isAbsolute(rel)) {
    await assertWorkspaceCwd(executor, root, workspace); // throws the precise error
  }
  let current = root;
  let created = false;
  for (const part of rel.split(/[\\/]/)) {
    current = join(current, part);
    const kind = await executor.pathKind(current);
    if (kind === 'symlink') throw unsafeSymlink(current);
    if (kind === 'missing') created = await executor.ensureDirectory(current);
    else if (kind !== 'directory') {
      throw new LorenzError(
        'invalid_workspace_cwd',
        `invalid_workspace_cwd: workspace path is not a directory: ${current}`,
        { path: current },
      );
    } else created = false;
  }
  await assertWorkspaceCwd(executor, root, workspace);
  return created;
}
