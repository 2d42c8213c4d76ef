// Scenario: kube-apiserver, then etcd, killed with SIGKILL and started again mid-load. An
// apiserver that comes back fills its watch cache from etcd's current revision, so every
// watch the controller resumes from an older resourceVersion is refused 410 Gone: the
// controller must relist and carry on without losing or doubling anything.
import { readFile } from 'node:fs/promises';
import type { ChaosEnv } from './env.js';
import { REPLICA_USERS } from './env.js';
import { auditedWrites, takeLedger, type RunLedger } from './ledger.js';
import { createChaosWorkflow, createRuns, sleep, waitFinished } from './workload.js';

export interface RestartFigures extends RunLedger {
  /** Per restart: how long the component was away, and until the controller wrote again. */
  restarts: { component: string; downMs: number; firstWriteAfterMs: number }[];
  /** Informer relists after a 410 Gone, from the controller's log. */
  relists: number;
  /** The controller process survived every restart. */
  controllerAlive: boolean;
}

const RELIST_LINE = 'resourceVersion expired (410 Gone); relisting';

export async function controlPlaneRestarts(
  env: ChaosEnv,
  options: { runs: number; timeoutMs: number },
): Promise<RestartFigures> {
  const node = await env.startNode('chaos-node-1');
  await createChaosWorkflow(env.admin, 'chaos-restarts', env.podNode, { hookSeconds: 3 });
  const replica = await env.startReplica('a', { leaderElect: true });
  const half = Math.ceil(options.runs / 2);
  const names = await createRuns(env.admin, 'chaos-restarts', 'rst', half);
  const restarts: RestartFigures['restarts'] = [];
  for (const component of ['kube-apiserver', 'etcd'] as const) {
    await sleep(3_000);
    const down = Date.now();
    await env.cp.restart(component, { kill: true });
    const up = Date.now();
    // More runs while the caches catch up: the controller must see them through fresh lists.
    if (component === 'kube-apiserver') {
      names.push(...(await createRuns(env.admin, 'chaos-restarts', 'rst2', options.runs - half)));
    }
    const firstWrite = await firstWriteAfter(env.auditLog, up, 60_000);
    restarts.push({ component, downMs: up - down, firstWriteAfterMs: firstWrite - up });
  }
  await waitFinished(env.admin, names, options.timeoutMs);
  const controllerAlive = !replica.hasExited();
  await replica.stop();
  await node.stop();
  const log = await readFile(replica.logPath, 'utf8').catch(() => '');
  return {
    ...(await takeLedger(env.admin, env.auditLog, names)),
    restarts,
    relists: log.split('\n').filter((line) => line.includes(RELIST_LINE)).length,
    controllerAlive,
  };
}

/** When the controller's first write after `since` reached the apiserver (ms since epoch). */
async function firstWriteAfter(auditLog: string, since: number, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const writes = await auditedWrites(auditLog);
    const first = writes.find(
      (write) => write.user === REPLICA_USERS.a && write.resource !== 'leases' && write.at >= since,
    );
    if (first) return first.at;
    if (Date.now() > deadline) return Number.NaN;
    await sleep(200);
  }
}
