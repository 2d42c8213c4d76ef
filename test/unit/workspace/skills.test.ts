import { describe, expect, it } from 'vitest';
import { mkdir, readFile, readdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createLocalExecutor } from '../../../src/executor/local.js';
import { resolveSkillSources, syncSkills } from '../../../src/workspace/skills.js';
import { useTempDir } from '../../support/workspace.js';
import { eachNamedCase } from '../../support/cases.js';

const executor = createLocalExecutor();
let base: string;
let workspace: string;
let skills: string;

useTempDir('lorenz-skills-', 'test', async (dir) => {
  base = dir;
  workspace = join(base, 'ws');
  skills = join(base, 'skills');
  await mkdir(workspace);
  await mkdir(join(skills, 'review', 'refs'), { recursive: true });
  await writeFile(join(skills, 'review', 'SKILL.md'), 'review v1');
  await writeFile(join(skills, 'review', 'refs', 'a.md'), 'a');
  await mkdir(join(skills, 'deploy'));
  await writeFile(join(skills, 'deploy', 'SKILL.md'), 'deploy');
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

  it('skips the copy when the source is the target itself (a source inside the workspace)', async () => {
    await mkdir(overlay('local'), { recursive: true });
    await writeFile(overlay('local', 'SKILL.md'), 'in place');
    expect(await syncSkills(executor, workspace, [overlay('local')])).toEqual(['local']);
    expect(await readFile(overlay('local', 'SKILL.md'), 'utf8')).toBe('in place');
  });

  // A link back at the source would let a later hook (or the agent) write into the source.
  it.each([
    ['the skill target', ['.lorenz', 'skills', 'review'], (src: string) => src],
    ['.lorenz/skills', ['.lorenz', 'skills'], (src: string) => join(src, '..')],
    ['.lorenz', ['.lorenz'], (src: string) => join(src, '..', '..')],
  ])(
    'refuses a symlink at %s that points back at the source, leaving the source alone',
    async (_where, parts, pointAt) => {
      const source = join(skills, 'review');
      const planted = join(workspace, ...parts);
      await mkdir(join(planted, '..'), { recursive: true });
      await symlink(pointAt(source), planted);
      await expect(syncSkills(executor, workspace, [source])).rejects.toMatchObject({
        code: 'workspace_unsafe_symlink',
        message: `unsafe symlink in workspace path: ${planted}`,
      });
      expect((await readdir(source)).sort()).toEqual(['SKILL.md', 'refs']);
      expect(await readFile(join(source, 'SKILL.md'), 'utf8')).toBe('review v1');
    },
  );

  it('refuses a .gitignore symlink instead of writing through it', async () => {
    const victim = join(base, 'victim.txt');
    await writeFile(victim, 'keep me');
    await mkdir(overlay(), { recursive: true });
    await symlink(victim, overlay('.gitignore'));
    await expect(syncSkills(executor, workspace, [join(skills, 'review')])).rejects.toMatchObject({
      code: 'workspace_unsafe_symlink',
      message: `unsafe symlink in workspace path: ${overlay('.gitignore')}`,
    });
    expect(await readFile(victim, 'utf8')).toBe('keep me');
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

describe('resolveSkillSources', () => {
  const env = { HOME: '/home/me', SKILLS: '/opt/skills', EMPTY: '' };
  /** Where one skills entry of a WORKFLOW.md in /repo resolves to. */
  const resolved = (entry: string): string[] => resolveSkillSources([entry], '/repo', env);
  eachNamedCase('resolves %s', resolved, [
    ['a relative path, from the WORKFLOW.md directory', 'skills/review', ['/repo/skills/review']],
    ['a parent-relative path', '../common/deploy', ['/common/deploy']],
    ['an absolute path, as is', '/abs/skill', ['/abs/skill']],
    ['~/…, against HOME', '~/skills/review', ['/home/me/skills/review']],
    ['a whole-value $VAR', '$SKILLS', ['/opt/skills']],
    ['an embedded $VAR, literally (relative)', '$HOME/x', ['/repo/$HOME/x']],
  ]);

  it.each(['$UNSET', '$EMPTY'])(
    'reports %s, which expands to nothing, as a missing source',
    (entry) => {
      expect(() => resolveSkillSources([entry], '/repo', env)).toThrow(
        expect.objectContaining({
          code: 'workspace_skill_source_missing',
          message: `workspace_skill_source_missing: ${entry} (expands to nothing)`,
        }),
      );
    },
  );
});
