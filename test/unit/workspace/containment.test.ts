import { describe, expect, it } from 'vitest';
import { mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createLocalExecutor } from '../../../src/executor/local.js';
import {
  assertWorkspaceCwd,
  assertWorkspaceRoot,
  createWorkspaceDirectory,
} from '../../../src/workspace/containment.js';
import { makeIssueWorkspace, useTempDir } from '../../support/workspace.js';

const executor = createLocalExecutor();
let base: string;
let root: string;
let elsewhere: string;
useTempDir('lorenz-contain-', 'test', async (dir) => {
  ({ base, root } = await makeIssueWorkspace(dir, 'ENG-1'));
  elsewhere = join(base, 'elsewhere');
  await mkdir(elsewhere);
});

async function rejection(
  cwd: string,
  workspaceRoot = root,
): Promise<{ code: string; message: string }> {
  const error = await assertWorkspaceCwd(executor, workspaceRoot, cwd).then(
    () => expect.fail('expected a rejection'),
    (caught: { code: string; message: string }) => caught,
  );
  return { code: error.code, message: error.message };
}

describe('assertWorkspaceCwd', () => {
  it('accepts a real directory inside the root and returns its canonical path', async () => {
    await expect(assertWorkspaceCwd(executor, root, join(root, 'ENG-1'))).resolves.toBe(
      join(root, 'ENG-1'),
    );
  });

  it('accepts a symlink that stays inside the root', async () => {
    await symlink(join(root, 'ENG-1'), join(root, 'alias'));
    await expect(assertWorkspaceCwd(executor, root, join(root, 'alias'))).resolves.toBe(
      join(root, 'ENG-1'),
    );
  });

  it.each([
    ['blank', '  '],
    ['newline', '/tmp/a\nb'],
    ['carriage return', '/tmp/a\rb'],
  ])('rejects a %s cwd as invalid_workspace_cwd', async (_name, cwd) => {
    expect((await rejection(cwd)).code).toBe('invalid_workspace_cwd');
  });

  it('rejects a missing cwd as invalid_workspace_cwd', async () => {
    const result = await rejection(join(root, 'missing'));
    expect(result.code).toBe('invalid_workspace_cwd');
    expect(result.message).toContain(join(root, 'missing'));
  });

  it('refuses the root itself, however it is spelled', async () => {
    for (const cwd of [root, `${root}/`, join(root, 'ENG-1', '..')]) {
      expect(await rejection(cwd)).toEqual({
        code: 'workspace_is_root',
        message: 'refusing to use workspace root as cwd',
      });
    }
  });

  it('rejects a path outside the root', async () => {
    expect(await rejection(elsewhere)).toEqual({
      code: 'workspace_outside_root',
      message: `workspace outside root: ${elsewhere}`,
    });
    expect((await rejection(join(root, '..', 'elsewhere'))).code).toBe('workspace_outside_root');
  });

  it.each(['..foo', '...', '..'.concat('.bar')])(
    'accepts %s: a name that starts with .. but is not .. is inside the root',
    async (name) => {
      const workspace = join(root, name);
      expect(await createWorkspaceDirectory(executor, root, workspace)).toBe(true);
      await expect(assertWorkspaceCwd(executor, root, workspace)).resolves.toBe(workspace);
    },
  );

  it('rejects a workspace that a symlink leads out of the root', async () => {
    const workspace = join(root, 'ENG-1');
    await rm(workspace, { recursive: true });
    await symlink(elsewhere, workspace);
    expect(await rejection(workspace)).toEqual({
      code: 'workspace_unsafe_symlink',
      message: `unsafe symlink in workspace path: ${workspace}`,
    });
  });

  it('rejects a symlink that leads back onto the root', async () => {
    await symlink(root, join(root, 'loop'));
    expect((await rejection(join(root, 'loop'))).code).toBe('workspace_unsafe_symlink');
  });

  it('rejects a symlinked root', async () => {
    const linkedRoot = join(base, 'linked-root');
    await symlink(root, linkedRoot);
    expect(await rejection(join(linkedRoot, 'ENG-1'), linkedRoot)).toEqual({
      code: 'workspace_unsafe_symlink',
      message: `unsafe symlink in workspace path: ${linkedRoot}`,
    });
    await expect(assertWorkspaceRoot(executor, linkedRoot)).rejects.toThrow(
      `unsafe symlink in workspace path: ${linkedRoot}`,
    );
  });
});

describe('createWorkspaceDirectory', () => {
  it('reports whether the final directory is new', async () => {
    const workspace = join(root, 'ENG-2', '0');
    expect(await createWorkspaceDirectory(executor, root, workspace)).toBe(true);
    expect(await createWorkspaceDirectory(executor, root, workspace)).toBe(false);
  });

  it('never creates anything through a planted symlink', async () => {
    await symlink(elsewhere, join(root, 'ENG-3'));
    await expect(
      createWorkspaceDirectory(executor, root, join(root, 'ENG-3', '0')),
    ).rejects.toThrow(`unsafe symlink in workspace path: ${join(root, 'ENG-3')}`);
    expect(await executor.pathKind(join(elsewhere, '0'))).toBe('missing');
  });

  it('refuses a file where the workspace should be, and the root itself', async () => {
    await writeFile(join(root, 'ENG-4'), 'x');
    await expect(
      createWorkspaceDirectory(executor, root, join(root, 'ENG-4')),
    ).rejects.toMatchObject({
      code: 'invalid_workspace_cwd',
    });
    await expect(createWorkspaceDirectory(executor, root, join(root, '.'))).rejects.toMatchObject({
      code: 'workspace_is_root',
    });
  });
});
