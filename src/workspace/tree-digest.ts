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
const READERS = 8;
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

interface ContentReader {
  /** Starts reading a level's files (after the levels before it). */
  readLevel: (found: readonly TreeEntry[]) => void;
  /** Every file handed in so far, with its content digest, once all are read. */
  finished: () => Promise<Map<TreeEntry, Buffer>>;
}

/**
 * Reads files while the walk lists the next level: one level's files at a time, READERS of
 * them at once, each reader with its own buffer.
 */
function contentReader(root: Buffer): ContentReader {
  const contents = new Map<TreeEntry, Buffer>();
  const buffers = Array.from({ length: READERS }, () => Buffer.allocUnsafe(FILE_READ_BYTES));
  let reads: Promise<unknown> = Promise.resolve();
  const readFile = async (file: FileEntry, worker: number): Promise<void> => {
    const buffer = buffers[worker] ?? Buffer.allocUnsafe(FILE_READ_BYTES);
    contents.set(file, await fileContentDigest(onDisk(root, file.path), file.size, buffer));
  };
  return {
    readLevel: (found) => {
      const files = found.filter((entry): entry is FileEntry => entry.kind === 'file');
      reads = reads.then(() => mapConcurrently(files, READERS, readFile));
      // Seen as handled at once: a read may fail while the walk is still listing, and is
      // reported when finished() is awaited, not as an unhandled rejection that ends the process.
      reads.catch(() => undefined);
    },
    finished: async () => {
      await reads;
      return contents;
    },
  };
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
  const reader = contentReader(rootBytes);
  let entries: TreeEntry[];
  try {
    entries = await listTree(rootBytes, LISTERS, reader.readLevel);
    entries.sort((a, b) => Buffer.compare(a.path, b.path));
    assertLinksContained(canonical, entries);
  } catch (error) {
    // The refusal is the answer: the reads already started finish first, whatever they say.
    await reader.finished().catch(() => undefined);
    throw error;
  }
  const contents = await reader.finished();
  const hash = createHash('sha256').update(TREE_DIGEST_HEADER);
  for (const entry of entries) writeRecord(hash, entry, contents.get(entry));
  const count = (kind: TreeEntry['kind']) => entries.filter((entry) => entry.kind === kind).length;
  let bytes = 0;
  for (const entry of entries) if (entry.kind === 'file') bytes += entry.size;
  return {
    digest: `sha256:${hash.digest('hex')}`,
    files: count('file'),
    bytes,
    links: count('symlink'),
    dirs: count('dir'),
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
