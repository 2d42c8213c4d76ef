// The unit tests are laid out like the code: the tests of src/controller/issuerun/ are in
// test/unit/controller/issuerun/, so the tests of a module are found without a search.
// Three folders have no src/ twin on purpose: repo/ (the repository as a whole: layers, docs,
// packaging, scripts), support/ (the tests of test/support's own helpers) and web/ (the
// browser code in web/src).
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../../..');
const UNIT = join(ROOT, 'test/unit');
const OWN_FOLDERS = new Set(['repo', 'support', 'web']);
const ROOT_FILES = new Set(['global-setup.ts']);

function folders(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) => {
      const path = join(dir, entry.name);
      return [relative(UNIT, path), ...folders(path)];
    });
}

describe('test/unit mirrors src/', () => {
  it('keeps no test file at its top level', () => {
    const loose = readdirSync(UNIT).filter(
      (name) => statSync(join(UNIT, name)).isFile() && !ROOT_FILES.has(name),
    );
    expect(loose).toEqual([]);
  });

  it('has a folder only where src/ has the same folder', () => {
    const strays = folders(UNIT).filter((folder) => {
      const top = folder.split('/')[0] ?? folder;
      if (OWN_FOLDERS.has(top)) return false;
      return !existsSync(join(ROOT, 'src', folder));
    });
    expect(strays).toEqual([]);
  });

  it('gives every src/ folder with code a folder of tests', () => {
    const untested = readdirSync(join(ROOT, 'src'), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
      .filter((name) => !existsSync(join(UNIT, name)));
    expect(untested).toEqual([]);
  });
});
