import { readdir, readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Process-group bookkeeping for the local executor. Every command runs as the leader of its
 * own group, so "the hook and everything it started" is one number: signalling `-pgid`
 * reaches backgrounded children too, and `kill(-pgid, 0)` tells whether any are left.
 */

export const DEFAULT_KILL_GRACE_MS = 5000;
/** After SIGKILL the kernel still needs a moment to tear the processes down. */
const AFTER_KILL_WAIT_MS = 2000;

/** Send a signal to the whole group; a group that is already gone is not an error. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/**
 * Whether any live process remains in the group. `kill(-pgid, 0)` also succeeds for
 * zombies, and when PID 1 does not reap orphans (containers, microVMs) a killed hook's
 * children linger as zombies forever, so a positive answer is confirmed against /proc.
 */
export async function groupAlive(pgid: number): Promise<boolean> {
  try {
    process.kill(-pgid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  return hasLiveMember(pgid);
}

async function hasLiveMember(pgid: number): Promise<boolean> {
  let entries: string[];
  try {
    entries = await readdir('/proc');
  } catch {
    return true; // no procfs: trust kill(2)
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = await readFile(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // exited while we looked
    }
    // Fields after the parenthesised command name: state ppid pgrp ...
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) === pgid && fields[0] !== 'Z' && fields[0] !== 'X') return true;
  }
  return false;
}

/** Poll until the group is gone or the deadline passes; true when it is gone. */
export async function waitGroupGone(pgid: number, withinMs: number): Promise<boolean> {
  const deadline = performance.now() + withinMs;
  let interval = 2;
  for (;;) {
    if (!(await groupAlive(pgid))) return true;
    const left = deadline - performance.now();
    if (left <= 0) return false;
    await sleep(Math.min(interval, left));
    interval = Math.min(interval * 2, 50);
  }
}

/**
 * SIGTERM the group, give it `graceMs` to leave, then SIGKILL whatever is left and wait for
 * it to be gone. Resolves only once nothing of the group is alive (or the kernel failed to
 * reap it within a bounded wait, which leaves nothing we could do anyway).
 */
export async function terminateGroup(pgid: number, graceMs: number): Promise<void> {
  signalGroup(pgid, 'SIGTERM');
  if (await waitGroupGone(pgid, graceMs)) return;
  signalGroup(pgid, 'SIGKILL');
  await waitGroupGone(pgid, AFTER_KILL_WAIT_MS);
}
