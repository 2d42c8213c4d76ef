// One name per thing: a file name that means two things (three names.ts, a conditions.ts
// in api/ and another in controller/workflow/, hack/chart-sync.ts beside hack/sync-chart.ts)
// sends a reader to the wrong file. This test keeps the ones that were merged or renamed apart.
import { readdirSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../../..');

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : files(path);
    return /\.(ts|mts|mjs)$/.test(entry.name) ? [relative(ROOT, path)] : [];
  });
}

const SOURCES = [...files(join(ROOT, 'src')), ...files(join(ROOT, 'hack'))];
const base = (path: string): string => path.split('/').pop() ?? path;

describe('file names', () => {
  it.each(['names.ts', 'conditions.ts', 'workflow-config.ts'])(
    'at most one file is called %s',
    (name) => {
      expect(SOURCES.filter((path) => base(path) === name)).toHaveLength(
        name === 'conditions.ts' ? 1 : 0,
      );
    },
  );

  it('no two files of src/ (or of hack/) are named by the same words in another order', () => {
    const byWords = new Map<string, Set<string>>();
    for (const path of SOURCES) {
      const stem = base(path).replace(/\.[^.]+$/, '');
      const words = `${path.split('/')[0]}:${stem.split('-').sort().join('-')}`;
      byWords.set(words, (byWords.get(words) ?? new Set()).add(stem));
    }
    const clashes = [...byWords.values()].filter((stems) => stems.size > 1).map((s) => [...s]);
    expect(clashes).toEqual([]);
  });
});
