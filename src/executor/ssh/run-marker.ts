import { randomBytes } from 'node:crypto';
import type { SshConnection } from './connection.js';
import { callScript } from './remote-call.js';
import { END_MARKED_SCRIPT } from './scripts.js';

/**
 * What ends, at the run's end, the processes on the worker that left their process group
 * (`setsid daemon &`, a double fork into a new session): no group signal reaches them, and
 * sshd gives no session scope to end. Every command the run starts there carries the run's
 * marker in its environment (scripts.ts), inherited by all it starts; at shutdown every
 * process of the worker user whose environment still carries it is ended. One that starts
 * with a cleared environment, or is made non-dumpable, is not found (docs/ssh-workers.md).
 */

/** 128 random bits: no two runs (and no guess by a hook) share one. */
export function newRunMarker(): string {
  return randomBytes(16).toString('hex');
}

const POLL_MS = 50;

/** SIGTERM, `graceMs`, SIGKILL for every process carrying `marker`; how many there were. */
export async function endMarkedProcesses(
  connection: Pick<SshConnection, 'name' | 'exec'>,
  marker: string,
  graceMs: number,
): Promise<number> {
  const polls = String(Math.max(0, Math.ceil(graceMs / POLL_MS)));
  const { stdout } = await callScript(connection, END_MARKED_SCRIPT, [marker, polls]);
  return Number(stdout.toString('utf8').trim()) || 0;
}
