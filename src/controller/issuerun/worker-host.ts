import { Reasons, type IssueRun, type SlotStatus } from '../../api/index.js';

/**
 * Which SSH worker (an entry of `worker.ssh_hosts`) each slot's attempt runs on. Pure: the
 * reconciler counts the load from its cache and records the choice in status.slots[].host
 * before the Pod exists, so a restarted controller finds the host again instead of choosing
 * anew (a second choice could land the same attempt on two hosts).
 */

/** A slot's attempt to place. */
export interface SlotToPlace {
  slot: number;
  attempt: number;
  /** The host of the slot's previous attempt when that one failed ssh_connect. */
  avoid?: string | undefined;
}

export type HostChoice =
  /** Every slot has its host; `fresh` are the slots chosen just now (to be recorded first). */
  | { kind: 'placed'; hosts: ReadonlyMap<number, string>; fresh: readonly number[] }
  /** Not all slots fit now: none is placed (a partial ensemble would hold hosts idle). */
  | { kind: 'busy'; message: string }
  /** They never can: more slots at once than the hosts take together. */
  | { kind: 'never'; message: string };

export interface HostChoiceInput {
  hosts: readonly string[];
  /** worker.max_concurrent_agents_per_host; null: no limit. */
  perHostCap: number | null;
  /** Live slots per host, those being placed here left out (see liveHostLoad). */
  load: ReadonlyMap<string, number>;
  slots: readonly SlotToPlace[];
  /** The run's status slots: a host recorded for the same attempt is kept. */
  recorded: readonly SlotStatus[] | undefined;
}

/**
 * Least loaded first, ties by list order, never past the per-host cap. A retry after an
 * ssh_connect failure goes to another host when one has room: the same host most likely
 * fails the same way. A recorded host is kept as it is, even over the cap or after it left
 * the list: its Pod may already be running there.
 */
export function chooseHosts(input: HostChoiceInput): HostChoice {
  const { hosts, perHostCap: cap } = input;
  if (cap !== null && input.slots.length > hosts.length * cap) {
    return {
      kind: 'never',
      message: `${input.slots.length} slots run at once, and worker.ssh_hosts (${hosts.length}) × max_concurrent_agents_per_host (${cap}) take ${hosts.length * cap}`,
    };
  }
  const load = new Map(hosts.map((host) => [host, input.load.get(host) ?? 0]));
  const chosen = new Map<number, string>();
  const fresh: number[] = [];
  // Recorded hosts first: they hold their room whatever order the slots come in.
  for (const { slot, attempt } of input.slots) {
    const entry = input.recorded?.find((candidate) => candidate.slot === slot);
    if (entry?.host === undefined || entry.attempt !== attempt) continue;
    chosen.set(slot, entry.host);
    load.set(entry.host, (load.get(entry.host) ?? 0) + 1);
  }
  for (const { slot, avoid } of input.slots) {
    if (chosen.has(slot)) continue;
    const open = hosts.filter((host) => cap === null || (load.get(host) ?? 0) < cap);
    const others = open.filter((host) => host !== avoid);
    const candidates = others.length > 0 ? others : open;
    // The first of the least loaded: reduce keeps the earlier host on a tie.
    const host = candidates.reduce<string | undefined>(
      (best, each) =>
        best === undefined || (load.get(each) ?? 0) < (load.get(best) ?? 0) ? each : best,
      undefined,
    );
    if (host === undefined) {
      const busy = hosts.map((each) => `${each} ${load.get(each) ?? 0}/${cap}`).join(', ');
      return {
        kind: 'busy',
        message: `every SSH worker runs max_concurrent_agents_per_host agents (${busy}); waiting for one to finish`,
      };
    }
    chosen.set(slot, host);
    fresh.push(slot);
    load.set(host, (load.get(host) ?? 0) + 1);
  }
  return { kind: 'placed', hosts: chosen, fresh };
}

const WAITING_REASONS = new Set<string>([Reasons.RetryScheduled, Reasons.ContinuationScheduled]);

/** Whether a slot holds room on its host: it has one and is running or about to. */
const holdsHost = (slot: SlotStatus): slot is SlotStatus & { host: string } =>
  slot.host !== undefined &&
  (slot.phase === 'Pending' || slot.phase === 'Running') &&
  // Waiting out a backoff runs nothing on the host; the next attempt is placed anew.
  !WAITING_REASONS.has(slot.reason ?? '');

/**
 * Live slots per host of the runs of one Workflow: what status.slots[] say runs or is about
 * to run there. The slots being placed (`placing`, of the run `self`) are left out.
 */
export function liveHostLoad(
  runs: readonly IssueRun[],
  workflow: string,
  self: { uid: string; placing: readonly number[] },
): Map<string, number> {
  const load = new Map<string, number>();
  for (const run of runs) {
    if (run.spec.workflowRef.name !== workflow) continue;
    const own = run.metadata.uid === self.uid;
    for (const slot of run.status?.slots ?? []) {
      if (!holdsHost(slot) || (own && self.placing.includes(slot.slot))) continue;
      load.set(slot.host, (load.get(slot.host) ?? 0) + 1);
    }
  }
  return load;
}
