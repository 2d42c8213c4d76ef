// What the tests of the repository's own scripts share: where the repository is, the Node 24
// npm installed (the scripts need it, whatever node is first on PATH), and scratch folders.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

export const repoRoot = join(import.meta.dirname, '../../..');
export const node24 = join(repoRoot, 'node_modules', '.bin', 'node');

/** A fresh folder under the system tmp dir, removed after the tests of the enclosing scope. */
export function scratchDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
