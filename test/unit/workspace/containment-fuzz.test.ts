import { mkdir, realpath, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalExecutor } from '../../../src/executor/local.js';
import { assertWorkspaceCwd } from '../../../src/workspace/containment.js';
import { runHook } from '../../../src/workspace/hooks.js';
import { isLorenzError } from '../../../src/workflow/errors.js';
import { makeTempDir, quickLoginEnv, removeTempDir } from '../../support/workspace.js';

/**
 * Containment under random trees: directories, files and symlinks (relative and absolute,
 * into the root, onto it, out of it, dangling, in loops), and random cwds through them. The
 * check must accept exactly the cwds whose real path is a directory strictly inside the real
 * root: never one that escapes (the security property), never refuse a safe one. Then
 * workspaces swapped for symlinks between two hooks: the second hook runs only inside the
 * root, and nothing is ever written outside it.
 */
const SEED = Number(process.env.LORENZ_PROPERTY_SEED ?? 20_261_130);
const TREES = 300;
const SWAPS = 100;
const executor = createLocalExecutor();
let base: string;

beforeAll(async () => {
  base = await makeTempDir('lorenz-contain-fuzz-');
});
afterAll(async () => {
  await removeTempDir(base);
});

const NAMES = ['a', 'b', 'c', 'ws', '..a'];
/** What a symlink points at, relative to the case's base (root, outside) or to itself. */
const TARGETS = [
  'root',
  'root/a',
  'root/a/b',
  'root/b',
  'outside',
  'outside/x',
  'missing',
  'root/file',
  '.',
  '..',
  '../..',
  'a',
  'b/c',
  'loop',
];

interface Entry {
  path: string[];
  kind: 'dir' | 'file' | 'link';
  target: string;
  absolute: boolean;
}

const entry = fc.record({
  path: fc.array(fc.constantFrom(...NAMES), { minLength: 1, maxLength: 3 }),
  kind: fc.constantFrom<Entry['kind']>('dir', 'dir', 'file', 'link', 'link'),
  target: fc.constantFrom(...TARGETS),
  absolute: fc.boolean(),
});
const tree = fc.array(entry, { minLength: 1, maxLength: 12 });
const cwd = fc.array(fc.constantFrom(...NAMES, '..', '.'), { minLength: 1, maxLength: 4 });

async function build(dir: string, entries: Entry[]): Promise<void> {
  await mkdir(join(dir, 'root'), { recursive: true });
  await mkdir(join(dir, 'outside', 'x'), { recursive: true });
  await writeFile(join(dir, 'root', 'file'), 'f');
  for (const item of entries) {
    const path = join(dir, 'root', ...item.path);
    try {
      await mkdir(join(path, '..'), { recursive: true });
      if (item.kind === 'dir') await mkdir(path, { recursive: true });
      else if (item.kind === 'file') await writeFile(path, 'f');
      else {
        const target = item.target === 'loop' ? path : item.target;
        const link = item.absolute ? resolve(dir, target) : target;
        await symlink(link, path);
      }
    } catch {
      // A parent is a file or a symlink, or the name is taken: the tree is what it is.
    }
  }
}

const inside = (parent: string, child: string): boolean => {
  const rel = relative(parent, child);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
};

/** The oracle: what the real file system says about this cwd. */
async function safeCwd(root: string, path: string): Promise<string | null> {
  if (!inside(resolve(root), resolve(path))) return null;
  try {
    const [realRoot, realCwd] = [await realpath(root), await realpath(path)];
    if (!inside(realRoot, realCwd)) return null;
    return (await stat(realCwd)).isDirectory() ? realCwd : null;
  } catch {
    return null;
  }
}

describe('containment fuzz', () => {
  it(`accepts exactly the cwds really inside the root, over ${TREES} random trees`, async () => {
    const cases = fc.sample(fc.tuple(tree, fc.array(cwd, { minLength: 4, maxLength: 4 })), {
      numRuns: TREES,
      seed: SEED,
    });
    let accepted = 0;
    let refused = 0;
    for (const [index, [entries, cwds]] of cases.entries()) {
      const dir = join(base, `tree-${index}`);
      await build(dir, entries);
      const root = join(dir, 'root');
      for (const parts of cwds) {
        const path = join(root, ...parts);
        const expected = await safeCwd(root, path);
        const verdict = await assertWorkspaceCwd(executor, root, path).then(
          (canonical) => canonical,
          (error: unknown) => {
            if (!isLorenzError(error)) throw error;
            return null;
          },
        );
        expect(
          verdict,
          `seed ${SEED}, tree ${index}: ${JSON.stringify(entries)}, cwd ${path}`,
        ).toBe(expected);
        if (verdict === null) refused += 1;
        else accepted += 1;
      }
      await rm(dir, { recursive: true, force: true });
    }
    // The trees are varied enough to exercise both answers many times.
    expect(accepted).toBeGreaterThan(50);
    expect(refused).toBeGreaterThan(200);
  });

  it(`never lets a hook run outside the root when its workspace is swapped between hooks (${SWAPS} swaps)`, async () => {
    const swaps = fc.sample(
      fc.record({
        target: fc.constantFrom('outside', 'outside/x', 'root', 'root/other', '/', 'missing'),
        absolute: fc.boolean(),
        viaParent: fc.boolean(),
      }),
      { numRuns: SWAPS, seed: SEED },
    );
    const env = quickLoginEnv(base);
    let ranInside = 0;
    for (const [index, swap] of swaps.entries()) {
      const dir = join(base, `swap-${index}`);
      const root = join(dir, 'root');
      const workspace = join(root, 'issue', 'ws');
      await mkdir(workspace, { recursive: true });
      await mkdir(join(root, 'other'), { recursive: true });
      await mkdir(join(dir, 'outside', 'x'), { recursive: true });
      const hook = (name: 'before_run' | 'after_run') =>
        runHook({
          executor,
          emit: () => undefined,
          hookName: name,
          command: `touch ran-${name}`,
          workspace,
          root,
          issue: null,
          timeoutMs: 10_000,
          slot: 0,
          env,
        });
      await hook('before_run');
      // Swap the workspace (or its parent) for a symlink.
      const swapped = swap.viaParent ? join(root, 'issue') : workspace;
      await rm(swapped, { recursive: true, force: true });
      const target = swap.target === '/' ? '/' : join(dir, swap.target);
      await symlink(swap.absolute ? target : relative(join(swapped, '..'), target) || '.', swapped);
      await hook('after_run');
      // after_run is best-effort: a refusal is reported, not thrown. What matters is where it
      // ran: only where the swap still leads inside the root (another directory of it).
      const ranAt = [];
      for (const place of [
        join(dir, 'outside'),
        join(dir, 'outside', 'x'),
        root,
        join(root, 'other'),
        '/',
      ]) {
        if (await stat(join(place, 'ran-after_run')).catch(() => null)) ranAt.push(place);
      }
      // (Through a swapped parent the cwd is <target>/ws, which exists nowhere: never run.)
      const expected = swap.target === 'root/other' && !swap.viaParent ? [join(root, 'other')] : [];
      expect(ranAt, `seed ${SEED}, swap ${index}: ${JSON.stringify(swap)}`).toEqual(expected);
      if (expected.length > 0) ranInside += 1;
      await rm(dir, { recursive: true, force: true });
    }
    expect(ranInside).toBeGreaterThan(5);
  });
});
