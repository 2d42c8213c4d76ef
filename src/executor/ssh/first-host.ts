import { userInfo } from 'node:os';
import { LorenzError, errorMessage } from '../../workflow/errors.js';
import { parseSshHost } from '../../workflow/ssh-host.js';
import { createSshExecutor, type SshExecutor } from './index.js';

export interface WorkerCredentials {
  /** The private key's bytes: read by Lorenz, never handed to a hook or an agent. */
  privateKey: Buffer;
  knownHosts: string;
}

function loginName(): string {
  try {
    return userInfo().username;
  } catch {
    return process.env.USER ?? 'root';
  }
}

/**
 * The first of `worker.ssh_hosts` that connects (in order), as a connected executor. Each
 * host that does not is named with its reason in the ssh_connect failure when none does.
 */
export async function connectFirstHost(
  hosts: readonly string[],
  credentials: WorkerCredentials,
  options: { timeoutMs: number; baseEnv?: NodeJS.ProcessEnv },
): Promise<SshExecutor> {
  const reasons: string[] = [];
  for (const entry of hosts) {
    const parsed = parseSshHost(entry);
    if ('error' in parsed) {
      reasons.push(`${entry}: ${parsed.error}`);
      continue;
    }
    const host = { ...parsed, user: parsed.user ?? loginName() };
    const executor = createSshExecutor({
      target: { host, ...credentials },
      timeoutMs: options.timeoutMs,
      ...(options.baseEnv ? { baseEnv: options.baseEnv } : {}),
    });
    try {
      await executor.connect();
      return executor;
    } catch (error) {
      await executor.shutdown(0).catch(() => undefined);
      reasons.push(errorMessage(error).replace(/^ssh_connect: /, ''));
    }
  }
  throw new LorenzError(
    'ssh_connect',
    `ssh_connect: no SSH worker could be reached: ${reasons.join('; ')}`,
    { hosts: [...hosts] },
  );
}
