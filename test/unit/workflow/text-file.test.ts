import { afterAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadWorkflowFile } from '../../../src/template/load-workflow.js';
import { readFailureReason, readTextFile } from '../../../src/workflow/text-file.js';

const dir = mkdtempSync(join(tmpdir(), 'lorenz-read-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
mkdirSync(join(dir, 'a-directory'));
symlinkSync(join(dir, 'loop-b'), join(dir, 'loop-a'));
symlinkSync(join(dir, 'loop-a'), join(dir, 'loop-b'));
writeFileSync(join(dir, 'file'), 'x');
const long = join(dir, 'n'.repeat(5000));

describe('readTextFile', () => {
  it.each([
    ['a directory', join(dir, 'a-directory'), 'EISDIR', 'it is a directory, not a file (EISDIR)'],
    [
      'a symlink loop',
      join(dir, 'loop-a'),
      'ELOOP',
      'too many levels of symbolic links (a symlink loop) (ELOOP)',
    ],
    ['a missing file', join(dir, 'missing'), 'ENOENT', 'no such file (ENOENT)'],
    [
      'a file used as a directory',
      join(dir, 'file', 'x'),
      'ENOTDIR',
      'a component of the path is not a directory (ENOTDIR)',
    ],
  ])('reports %s as one line naming the file', async (_name, path, errno, reason) => {
    await expect(readTextFile(path, 'issue file')).rejects.toMatchObject({
      code: 'file_unreadable',
      message: `cannot read issue file ${path}: ${reason}`,
      detail: { path, errno },
    });
  });

  it('shortens a 5000-character name in the message', async () => {
    const error = await readTextFile(long, 'workflow file').catch((caught: Error) => caught);
    expect(error).toMatchObject({ code: 'file_unreadable', detail: { errno: 'ENAMETOOLONG' } });
    const { message } = error as Error;
    expect(message).toMatch(
      /^cannot read workflow file .{120}… \(\d+ characters\): the name is too long for the file system \(ENAMETOOLONG\)$/,
    );
    expect(message.length).toBeLessThan(300);
  });

  it('escapes control characters in the name, so the message stays one line', async () => {
    const error = await readTextFile(join(dir, 'a\nb'), 'issue file').catch((e: Error) => e);
    expect((error as Error).message).not.toContain('\n');
    expect((error as Error).message).toContain('a\\nb');
  });

  // Tests may run as root, where no read is refused: the reason is checked on the errno.
  it.each([
    ['EACCES', 'permission denied (EACCES)'],
    ['EPERM', 'operation not permitted (EPERM)'],
    ['EXDEV', 'cross-device link not permitted (EXDEV)'],
  ])('words %s', (errno, reason) => {
    const error = Object.assign(new Error(`${errno}: cross-device link not permitted, open '/x'`), {
      code: errno,
    });
    expect(readFailureReason(error)).toEqual({ errno, reason });
  });
});

describe('loadWorkflowFile', () => {
  it('keeps missing_workflow_file for a file that is not there', async () => {
    await expect(loadWorkflowFile(join(dir, 'WORKFLOW.md'))).rejects.toMatchObject({
      code: 'missing_workflow_file',
    });
  });

  it.each([join(dir, 'a-directory'), join(dir, 'loop-a'), long])(
    'reports an unreadable file as file_unreadable: %#',
    async (path) => {
      await expect(loadWorkflowFile(path)).rejects.toMatchObject({ code: 'file_unreadable' });
    },
  );
});
