import { access, readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Executor } from '../executor/types.js';
import type { WorkflowConfig } from '../workflow/config.js';
import { UsageError } from './usage.js';

/** Tried in this order when --ssh-key is not given, as OpenSSH does. */
const DEFAULT_KEYS = ['id_ed25519', 'id_ecdsa', 'id_rsa'];

async function defaultKey(): Promise<string> {
  const directory = join(homedir(), '.ssh');
  for (const name of DEFAULT_KEYS) {
    const path = join(directory, name);
    try {
      await access(path);
      return path;
    } catch {
      // try the next one
    }
  }
  throw new UsageError(
    `worker.ssh_hosts is set but no key was given: --ssh-key FILE (none of ~/.ssh/${DEFAULT_KEYS.join(', ~/.ssh/')} exists)`,
  );
}

async function readOption(path: string, what: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (error) {
    throw new UsageError(`cannot read ${what} ${path}: ${(error as Error).message}`);
  }
}

/**
 * The executor of `lorenz run`: this machine, or with `worker.ssh_hosts` the first host that
 * connects. The key and known_hosts files are read here, by Lorenz; neither path nor content
 * reaches a hook's or the agent's environment.
 */
export async function chooseExecutor(
  config: WorkflowConfig,
  flags: { sshKey?: string | undefined; knownHosts?: string | undefined },
  local: () => Executor,
  /** Told the key once read: its text is redacted from what the run reports. */
  onKey: (key: Buffer) => void = () => {},
): Promise<Executor> {
  if (config.worker.sshHosts.length === 0) return local();
  const keyFile = flags.sshKey ?? (await defaultKey());
  const knownHostsFile = flags.knownHosts ?? join(homedir(), '.ssh', 'known_hosts');
  const privateKey = await readOption(keyFile, 'the SSH key');
  onKey(privateKey);
  const knownHosts = (await readOption(knownHostsFile, 'known_hosts')).toString('utf8');
  // Loaded only for SSH workers: ssh2 is most of a start-up that local runs need not pay.
  const { connectFirstHost } = await import('../executor/ssh/first-host.js');
  return connectFirstHost(
    config.worker.sshHosts,
    { privateKey, knownHosts },
    { timeoutMs: config.worker.sshTimeoutMs },
  );
}
