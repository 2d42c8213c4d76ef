// The repository must stand on its own: no tracked file may send a reader to a document that
// is not in it (a facts file, a DESIGN file, a folder beside the checkout) or lean on "the
// reference" without saying what it is. What Lorenz is and what this project keeps of it is
// docs/design.md; comments point there.
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '../../..');

/** Files that hold these names as the patterns of a check, not as citations. */
const CHECKS = new Set([
  'test/unit/repo/stands-alone.test.ts',
  'test/unit/cli/help-text.test.ts',
  // Linear's own schema, vendored as test data: its descriptions are Linear's words.
  'test/fixtures/linear/schema.graphql',
]);

const CITATIONS: readonly [RegExp, string][] = [
  [/\bfacts\.md\b/i, 'names facts.md, which is not in the repository'],
  [/\bDESIGN\.md\b/, 'names DESIGN.md (the design is docs/design.md)'],
  [/\bthe reference\b(?!\s+(?:to|of|count|type)\b)/i, 'says "the reference" without saying what'],
];

/** Where a text leans outside the repository; `file` is its path relative to `base`. */
export function outsideCitations(base: string, file: string, text: string): string[] {
  const found: string[] = [];
  text.split('\n').forEach((line, index) => {
    const at = `${file}:${index + 1}`;
    for (const [pattern, what] of CITATIONS) if (pattern.test(line)) found.push(`${at}: ${what}`);
    // `../shared` is fine when it is a folder of the repository (src/controller/shared).
    for (const match of line.matchAll(/(?:\.\.\/)+shared\b/g)) {
      const target = resolve(base, dirname(file), match[0]);
      if (relative(base, target).startsWith('..') || !existsSync(target)) {
        found.push(`${at}: ${match[0]} leads outside the repository`);
      }
    }
  });
  return found;
}

function repositoryFiles(): string[] {
  return (
    execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], {
      cwd: root,
      encoding: 'utf8',
    })
      .split('\0')
      .filter((path) => path !== '' && !CHECKS.has(path))
      // Regular files only: the node_modules symlink of a worktree is nobody's text.
      .filter((path) => existsSync(join(root, path)) && lstatSync(join(root, path)).isFile())
  );
}

describe('the repository stands on its own', () => {
  it('no tracked file cites a document outside it or "the reference"', () => {
    const found = repositoryFiles().flatMap((path) => {
      const bytes = readFileSync(join(root, path));
      if (bytes.includes(0)) return [];
      return outsideCitations(root, path, bytes.toString('utf8'));
    });
    expect(found).toEqual([]);
  });

  it.each([
    ['facts.md', 'src/a.ts', '// the backoff of facts.md, "Retry"', true],
    ['DESIGN.md', 'bench/a.ts', '// targets in DESIGN.md', true],
    ['the reference', 'src/a.ts', "// exactly the reference's snake_case keys", true],
    ['a folder beside the checkout', 'test/unit/a.ts', "'../../../../shared/data/x'", true],
    ['a missing ../shared folder', 'test/unit/a.ts', '// beside it (../shared)', true],
    ['the controller shared folder', 'src/controller/issuerun/a.ts', "'../shared/names.js'", false],
    ['docs/design.md', 'src/a.ts', '// docs/design.md#dispatch-rules', false],
    ['a reference to a Secret', 'docs/a.md', 'the reference to the Secret is kept', false],
  ])('tells %s apart', (_name, file, line, flagged) => {
    expect(outsideCitations(root, file, line).length > 0).toBe(flagged);
  });
});
