import { lstat, readdir, readlink } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { LorenzError } from '../workflow/errors.js';
import { mapConcurrently } from './concurrently.js';

/**
 * One entry below a workspace root, as the tree digest sees it (docs/snapshots.md). Paths are
 * the bytes the filesystem holds, relative to the root and joined with `/`: a name that is not
 * UTF-8 keeps its own bytes rather than being decoded into a replacement character that two
 * different names could share.
 */
export type TreeEntry =
  | { kind: 'dir'; path: Buffer; mode: number }
  | FileEntry
  | { kind: 'symlink'; path: Buffer; target: Buffer };

export interface FileEntry {
  kind: 'file';
  path: Buffer;
  mode: number;
  size: number;
}

const SLASH = Buffer.from('/');

/** `root/rel`, as bytes: fs calls take Buffer paths, and rel may not be UTF-8. */
export function onDisk(root: Buffer, rel: Buffer): Buffer {
  return rel.length === 0 ? root : Buffer.concat([root, SLASH, rel]);
}

const childPath = (parent: Buffer, name: Buffer): Buffer =>
  parent.length === 0 ? name : Buffer.concat([parent, SLASH, name]);

/** What a special file is, for the message that refuses it. */
function specialKind(stats: Stats): string {
  if (stats.isFIFO()) return 'a fifo';
  if (stats.isSocket()) return 'a socket';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  return 'of an unknown type';
}

async function entryAt(root: Buffer, path: Buffer): Promise<TreeEntry> {
  const absolute = onDisk(root, path);
  const stats = await lstat(absolute);
  // Permission bits with setuid, setgid and sticky: they change what running or writing in
  // the tree does, so a restore that drops them is a different tree.
  const mode = stats.mode & 0o7777;
  if (stats.isDirectory()) return { kind: 'dir', path, mode };
  if (stats.isFile()) return { kind: 'file', path, mode, size: stats.size };
  if (stats.isSymbolicLink()) {
    return { kind: 'symlink', path, target: await readlink(absolute, { encoding: 'buffer' }) };
  }
  // Nothing is left out silently: a tree the digest cannot describe is refused.
  const shown = absolute.toString();
  throw new LorenzError(
    'workspace_tree_unsupported_file',
    `workspace_tree_unsupported_file: ${shown} is ${specialKind(stats)}; a workspace tree holds only files, directories and symlinks`,
    { path: shown },
  );
}

/**
 * Every entry below `root` (not the root itself), in no particular order: directories level by
 * level, each level's listings and lstats at most `workers` at a time, each level handed to
 * `onLevel` as soon as it is listed (so its files can be read while the next level is listed).
 * Symlinks are never followed, so a link to a directory is one entry, not the tree it leads to.
 */
export async function listTree(
  root: Buffer,
  workers: number,
  onLevel: (found: readonly TreeEntry[]) => void = () => undefined,
): Promise<TreeEntry[]> {
  const entries: TreeEntry[] = [];
  let level: Buffer[] = [Buffer.alloc(0)];
  while (level.length > 0) {
    const listings = await mapConcurrently(level, workers, async (dir) => {
      const names = await readdir(onDisk(root, dir), { encoding: 'buffer' });
      return names.map((name) => childPath(dir, name));
    });
    const found = await mapConcurrently(listings.flat(), workers, (path) => entryAt(root, path));
    entries.push(...found);
    onLevel(found);
    level = found.filter((entry) => entry.kind === 'dir').map((entry) => entry.path);
  }
  return entries;
}
