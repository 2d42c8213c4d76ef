import { createReadStream } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { pack as tarPack, type Pack } from 'tar-stream';
import { LorenzError } from '../../workflow/errors.js';
import type { SshConnection } from './connection.js';
import { callScript, refusalIn } from './remote-call.js';
import { RECEIVE_TREE_SCRIPT, REFUSED_STATUS } from './scripts.js';

/**
 * `copyTree` to the worker: a local directory (a skill) goes over one channel as a tar
 * stream into the receiving guard (scripts.ts), which refuses a symlinked parent or target
 * before `tar -x` runs. The archive is made here, entry by entry, from regular files and
 * directories only; the source was checked for symlinks by the caller, and one found now
 * (planted since) fails the copy rather than being followed.
 */

/** worker.ssh_timeout_ms bounds a transfer; anything but a positive integer is refused first. */
export function checkSshTimeout(timeoutMs: unknown): number {
  if (typeof timeoutMs !== 'number' || !Number.isInteger(timeoutMs) || timeoutMs <= 0) {
    throw new LorenzError(
      'invalid_ssh_timeout',
      `invalid_ssh_timeout: worker.ssh_timeout_ms must be a positive integer, got ${String(timeoutMs)}`,
      { value: String(timeoutMs) },
    );
  }
  return timeoutMs;
}

async function addTree(archive: Pack, root: string, directory: string): Promise<void> {
  const entries = await readdir(directory, { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    const path = join(directory, entry.name);
    const name = relative(root, path);
    const stats = await lstat(path);
    if (stats.isDirectory()) {
      await entryDone(archive, { name: `${name}/`, type: 'directory', mode: stats.mode & 0o7777 });
      await addTree(archive, root, path);
    } else if (stats.isFile()) {
      const sink = archive.entry({
        name,
        type: 'file',
        size: stats.size,
        mode: stats.mode & 0o7777,
        mtime: stats.mtime,
      });
      await pipeline(createReadStream(path), sink);
    } else {
      throw new LorenzError(
        'workspace_skill_source_symlink',
        `workspace_skill_source_symlink: ${path} is not a regular file or directory`,
        { path },
      );
    }
  }
}

function entryDone(archive: Pack, header: Parameters<Pack['entry']>[0]): Promise<void> {
  return new Promise((resolve, reject) => {
    archive.entry(header, (error) => (error ? reject(error) : resolve()));
  });
}

export async function copyTreeToWorker(
  connection: SshConnection,
  from: string,
  to: string,
  options: { within?: string; timeoutMs: unknown },
): Promise<void> {
  const timeoutMs = checkSshTimeout(options.timeoutMs);
  const archive = tarPack();
  // The receiving end may refuse and close early: the archive then fails to write, which is
  // not the news. What the guard said is, so errors here are kept and weighed afterwards.
  archive.on('error', () => {});
  let packError: Error | undefined;
  const packing = addTree(archive, from, from).then(
    () => archive.finalize(),
    (error: unknown) => {
      packError = error instanceof Error ? error : new Error(String(error));
      archive.destroy();
    },
  );
  const within = options.within ?? to.slice(0, to.lastIndexOf('/'));
  let result;
  try {
    result = await callScript(connection, RECEIVE_TREE_SCRIPT, [to, within], {
      input: archive,
      timeoutMs,
    });
  } catch (error) {
    // A source that failed to pack (a symlink planted since the check) ends the channel
    // abruptly: that failure is the reason, not the channel's.
    await packing;
    throw packError ?? error;
  } finally {
    if (!archive.destroyed) archive.destroy();
  }
  await packing;
  if (result.status === REFUSED_STATUS) {
    const refusal = refusalIn(result.stderr);
    if (refusal) throw refusal;
  }
  if (packError !== undefined) throw packError;
  if (result.status !== 0) {
    const detail = `${result.stdout.toString('utf8')}${result.stderr}`.trim();
    throw new Error(`copying ${from} to ${to} on ${connection.name} failed: ${detail}`);
  }
}
