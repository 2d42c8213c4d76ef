// The workspace tree digest (docs/snapshots.md#the-workspace-digest): real trees in a temp dir.
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  chmod,
  mkdir,
  readFile,
  realpath,
  rename,
  rm,
  symlink,
  utimes,
  writeFile,
} from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mapConcurrently } from '../../../src/workspace/concurrently.js';
import { fileContentDigest } from '../../../src/workspace/file-digest.js';
import { verifyWorkspaceDigest, workspaceTreeDigest } from '../../../src/workspace/tree-digest.js';
import { failureOf } from '../../support/lorenz-errors.js';
import { makeTempDir, removeTempDir } from '../../support/workspace.js';

let base: string;
beforeEach(async () => {
  base = await makeTempDir('lorenz-digest-');
});
afterEach(async () => {
  await removeTempDir(base);
});

/** A small workspace with a bit of everything: files, a nested dir, an empty dir, links, .git. */
async function buildTree(name: string): Promise<string> {
  const root = join(base, name);
  await mkdir(join(root, 'src', 'lib'), { recursive: true });
  await mkdir(join(root, 'empty'));
  await mkdir(join(root, '.git', 'refs'), { recursive: true });
  await writeFile(join(root, 'README.md'), '# hello\n');
  await writeFile(join(root, 'src', 'main.ts'), 'export {};\n');
  await writeFile(join(root, 'src', 'lib', 'util.ts'), 'export const x = 1;\n');
  await writeFile(join(root, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  await writeFile(join(root, 'run.sh'), '#!/bin/sh\n');
  for (const [path, mode] of [
    ['README.md', 0o644],
    ['src/main.ts', 0o644],
    ['src/lib/util.ts', 0o644],
    ['.git/HEAD', 0o644],
    ['run.sh', 0o644],
    ['src', 0o755],
    ['src/lib', 0o755],
    ['empty', 0o755],
    ['.git', 0o755],
    ['.git/refs', 0o755],
  ] as const) {
    await chmod(join(root, path), mode);
  }
  await symlink('src/main.ts', join(root, 'entry'));
  await symlink('../main.ts', join(root, 'src', 'lib', 'up'));
  return root;
}

const digestOf = async (root: string): Promise<string> => (await workspaceTreeDigest(root)).digest;

describe('workspaceTreeDigest', () => {
  it('gives the same digest for the same tree built twice, and counts what it read', async () => {
    const first = await workspaceTreeDigest(await buildTree('one'));
    const second = await workspaceTreeDigest(await buildTree('two'));
    expect(first.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(second).toEqual(first);
    expect(first).toMatchObject({ files: 5, links: 2, dirs: 5, bytes: 8 + 11 + 20 + 21 + 10 });
  });

  it.each<[string, (root: string) => Promise<unknown>]>([
    ["a file's content", (root) => writeFile(join(root, 'src', 'main.ts'), 'export {}; \n')],
    ['a file added', (root) => writeFile(join(root, 'src', 'new.ts'), '')],
    ['a file added inside .git', (root) => writeFile(join(root, '.git', 'index'), '')],
    ['an empty dir added', (root) => mkdir(join(root, 'empty', 'more'))],
    ['a mode flipped (chmod +x)', (root) => chmod(join(root, 'run.sh'), 0o755)],
    ['a setuid bit set', (root) => chmod(join(root, 'run.sh'), 0o4644)],
    ["a directory's mode", (root) => chmod(join(root, 'empty'), 0o700)],
    [
      'a symlink retargeted',
      async (root) => {
        await rm(join(root, 'entry'));
        await symlink('src/lib/util.ts', join(root, 'entry'));
      },
    ],
    ['a file renamed', (root) => rename(join(root, 'README.md'), join(root, 'README.txt'))],
    [
      'a file swapped for a symlink to the same content',
      async (root) => {
        await rename(join(root, 'README.md'), join(root, 'empty', 'README.md'));
        await symlink('empty/README.md', join(root, 'README.md'));
      },
    ],
  ])('changes with %s', async (_, change) => {
    const root = await buildTree('tree');
    const before = await digestOf(root);
    await change(root);
    expect(await digestOf(root)).not.toBe(before);
  });

  it('does not change with mtime or atime', async () => {
    const root = await buildTree('tree');
    const before = await digestOf(root);
    const past = new Date('2001-02-03T04:05:06Z');
    for (const path of ['README.md', 'src', 'src/lib/util.ts', '.git/HEAD', 'empty']) {
      await utimes(join(root, path), past, past);
    }
    expect(await digestOf(root)).toBe(before);
  });

  it.each<[string, string, string]>([
    ['an absolute target', 'abs', '/etc/passwd'],
    ['an absolute target naming a place inside the tree', 'abs', '/'],
    ['a relative target climbing out', 'src/lib/out', '../../../elsewhere'],
    ['a target climbing out from the top', 'out', '..'],
    ['a dangling target climbing out', 'src/gone', '../../missing/file'],
  ])('refuses %s', async (_, link, target) => {
    const root = await buildTree('tree');
    await symlink(target, join(root, link));
    const error = await failureOf(workspaceTreeDigest(root));
    expect(error.code).toBe('workspace_tree_symlink_escapes');
    expect(error.message).toContain(`${root}/${link} -> ${target}`);
    expect(error.detail).toEqual({ path: `${root}/${link}`, target });
  });

  it('refuses a link that escapes only through another link', async () => {
    const root = await buildTree('tree');
    // src/lib/top -> ../.. is the root itself (contained); through it, `..` is above the top,
    // though `src/lib/top/..` read as text would be src/lib.
    await symlink('../..', join(root, 'src', 'lib', 'top'));
    await symlink('src/lib/top/..', join(root, 'esc'));
    const error = await failureOf(workspaceTreeDigest(root));
    expect(error.code).toBe('workspace_tree_symlink_escapes');
    expect(error.message).toContain(`${root}/esc -> src/lib/top/..: its target climbs above`);
  });

  it('refuses a link through another to an absolute target, and a loop', async () => {
    const root = await buildTree('tree');
    await mkdir(join(root, 'a'));
    await symlink('/tmp', join(root, 'a', 'tmp'));
    const error = await failureOf(workspaceTreeDigest(root));
    expect(error.message).toContain(`${root}/a/tmp -> /tmp`);
    await rm(join(root, 'a', 'tmp'));
    await symlink('b', join(root, 'a', 'c'));
    await symlink('c', join(root, 'a', 'b'));
    const loop = await failureOf(workspaceTreeDigest(root));
    expect(loop.code).toBe('workspace_tree_symlink_escapes');
    expect(loop.message).toMatch(/a\/b -> c: .*a loop/);
  });

  it('accepts links that stay inside: to the top, to a dir, dangling inside', async () => {
    const root = await buildTree('tree');
    await symlink('.', join(root, 'self'));
    await symlink('lib', join(root, 'src', 'lib2'));
    // Through lib2 (src/lib), `../..` is the top: the kernel agrees.
    await symlink('lib2/../../README.md', join(root, 'src', 'readme'));
    expect(await realpath(join(root, 'src', 'readme'))).toBe(join(root, 'README.md'));
    await symlink('not/there/yet', join(root, 'dangling'));
    await expect(workspaceTreeDigest(root)).resolves.toMatchObject({ links: 6 });
  });

  it('refuses a fifo, naming it', async () => {
    const root = await buildTree('tree');
    execFileSync('mkfifo', [join(root, 'src', 'pipe')]);
    const error = await failureOf(workspaceTreeDigest(root));
    expect(error.code).toBe('workspace_tree_unsupported_file');
    expect(error.message).toContain(`${root}/src/pipe is a fifo`);
    expect(error.detail).toEqual({ path: `${root}/src/pipe` });
  });

  it('refuses a root that is a symlink, as containment does', async () => {
    const root = await buildTree('tree');
    await symlink(root, join(base, 'link'));
    const error = await failureOf(workspaceTreeDigest(join(base, 'link')));
    expect(error.code).toBe('workspace_unsafe_symlink');
  });

  it('keeps the bytes of a name that is not UTF-8', async () => {
    const root = await buildTree('tree');
    const named = async (byte: number): Promise<string> => {
      const path = Buffer.concat([Buffer.from(`${root}/`), Buffer.from([0x6e, byte])]);
      await writeFile(path, '');
      const digest = await digestOf(root);
      await rm(path);
      return digest;
    };
    expect(await named(0xff)).not.toBe(await named(0xfe));
  });
});

describe('a large file', () => {
  it('is read in chunks through the buffer it is given (20 MB through 64 KiB)', async () => {
    const path = join(base, 'large.bin');
    await writeFile(path, randomBytes(20 * 1024 * 1024));
    const whole = createHash('sha256')
      .update(await readFile(path))
      .digest('hex');
    const chunked = await fileContentDigest(
      Buffer.from(path),
      20 * 1024 * 1024,
      Buffer.alloc(1 << 16),
    );
    expect(chunked.toString('hex')).toBe(whole);
  });

  it('is a file record of its size and content digest in the tree', async () => {
    const root = join(base, 'tree');
    await mkdir(root);
    const content = randomBytes(20 * 1024 * 1024);
    await writeFile(join(root, 'big'), content, { mode: 0o600 });
    await chmod(join(root, 'big'), 0o600);
    const expected = treeDigest([fileRecord('big', 0o600, content)]);
    await expect(workspaceTreeDigest(root)).resolves.toEqual({
      digest: expected,
      files: 1,
      bytes: content.length,
      links: 0,
      dirs: 0,
    });
  });

  it.each([
    ['grew', 2, /2 bytes when listed, 3 when read/],
    ['shrank', 5, /5 bytes when listed, 3 when read/],
  ])('is refused when it %s after it was listed', async (_, listed, why) => {
    const path = join(base, 'file');
    await writeFile(path, 'abc');
    await expect(fileContentDigest(Buffer.from(path), listed, Buffer.alloc(8))).rejects.toThrow(
      why,
    );
  });
});

// The record format, written again here from docs/snapshots.md rather than imported, so that
// a change to the format in the source fails this test.
const be32 = (value: number): Buffer => {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(value);
  return bytes;
};
const be64 = (value: number): Buffer => {
  const bytes = Buffer.alloc(8);
  bytes.writeBigUInt64BE(BigInt(value));
  return bytes;
};
const str = (text: string): Buffer =>
  Buffer.concat([be32(Buffer.byteLength(text)), Buffer.from(text)]);
const sha = (bytes: Buffer | string): Buffer => createHash('sha256').update(bytes).digest();

const dirRecord = (path: string, mode: number): [string, Buffer] => [
  path,
  Buffer.concat([Buffer.from('d'), str(path), be32(mode)]),
];
const fileRecord = (path: string, mode: number, content: Buffer | string): [string, Buffer] => [
  path,
  Buffer.concat([
    Buffer.from('f'),
    str(path),
    be32(mode),
    be64(Buffer.byteLength(content)),
    sha(content),
  ]),
];
const linkRecord = (path: string, target: string): [string, Buffer] => [
  path,
  Buffer.concat([Buffer.from('l'), str(path), str(target)]),
];

function treeDigest(records: [string, Buffer][]): string {
  const sorted = [...records].sort(([a], [b]) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  const hash = createHash('sha256').update(Buffer.from('lorenz-tree-v1\0'));
  for (const [, record] of sorted) hash.update(record);
  return `sha256:${hash.digest('hex')}`;
}

describe('the record format (a known answer)', () => {
  it('hashes the header, then each record in path-byte order', async () => {
    const root = join(base, 'tiny');
    // Byte order, not a walk's: `a-b` (0x2d) < `a.txt` (0x2e) < `a/z` (0x2f) < `b`, where a
    // depth-first walk would give a, a/z, a-b, a.txt.
    await mkdir(join(root, 'a'), { recursive: true });
    await mkdir(join(root, 'a-b'));
    await writeFile(join(root, 'a.txt'), 'hello\n');
    await writeFile(join(root, 'a', 'z'), '#!/bin/sh\nexit 0\n');
    await symlink('a.txt', join(root, 'b'));
    await chmod(join(root, 'a'), 0o755);
    await chmod(join(root, 'a-b'), 0o2750);
    await chmod(join(root, 'a.txt'), 0o644);
    await chmod(join(root, 'a', 'z'), 0o755);
    const expected = treeDigest([
      dirRecord('a', 0o755),
      dirRecord('a-b', 0o2750),
      fileRecord('a.txt', 0o644, 'hello\n'),
      fileRecord('a/z', 0o755, '#!/bin/sh\nexit 0\n'),
      linkRecord('b', 'a.txt'),
    ]);
    const actual = await workspaceTreeDigest(root);
    expect(actual.digest).toBe(expected);
    // Pinned, so a change to this test's encoder is seen too.
    expect(actual.digest).toBe(
      'sha256:46e174fa79c76fc6c417519f4d2e03709d22da0a450e2832d68d317dbcd05eda',
    );
  });

  it('is the header alone for an empty tree', async () => {
    const root = join(base, 'empty');
    await mkdir(root);
    expect(await digestOf(root)).toBe(`sha256:${sha('lorenz-tree-v1\0').toString('hex')}`);
  });
});

describe('verifyWorkspaceDigest', () => {
  it('resolves when the digest matches, and names both digests when it does not', async () => {
    const root = await buildTree('tree');
    const { digest } = await workspaceTreeDigest(root);
    await expect(verifyWorkspaceDigest(root, digest)).resolves.toMatchObject({ digest });
    const recorded = `sha256:${'0'.repeat(64)}`;
    const error = await failureOf(verifyWorkspaceDigest(root, recorded));
    expect(error.code).toBe('snapshot_digest_mismatch');
    expect(error.message).toContain(digest);
    expect(error.message).toContain(recorded);
    expect(error.detail).toEqual({ root, expected: recorded, actual: digest });
  });
});

describe('mapConcurrently', () => {
  it('keeps the order of its items and never runs more than its bound at once', async () => {
    let running = 0;
    let most = 0;
    const results = await mapConcurrently([5, 1, 4, 2, 3, 0], 2, async (n, worker) => {
      running++;
      most = Math.max(most, running);
      await new Promise((done) => setTimeout(done, n));
      running--;
      expect(worker).toBeLessThan(2);
      return n * 10;
    });
    expect(results).toEqual([50, 10, 40, 20, 30, 0]);
    expect(most).toBe(2);
  });
});
