// hack/check-links.ts, which `npm run lint` runs: every relative link and #anchor in the
// repository's Markdown resolves, offline. Here on scratch files, then on the repository.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { anchorsOf, checkLinks, slug } from '../../../hack/check-links.js';
import { repoRoot, scratchDir } from './scratch.js';
import { eachCase } from '../../support/cases.js';

const scratch = scratchDir('lorenz-links-');

/** A scratch repository: the given Markdown files plus a target page and a file. */
function repository(name: string, files: Record<string, string>): string {
  const dir = join(scratch, name);
  mkdirSync(join(dir, 'docs'), { recursive: true });
  writeFileSync(
    join(dir, 'docs', 'target.md'),
    '# Target page\n\n## The `lorenz` CLI\n\n## Twice\n\n## Twice\n',
  );
  writeFileSync(join(dir, 'LICENSE'), 'text\n');
  for (const [path, text] of Object.entries(files)) writeFileSync(join(dir, path), text);
  return dir;
}

describe('checkLinks', () => {
  it.each([
    ['a good file link', '[t](docs/target.md)', []],
    ['a good anchor', '[t](docs/target.md#the-lorenz-cli)', []],
    ['the second of two same headings', '[t](docs/target.md#twice-1)', []],
    ['an anchor in the same file', '# Here\n\n[t](#here)', []],
    ['a link to a file that is not Markdown', '[t](LICENSE)', []],
    ['a directory', '[t](docs/)', []],
    ['a web link, not fetched', '[t](https://example.com/nowhere#x)', []],
    ['a link inside a code block', '```\n[t](docs/missing.md)\n```', []],
    ['a link inside a code span', '`[t](docs/missing.md)`', []],
    ['a broken link', '[t](docs/missing.md)', ['no such file: docs/missing.md']],
    ['a broken anchor', '[t](docs/target.md#nowhere)', ['no heading #nowhere in docs/target.md']],
    [
      'a broken anchor in the same file',
      '# Here\n\n[t](#there)',
      ['no heading #there in README.md'],
    ],
    ['a reference definition', '[t]: docs/gone.md', ['no such file: docs/gone.md']],
    ['a link out of the repository', '[t](../../etc/passwd)', ['points outside the repository']],
  ])('%s', (name, text, reasons) => {
    const dir = repository(name.replace(/\W+/g, '-'), { 'README.md': text });
    expect(checkLinks(dir, ['README.md']).map((link) => link.reason)).toEqual(reasons);
  });

  it('reports the file and line of each broken link', () => {
    const dir = repository('lines', { 'README.md': 'one\n\ntwo [t](docs/x.md)\n' });
    expect(checkLinks(dir, ['README.md'])).toEqual([
      { file: 'README.md', line: 3, target: 'docs/x.md', reason: 'no such file: docs/x.md' },
    ]);
  });
});

describe('GitHub anchors', () => {
  eachCase('%s → #%s', slug, [
    ['The `lorenz` CLI and its error codes', 'the-lorenz-cli-and-its-error-codes'],
    ["Lorenz's metrics", 'lorenzs-metrics'],
    [
      'Run it on a cluster: Helm with your own images',
      'run-it-on-a-cluster-helm-with-your-own-images',
    ],
    ['`hook_output`', 'hook_output'],
    ['a — b', 'a--b'],
  ]);

  it('ignores headings in code blocks', () => {
    expect([...anchorsOf('```yaml\n# not a heading\n```\n# Real\n')]).toEqual(['real']);
  });
});

describe('the repository', () => {
  it('has no broken link (what npm run lint runs)', () => {
    const out = execFileSync('hack/run-ts.sh', ['hack/check-links.ts'], {
      cwd: repoRoot,
      encoding: 'utf8',
    });
    expect(out).toMatch(/every link resolves/);
  });
});
