import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdir, readFile, readdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createLocalExecutor } from '../../src/executor/local.js';
import { syncSkills } from '../../src/workspace/skills.js';
import { makeTempDir, removeTempDir } from './workspace-helpers.js';

const executor = createLocalExecutor();
let base: string;
let workspace: string;
let skills: string;

beforeEach(async () => {
  base = await makeTempDir('lorenz-skills-');
  workspace = join(base, 'ws');
  skills = join(base, 'skills');
  await mkdir(workspace);
  await mkdir(join(skills, 'review', 'refs'), { recursive: true });
  await writeFile(join(skills, 'review', 'SKILL.md'), 'review v1');
  await writeFile(join(skills, 'review', 'refs', 'a.md'), 'a');
  await mkdir(join(skills, 'deploy'));
  await writeFile(join(skills, 'deploy', 'SKILL.md'), 'deploy');
});
afterEach(async () => {
  await removeTempDir(base);
});

const overlay = (...parts: string[]) => join(workspace, '.lorenz', 'skills', ...parts);

describe('syncSkills', () => {
  it('copies each source to .lorenz/skills/<basename> with a .gitignore of *', async () => {
    const names = await syncSkills(executor, workspace, [
      join(skills, 'review'),
      `${join(skills, 'deploy')}/`,
    ]);
    expect(names).toEqual(['review', 'deploy']);
    expect(await readFile(overlay('review', 'refs', 'a.md'), 'utf8')).toBe('a');
    expect(await readFile(overlay('deploy', 'SKILL.md'), 'utf8')).toBe('deploy');
    expect((await readFile(overlay('.gitignore'), 'utf8')).trim()).toBe('*');
  });

  it('does nothing without sources', async () => {
    expect(await syncSkills(executor, workspace, [])).toEqual([]);
    expect(await readdir(workspace)).toEqual([]);
  });

  it('replaces the target and rewrites the .gitignore on every sync', async () => {
    await syncSkills(executor, workspace, [join(skills, 'review')]);
    await writeFile(overlay('review', 'stale.md'), 'agent edit');
    await writeFile(overlay('.gitignore'), 'changed');
    await writeFile(join(skills, 'review', 'SKILL.md'), 'review v2');
    await syncSkills(executor, workspace, [join(skills, 'review')]);
    expect(await readFile(overlay('review', 'SKILL.md'), 'utf8')).toBe('review v2');
    expect(await executor.pathKind(overlay('review', 'stale.md'))).toBe('missing');
    expect((await readFile(overlay('.gitignore'), 'utf8')).trim()).toBe('*');
  });

  it('de-duplicates sources by realpath', async () => {
    const names = await syncSkills(executor, workspace, [
      join(skills, 'review'),
      join(skills, 'deploy', '..', 'review'),
      join(skills, 'review'),
    ]);
    expect(names).toEqual(['review']);
  });

  it('leaves a target alone when it already is the source', async () => {
    await mkdir(overlay(), { recursive: true });
    await symlink(join(skills, 'review'), overlay('review'));
    await syncSkills(executor, workspace, [join(skills, 'review')]);
    expect(await executor.pathKind(overlay('review'))).toBe('symlink');
    expect(await readFile(join(skills, 'review', 'SKILL.md'), 'utf8')).toBe('review v1');
  });

  it('rejects a symlink anywhere in a source, naming the link, before copying anything', async () => {
    const link = join(skills, 'review', 'refs', 'escape');
    await symlink('/etc/hostname', link);
    await expect(
      syncSkills(executor, workspace, [join(skills, 'deploy'), join(skills, 'review')]),
    ).rejects.toMatchObject({
      code: 'workspace_skill_source_symlink',
      message: `workspace_skill_source_symlink: ${link}`,
    });
    expect(await readdir(workspace)).toEqual([]);
  });

  it('rejects a source that is itself a symlink', async () => {
    const link = join(base, 'linked-skill');
    await symlink(join(skills, 'review'), link);
    await expect(syncSkills(executor, workspace, [link])).rejects.toMatchObject({
      code: 'workspace_skill_source_symlink',
      message: `workspace_skill_source_symlink: ${link}`,
    });
  });

  it.each([
    ['a file', 'file.md', 'workspace_skill_source_unsupported'],
    ['a missing path', 'missing', 'workspace_skill_source_missing'],
  ])('rejects %s with a message that starts with the code', async (_name, entry, code) => {
    await writeFile(join(skills, 'file.md'), 'x');
    const error = await syncSkills(executor, workspace, [join(skills, entry)]).catch(
      (caught: { code: string; message: string }) => caught,
    );
    expect(error).toMatchObject({ code });
    expect((error as { message: string }).message.startsWith(`${code}: `)).toBe(true);
  });

  it('refuses an overlay directory that the workspace has turned into a symlink', async () => {
    const outside = join(base, 'outside');
    await mkdir(outside);
    await symlink(outside, join(workspace, '.lorenz'));
    await expect(syncSkills(executor, workspace, [join(skills, 'review')])).rejects.toMatchObject({
      code: 'workspace_unsafe_symlink',
    });
    expect(await readdir(outside)).toEqual([]);
  });
});
