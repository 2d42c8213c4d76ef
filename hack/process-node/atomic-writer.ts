import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readdir, readlink, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { dirname, join, normalize, isAbsolute } from 'node:path';
import { PodConfigError } from './types.js';

export interface ProjectedFile {
  data: Buffer;
  mode: number;
}

/** Relative path → content; what a configMap/secret/downwardAPI/projected volume holds. */
export type FileSet = Map<string, ProjectedFile>;

const DATA_LINK = '..data';

function checkPath(path: string): void {
  const norm = normalize(path);
  if (isAbsolute(path) || norm.startsWith('..') || norm.split('/').includes('..')) {
    throw new PodConfigError(
      'CreateContainerConfigError',
      `volume item path ${JSON.stringify(path)} must be relative and must not contain '..'`,
      false,
    );
  }
}

/**
 * Writes a file set the way the kubelet's AtomicWriter does: the payload goes into a fresh
 * timestamped directory, `..data` is swapped to it with one rename, and the visible entries
 * are symlinks through `..data`. A process reading the volume sees the old or the new
 * payload, never a mix, and a bind mount of `dir` keeps seeing updates.
 */
export async function writeAtomic(dir: string, files: FileSet): Promise<void> {
  for (const path of files.keys()) checkPath(path);
  await mkdir(dir, { recursive: true, mode: 0o755 });
  await chmod(dir, 0o755);
  const stamp = `..${new Date().toISOString().replace(/[:.]/g, '_')}.${randomBytes(4).toString('hex')}`;
  const payload = join(dir, stamp);
  await mkdir(payload, { mode: 0o755 });
  for (const [path, file] of files) {
    const target = join(payload, path);
    await mkdir(dirname(target), { recursive: true, mode: 0o755 });
    await writeFile(target, file.data, { mode: file.mode });
    await chmod(target, file.mode);
  }
  let previous: string | undefined;
  try {
    previous = await readlink(join(dir, DATA_LINK));
  } catch {
    previous = undefined;
  }
  const tmpLink = join(dir, `${DATA_LINK}_tmp`);
  await rm(tmpLink, { force: true });
  await symlink(stamp, tmpLink);
  await rename(tmpLink, join(dir, DATA_LINK));

  const topLevel = new Set([...files.keys()].map((p) => normalize(p).split('/')[0] ?? p));
  const entries = await readdir(dir);
  for (const name of entries) {
    if (name.startsWith('..') || topLevel.has(name)) continue;
    await rm(join(dir, name), { force: true, recursive: true });
  }
  for (const name of topLevel) {
    try {
      await symlink(join(DATA_LINK, name), join(dir, name));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  if (previous && previous !== stamp)
    await rm(join(dir, previous), { recursive: true, force: true });
}
