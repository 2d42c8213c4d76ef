// The directory layout the `local` tracker's tests share: a temp dir per test with a board
// folder in it, so a test can also name paths beside the board (a missing board, a
// configured path relative to the working directory).
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach } from 'vitest';
import { tempDirPerTest, type TempDir } from '../../support/temp-dir.js';

export interface LocalBoardDirs {
  /** The temp dir itself. */
  root: TempDir;
  /** `<root>/board`, made before each test and holding `files` (name → text). */
  board: TempDir;
}

export function localBoardPerTest(
  prefix: string,
  files: Record<string, string> = {},
): LocalBoardDirs {
  const root = tempDirPerTest(prefix);
  const board = () => join(root(), 'board');
  beforeEach(async () => {
    await mkdir(board());
    for (const [name, text] of Object.entries(files)) await writeFile(join(board(), name), text);
  });
  return { root, board };
}
