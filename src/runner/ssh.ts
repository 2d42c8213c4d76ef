import { readFile } from 'node:fs/promises';
import { RUNNER_FLAGS } from '../api/run-pod.js';
import type { WorkerCredentials } from '../executor/ssh/first-host.js';
import type { Executor } from '../executor/types.js';
import type { WorkflowConfig } from '../workflow/config.js';
import { errorMessage } from '../workflow/errors.js';

/** What the controller gives a run Pod of a Workflow with worker.ssh_hosts (pod-builder.ts). */
export interface RunnerSsh {
  /** The mounted Secret's `ssh-privatekey`. */
  keyFile?: string | undefined;
  /** The mounted Secret's `known_hosts`. */
  knownHostsFile?: string | undefined;
  /** The worker.ssh_hosts entry the controller chose for this slot's attempt. */
  host?: string | undefined;
}

/** PEM armour lines: not secret, and every key has them. */
const ARMOUR = /^-----(BEGIN|END) /;
/** Shorter key lines are not redacted on their own (the last line of a PEM may be short). */
const MIN_KEY_LINE = 16;

/**
 * The text to redact for a private key: the whole file and each of its body lines, since a
 * hook that prints the file (or a part of it) prints it line by line.
 */
export function sshKeySecrets(key: Buffer): string[] {
  const text = key.toString('utf8');
  const lines = text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line.length >= MIN_KEY_LINE && !ARMOUR.test(line));
  return [text, text.trim(), ...lines];
}

/**
 * The key and known_hosts, read by the runner once: they stay in this process, handed to the
 * SSH client only; neither a path nor a byte reaches the worker, a hook or the agent.
 */
export async function readWorkerCredentials(ssh: RunnerSsh): Promise<WorkerCredentials> {
  const read = async (path: string | undefined, flag: string): Promise<Buffer> => {
    if (path === undefined) {
      throw new Error(`worker.ssh_hosts is set but the runner was given no --${flag}`);
    }
    try {
      return await readFile(path);
    } catch (error) {
      throw new Error(`cannot read --${flag} ${path}: ${errorMessage(error)}`, { cause: error });
    }
  };
  const privateKey = await read(ssh.keyFile, RUNNER_FLAGS.sshKey);
  const knownHosts = (await read(ssh.knownHostsFile, RUNNER_FLAGS.knownHosts)).toString('utf8');
  return { privateKey, knownHosts };
}

/**
 * The executor of a run Pod on an SSH worker: the host the controller chose, connected now.
 * An unreachable host, a refused key or an unknown host key fail here with ssh_connect, which
 * the controller's retry answers with another host.
 */
export async function connectWorker(
  config: WorkflowConfig,
  ssh: RunnerSsh,
  credentials: WorkerCredentials,
): Promise<Executor> {
  if (ssh.host === undefined) {
    throw new Error(
      `worker.ssh_hosts is set but the runner was given no --${RUNNER_FLAGS.sshHost}: the controller chooses the host of each slot`,
    );
  }
  // Loaded only for SSH workers: ssh2 is start-up a local run need not pay (and code the
  // startup snapshot must not run: it needs WebAssembly, absent while a snapshot is built).
  const { connectFirstHost } = await import('../executor/ssh/first-host.js');
  return connectFirstHost([ssh.host], credentials, { timeoutMs: config.worker.sshTimeoutMs });
}
