// `npm run bench:warm`, first part (bench/warm-start.ts is the second): the workspace tree
// digest (src/workspace/tree-digest.ts) against issue 32's goal: a 200 MB tree digested in the
// runner in ≤ 2 s. A benchmark, not a test: it prints the figure beside the goal and never
// fails on it.
//
// The tree is what a warm workspace looks like: a node_modules of many small files in many
// package directories (with .bin links), a .git with loose objects and one large pack, and a
// few large build outputs. Contents are random (nothing compresses or dedupes). The tree is
// generated in a temp dir, digested once to warm up, then BENCH_ROUNDS times; the median is
// the figure. The files are in the page cache by then: a volume freshly restored from a
// snapshot may read slower than this, at its disk's (or its lazy restore's) pace.
//
//   BENCH_MB           the tree's size in MB                 (200)
//   BENCH_SMALL_FILES  small files under node_modules        (20000)
//   BENCH_ROUNDS       measured rounds                       (5)
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { workspaceTreeDigest, type TreeDigest } from '../src/workspace/tree-digest.js';
import { say } from './report.js';

const GOAL_MS = 2000;
const MB = 1024 * 1024;

const envNumber = (name: string, fallback: number) => {
  const value = Number(process.env[name] ?? fallback);
  return Number.isFinite(value) && value >= 1 ? Math.floor(value) : fallback;
};

/** Random bytes, drawn from one pool so that generating 20 000 files stays quick. */
function contentSource(): (size: number) => Buffer {
  const pool = randomBytes(4 * MB);
  return (size) => {
    if (size > pool.length) return randomBytes(size);
    const start = Math.floor(Math.random() * (pool.length - size));
    return pool.subarray(start, start + size);
  };
}

/** Small-file sizes as a package tree has them: mostly a few KB, some tens of KB. */
const smallSize = (index: number): number =>
  200 + ((index * 7919) % 8000) * (index % 10 === 0 ? 6 : 1);

async function nodeModules(
  root: string,
  files: number,
  bytes: (n: number) => Buffer,
): Promise<number> {
  let total = 0;
  const perPackage = 20;
  await mkdir(join(root, 'node_modules', '.bin'), { recursive: true });
  for (let first = 0; first < files; first += perPackage) {
    const pkg = join(root, 'node_modules', `pkg-${first / perPackage}`);
    await mkdir(join(pkg, 'lib', 'internal'), { recursive: true });
    const writes: Promise<void>[] = [];
    for (let index = first; index < Math.min(files, first + perPackage); index += 1) {
      const dir =
        index % 3 === 0 ? pkg : index % 3 === 1 ? join(pkg, 'lib') : join(pkg, 'lib', 'internal');
      const size = smallSize(index);
      total += size;
      writes.push(writeFile(join(dir, `file-${index}.js`), bytes(size)));
    }
    await Promise.all(writes);
    if ((first / perPackage) % 5 === 0) {
      await symlink(
        `../pkg-${first / perPackage}/file-${first}.js`,
        join(root, 'node_modules', '.bin', `tool-${first}`),
      );
    }
  }
  return total;
}

/** A tree of about `totalMb` MB; resolves to what was written. */
async function generateTree(
  root: string,
  totalMb: number,
  smallFiles: number,
): Promise<{ bytes: number }> {
  const bytes = contentSource();
  let total = await nodeModules(root, smallFiles, bytes);
  await mkdir(join(root, '.git', 'objects', 'pack'), { recursive: true });
  for (let index = 0; index < 256; index += 1) {
    const dir = join(root, '.git', 'objects', index.toString(16).padStart(2, '0'));
    await mkdir(dir);
    await writeFile(join(dir, 'a'.repeat(38)), bytes(2000));
    total += 2000;
  }
  await mkdir(join(root, 'dist'));
  // The rest in a few large files: the pack takes half of it, two build outputs the other half.
  const rest = Math.max(0, totalMb * MB - total);
  const pack = Math.floor(rest / 2);
  const bundle = Math.floor(rest / 4);
  const large: [string, number][] = [
    [join(root, '.git', 'objects', 'pack', 'pack-1.pack'), pack],
    [join(root, 'dist', 'bundle.js'), bundle],
    [join(root, 'dist', 'bundle.js.map'), rest - pack - bundle],
  ];
  for (const [path, size] of large) {
    await writeFile(path, randomBytes(size));
    total += size;
  }
  return { bytes: total };
}

async function timed(root: string): Promise<{ ms: number; digest: TreeDigest }> {
  const start = performance.now();
  const digest = await workspaceTreeDigest(root);
  return { ms: performance.now() - start, digest };
}

async function main(): Promise<void> {
  const totalMb = envNumber('BENCH_MB', 200);
  const smallFiles = envNumber('BENCH_SMALL_FILES', 20_000);
  const rounds = envNumber('BENCH_ROUNDS', 5);
  const root = await mkdtemp(join(tmpdir(), 'lorenz-bench-digest-'));
  try {
    say(`generating ${totalMb} MB with ${smallFiles} small files in ${root}`);
    const generated = await generateTree(root, totalMb, smallFiles);
    const warm = await timed(root);
    const { files, links, dirs, bytes } = warm.digest;
    say(
      `tree: ${files} files, ${(bytes / MB).toFixed(1)} MB, ${links} links, ${dirs} dirs (written ${(generated.bytes / MB).toFixed(1)} MB)`,
    );
    say(`warm-up ${warm.ms.toFixed(0)} ms`);
    const times: number[] = [];
    for (let round = 0; round < rounds; round += 1) {
      const { ms, digest } = await timed(root);
      if (digest.digest !== warm.digest.digest)
        throw new Error('the digest changed between rounds');
      times.push(ms);
    }
    times.sort((a, b) => a - b);
    const median = times[Math.floor(times.length / 2)] ?? NaN;
    say(`rounds (ms, sorted): ${times.map((ms) => ms.toFixed(0)).join(' ')}`);
    say(
      `${cpus().length} cores, load ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}, node ${process.version}`,
    );
    console.log(
      `tree digest of ${(bytes / MB).toFixed(0)} MB (${files} files): median ${median.toFixed(0)} ms of ${rounds}` +
        ` (${((bytes / MB / median) * 1000).toFixed(0)} MB/s); goal ≤ ${GOAL_MS} ms: ${(median / GOAL_MS).toFixed(2)}× the goal`,
    );
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

await main();
