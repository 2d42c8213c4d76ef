// Scenario: two replicas with leader election, as the chart runs them; the leader is killed
// with SIGKILL (no release of the Lease) again and again while runs are under way. Takeover
// is the time from the kill to the new holder's acquireTime; "two acting leaders" is read
// from the apiserver's audit log: any write a replica's user made while none of that user's
// incarnations held the Lease.
import type { KubeClient } from '../../src/controller/runtime/client.js';
import type { Replica } from './children.js';
import { NAMESPACE, REPLICA_USERS, type ChaosEnv, type ReplicaName } from './env.js';
import {
  auditedWrites,
  takeLedger,
  writesOutsideTerms,
  type RunLedger,
  type Term,
} from './ledger.js';
import { between, createChaosWorkflow, createRuns, sleep, waitFinished } from './workload.js';

const LEASE_PATH = `/apis/coordination.k8s.io/v1/namespaces/${NAMESPACE}/leases/lorenz-controller`;

export interface LeaderKillFigures extends RunLedger {
  kills: number;
  takeoverMs: number[];
  /** Writes (other than the Lease's) by a replica that did not hold the Lease then. */
  writesByNonLeader: number;
  /** Writes by the replicas in all, for scale. */
  writes: number;
}

interface Lease {
  spec?: { holderIdentity?: string; acquireTime?: string };
}

async function holder(admin: KubeClient): Promise<{ identity: string; since: number } | undefined> {
  const lease = await admin.request<Lease>({ path: LEASE_PATH }).catch(() => undefined);
  const identity = lease?.spec?.holderIdentity;
  if (!identity) return undefined;
  return { identity, since: Date.parse(lease.spec?.acquireTime ?? '') };
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, ms: number) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

export async function leaderKills(
  env: ChaosEnv,
  options: { runs: number; kills: number; timeoutMs: number },
): Promise<LeaderKillFigures> {
  const node = await env.startNode('chaos-node-1');
  await createChaosWorkflow(env.admin, 'chaos-leader', env.podNode, { hookSeconds: 2 });
  const replicas = new Map<string, { name: ReplicaName; replica: Replica }>();
  const start = async (name: ReplicaName) => {
    const replica = await env.startReplica(name, { leaderElect: true });
    replicas.set(replica.identity, { name, replica });
  };
  await Promise.all([start('a'), start('b')]);
  let current = await until('a first leader', () => holder(env.admin), 60_000);
  const terms: Term[] = [];
  const names: string[] = [];
  const takeoverMs: number[] = [];
  const perRound = Math.max(1, Math.ceil(options.runs / options.kills));

  for (let round = 1; round <= options.kills; round++) {
    names.push(...(await createRuns(env.admin, 'chaos-leader', `lead${round}`, perRound)));
    await sleep(between(2_000, 5_000));
    const leader = replicas.get(current.identity);
    if (!leader) throw new Error(`the Lease names ${current.identity}, not a replica of the suite`);
    await leader.replica.kill();
    const killedAt = Date.now();
    terms.push({
      identity: current.identity,
      user: REPLICA_USERS[leader.name],
      from: current.since,
      to: killedAt,
    });
    replicas.delete(current.identity);
    const previous = current.identity;
    current = await until(
      'the other replica to take the Lease',
      async () => {
        const now = await holder(env.admin);
        return now && now.identity !== previous ? now : undefined;
      },
      60_000,
    );
    takeoverMs.push(current.since - killedAt);
    await start(leader.name);
  }
  await waitFinished(env.admin, names, options.timeoutMs);
  const endedAt = Date.now();
  const last = replicas.get(current.identity);
  terms.push({
    identity: current.identity,
    user: last ? REPLICA_USERS[last.name] : '',
    from: current.since,
    to: endedAt,
  });
  await Promise.all([...replicas.values()].map(({ replica }) => replica.stop()));
  await node.stop();

  const writes = (await auditedWrites(env.auditLog)).filter(
    (write) => write.resource !== 'leases' && write.at <= endedAt,
  );
  const ledger = await takeLedger(env.admin, env.auditLog, names);
  return {
    ...ledger,
    kills: options.kills,
    takeoverMs,
    writesByNonLeader: writesOutsideTerms(writes, terms).length,
    writes: writes.length,
  };
}
