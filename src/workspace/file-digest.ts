import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';

/** The read size: large enough that a big file costs few reads, small enough to keep per worker. */
export const FILE_READ_BYTES = 1 << 20;

// No following a symlink swapped in after the lstat, and no blocking on a fifo swapped in.
const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

function changed(path: Buffer, why: string): Error {
  return new Error(`${path.toString()} changed while the workspace digest was taken: ${why}`);
}

/**
 * The sha256 of a regular file's contents, read through `buffer` a chunk at a time (never the
 * whole file at once). `size` is what the walk's lstat said: a file that is no longer that
 * regular file, or not that long, is an error, since its record would describe neither.
 */
export async function fileContentDigest(
  path: Buffer,
  size: number,
  buffer: Buffer,
): Promise<Buffer> {
  const handle = await open(path, READ_FLAGS);
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw changed(path, 'no longer a regular file');
    const hash = createHash('sha256');
    let total = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      hash.update(buffer.subarray(0, bytesRead));
      total += bytesRead;
    }
    if (total !== size) throw changed(path, `${size} bytes when listed, ${total} when read`);
    return hash.digest();
  } finally {
    await handle.close();
  }
}
