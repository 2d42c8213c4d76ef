import { readFile } from 'node:fs/promises';
import { createSshExecutor, type SshExecutor } from '../../src/executor/ssh/index.js';
import type { Sshd } from './fakes/sshd.js';

/** An SSH executor for the test sshd; `overrides` swap the key, the known_hosts, the port. */
export async function sshExecutor(
  sshd: Sshd,
  overrides: { keyFile?: string; knownHosts?: string; port?: number; timeoutMs?: number } = {},
): Promise<SshExecutor> {
  return createSshExecutor({
    target: {
      host: { user: sshd.user, host: sshd.host, port: overrides.port ?? sshd.port },
      privateKey: await readFile(overrides.keyFile ?? sshd.keyFile),
      knownHosts: overrides.knownHosts ?? sshd.knownHosts,
    },
    timeoutMs: overrides.timeoutMs ?? 10_000,
  });
}

/** A number no other test uses, to find a test's own processes on the shared worker user. */
export function marker(): string {
  return String(900_000 + Math.floor(Math.random() * 99_999));
}

/** Polls until `check` holds (processes take a moment to go after a kill). */
export async function eventually(check: () => Promise<boolean>, withinMs = 5000): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
