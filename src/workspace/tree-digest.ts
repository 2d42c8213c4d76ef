import { createHash, type Hash } from 'node:crypto';
import { createLocalExecutor } from '../executor/local.js';
import { LorenzError } from '../workflow/errors.js';
import { mapConcurrently } from './concurrently.js';
import { assertWorkspaceRoot } from './containment.js';
import { FILE_READ_BYTES, fileContentDigest } from './file-digest.js';
import { assertLinksContained } from './tree-links.js';
import { listTree, onDisk, type FileEntry, type TreeEntry } from './tree-walk.js';

/**
 * The digest of a workspace's tree, which a warm start checks a restored snapshot against
 * before any hook. The walk and the record format are defined in docs/snapshots.md
 * (#the-workspace-digest); a change to either is a new format version, since digests recorded
 * with the old one would no longer match.
 */

export interface TreeDigest {
  /** `sha256:<64 hex>` */
  digest: string;
  files: number;
  /** The files' contents, summed. */
  bytes: number;
  links: number;
  /** Directories below the root (the root itself is not a record). */
  dirs: number;
}

/** The first bytes hashed: the format's name and version. */
export const TREE_DIGEST_HEADER = Buffer.from('lorenz-tree-v1\0', 'latin1');

/**
 * How many files are read at once. Hashing runs on this one thread; the reads go to libuv's
 * pool (4 threads), so a few in flight keep the hash fed without crowding a 2-core machine.
 */
const READERS = 6;
/** How many listings and lstats are in flight at once while walking. */
const LISTERS = 16;

const TYPE = { dir: 'd', file: 'f', symlink: 'l' } as const;

function u32(value: number): Buffer {
  const bytes = Buffer.allocUnsafe(4);
  bytes.writeUInt32BE(value);
  return bytes;
}

function u64(value: number): Buffer {
  const bytes = Buffer.allocUnsafe(8);
  bytes.writeBigUInt64BE(BigInt(value));
  return bytes;
}

/** A length-prefixed byte string: no separator can be confused with a name's own bytes. */
const framed = (bytes: Buffer): Buffer[] => [u32(bytes.length), bytes];

/** One entry's record (docs/snapshots.md): type, path, then what its type has. */
function writeRecord(hash: Hash, entry: TreeEntry, contentDigest: Buffer | undefined): void {
  const parts = [Buffer.from(TYPE[entry.kind], 'latin1'), ...framed(entry.path)];
  if (entry.kind === 'dir') parts.push(u32(entry.mode));
  if (entry.kind === 'file') {
    if (contentDigest === undefined)
      throw new Error(`no content digest for ${entry.path.toString()}`);
    parts.push(u32(entry.mode), u64(entry.size), contentDigest);
  }
  if (entry.kind === 'symlink') parts.push(...framed(entry.target));
  hash.update(Buffer.concat(parts));
}

/**
 * Walks `root` (never following a symlink), refuses an unsupported file or an escaping link,
 * and hashes every entry's record in path-byte order. The root must be a real directory (a
 * symlink is refused as containment.ts refuses one).
 */
export async function workspaceTreeDigest(root: string): Promise<TreeDigest> {
  // Only the executor's filesystem questions are asked: no command runs, so no namespace.
  const canonical = await assertWorkspaceRoot(createLocalExecutor({ pidNamespace: false }), root);
  const rootBytes = Buffer.from(canonical);
  const entries = await listTree(rootBytes, LISTERS);
  entries.sort((a, b) => Buffer.compare(a.path, b.path));
  // Before any file is read: a refused tree costs a listing, not a read of every byte.
  assertLinksContained(canonical, entries);
  const files = entries.filter((entry): entry is FileEntry => entry.kind === 'file');
  const buffers = Array.from({ length: READERS }, () => Buffer.allocUnsafe(FILE_READ_BYTES));
  const contents = new Map<TreeEntry, Buffer>();
  await mapConcurrently(files, READERS, async (file, worker) => {
    const buffer = buffers[worker] ?? Buffer.allocUnsafe(FILE_READ_BYTES);
    contents.set(file, await fileContentDigest(onDisk(rootBytes, file.path), file.size, buffer));
  });
  const hash = createHash('sha256').update(TREE_DIGEST_HEADER);
  for (const entry of entries) writeRecord(hash, entry, contents.get(entry));
  return {
    digest: `sha256:${hash.digest('hex')}`,
    files: files.length,
    bytes: files.reduce((sum, file) => sum + file.size, 0),
    links: entries.filter((entry) => entry.kind === 'symlink').length,
    dirs: entries.filter((entry) => entry.kind === 'dir').length,
  };
}

/**
 * The warm start's check: `root` must have the digest recorded with its snapshot. Throws
 * snapshot_digest_mismatch naming both; resolves to the tree's digest when they agree.
 */
export async function verifyWorkspaceDigest(root: string, expected: string): Promise<TreeDigest> {
  const actual = await workspaceTreeDigest(root);
  if (actual.digest !== expected) {
    throw new LorenzError(
      'snapshot_digest_mismatch',
      `snapshot_digest_mismatch: the workspace ${root} has digest ${actual.digest}, its snapshot was recorded with ${expected}`,
      { root, expected, actual: actual.digest },
    );
  }
  return actual;
}
