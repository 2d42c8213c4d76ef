import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Executor } from '../../executor/types.js';
import { LorenzError, errorMessage } from '../../workflow/errors.js';
import { isCredentialHostName } from './credential-files.js';

/**
 * Git credentials for a workspace on an SSH worker. The credential helper runs where git
 * runs, on the worker, so it needs the per-host files there: they are copied, for the run
 * only, into a private directory (0700, files 0600) the worker makes with mktemp — in
 * /dev/shm when it has one, so the tokens live in memory rather than on a disk — never
 * inside a workspace, and removed when the run ends. The helper and the clones point at it
 * exactly as they point at the run Pod's Secret mount.
 */
export interface WorkerCredentials {
  directory: string;
  dispose: () => Promise<void>;
}

// mktemp under umask 077: the directory exists 0700 before anything is written into it.
const MAKE_PRIVATE_DIRECTORY = [
  'umask 077',
  'if [ -d /dev/shm ] && [ -w /dev/shm ]; then place=/dev/shm; else place=${TMPDIR:-/tmp}; fi',
  'directory=$(mktemp -d "$place/lorenz-git-credentials.XXXXXXXX")',
  'chmod 700 "$directory"',
  'printf "%s" "$directory"',
].join(' && ');

function stagingFailed(what: string): LorenzError {
  return new LorenzError(
    'workspace_clone_failed',
    `workspace_clone_failed: git credentials could not be placed on the worker: ${what}`,
  );
}

/** Copies the credential files of `localDirectory` to a private directory on the worker. */
export async function stageCredentialsOnWorker(
  executor: Executor,
  localDirectory: string,
  timeoutMs: number,
): Promise<WorkerCredentials> {
  // Only host files, as the helper reads them (a Secret mount also holds `..data`).
  const hosts = (await readdir(localDirectory)).filter(isCredentialHostName);
  const made = await executor.runCommand(MAKE_PRIVATE_DIRECTORY, { cwd: '/', timeoutMs });
  const directory = made.output.trim();
  if (made.exitCode !== 0 || !directory.startsWith('/')) {
    throw stagingFailed(made.output.trim() || `mktemp exited ${String(made.exitCode)}`);
  }
  const dispose = () => executor.removeTree(directory);
  try {
    for (const host of hosts) {
      const content = await readFile(join(localDirectory, host), 'utf8');
      await executor.writeFile(join(directory, host), content, { mode: 0o600 });
    }
  } catch (error) {
    await dispose().catch(() => {});
    throw stagingFailed(errorMessage(error));
  }
  return { directory, dispose };
}
