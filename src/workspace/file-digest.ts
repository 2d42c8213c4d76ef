import { createHash } from 'node:crypto';
import { close, constants, open, read } from 'node:fs';
import { promisify } from 'node:util';

/** The read size: large enough that a big file costs few reads, small enough to keep per worker. */
export const FILE_READ_BYTES = 1 << 20;

// No following a symlink swapped in after the lstat, and no blocking on a fifo swapped in (it
// reads as empty, so its size no longer matches). A socket cannot be opened at all.
const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

// The callback API, not FileHandle: a tree of 20 000 small files is mostly per-file overhead,
// and a FileHandle costs an object and its close tracking per file (bench:warm, ~30 % slower).
const openFile = promisify(open);
const closeFile = promisify(close);
const readInto = (fd: number, buffer: Buffer): Promise<number> =>
  new Promise((resolve, reject) => {
    read(fd, buffer, 0, buffer.length, null, (error, bytesRead) => {
      if (error) reject(error);
      else resolve(bytesRead);
    });
  });

function changed(path: Buffer, why: string): Error {
  return new Error(`${path.toString()} changed while the workspace digest was taken: ${why}`);
}

/**
 * The sha256 of a regular file's contents, read through `buffer` a chunk at a time (never the
 * whole file at once). `size` is what the walk's lstat said; a file that reads to another
 * length is an error, since its record would describe neither. A read shorter than asked for,
 * once `size` bytes are in, is the end of a regular file: a small file costs one read, not two.
 */
export async function fileContentDigest(
  path: Buffer,
  size: number,
  buffer: Buffer,
): Promise<Buffer> {
  const fd = await openFile(path, READ_FLAGS);
  try {
    const hash = createHash('sha256');
    let total = 0;
    for (;;) {
      const bytesRead = await readInto(fd, buffer);
      if (bytesRead === 0) break;
      hash.update(buffer.subarray(0, bytesRead));
      total += bytesRead;
      if (bytesRead < buffer.length && total >= size) break;
    }
    if (total !== size) throw changed(path, `${size} bytes when listed, ${total} when read`);
    return hash.digest();
  } finally {
    await closeFile(fd);
  }
}
