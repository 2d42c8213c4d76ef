import { DEFAULT_KILL_GRACE_MS } from '../local-group.js';
import type { SshConnection } from './connection.js';
import { callScript } from './remote-call.js';
import { TERMINATE_SCRIPT } from './scripts.js';

/**
 * The process groups this executor started on the worker. Closing a channel does not end
 * what runs in it (the remote shell leads a session of its own), so every group is ended
 * by signalling it from another channel: at a timeout, at a kill, and at shutdown for the
 * daemons hooks left behind. A group whose connection dropped is an orphan: it is ended as
 * soon as the connection is back, before anything else runs.
 */
export interface RemoteGroups {
  /** A group started (alive until shutdown ends it, as locally). */
  add(group: number): void;
  /** A group whose command's connection dropped: end it on the next connection. */
  orphan(group: number, graceMs?: number): void;
  terminate(group: number, graceMs?: number): Promise<void>;
  /** End the orphans (called on every new connection). */
  endOrphans(exec: SshConnection['exec']): Promise<void>;
  /** End every group still tracked. */
  endAll(graceMs?: number): Promise<void>;
}

const POLL_MS = 50;

async function terminateWith(
  exec: SshConnection['exec'],
  name: string,
  group: number,
  graceMs: number,
): Promise<void> {
  const polls = String(Math.max(1, Math.ceil(graceMs / POLL_MS)));
  await callScript({ name, exec }, TERMINATE_SCRIPT, [String(group), polls]);
}

export function createRemoteGroups(connection: Pick<SshConnection, 'name' | 'exec'>): RemoteGroups {
  const live = new Set<number>();
  const orphans = new Map<number, number>(); // group → its kill grace
  return {
    add: (group) => live.add(group),
    orphan: (group, graceMs = DEFAULT_KILL_GRACE_MS) => {
      live.delete(group);
      orphans.set(group, graceMs);
    },
    terminate: (group, graceMs = DEFAULT_KILL_GRACE_MS) =>
      terminateWith((command) => connection.exec(command), connection.name, group, graceMs),
    endOrphans: async (exec) => {
      const ending = [...orphans];
      orphans.clear();
      await Promise.all(
        ending.map(([group, graceMs]) => terminateWith(exec, connection.name, group, graceMs)),
      );
    },
    endAll: async (graceMs = DEFAULT_KILL_GRACE_MS) => {
      const ending = [...live, ...orphans.keys()];
      live.clear();
      orphans.clear();
      await Promise.all(
        ending.map((group) =>
          terminateWith(
            (command) => connection.exec(command),
            connection.name,
            group,
            graceMs,
          ).catch(() => undefined),
        ),
      );
    },
  };
}
