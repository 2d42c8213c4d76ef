// Scenario: the controller is killed with SIGKILL again and again while runs are under way,
// at random moments and, through failpoints, at the two worst ones: between an IssueRun's
// inputs ConfigMap and its Pod, and between a Pod's end and the status that says Finished.
// One replica without leader election, restarted at once after each kill (leader takeover
// is the leader scenario's figure, not this one's).
import type { ChaosEnv } from './env.js';
import type { Replica } from './children.js';
import { takeLedger, type RunLedger } from './ledger.js';
import { between, createChaosWorkflow, createRuns, sleep, waitFinished } from './workload.js';

export interface ControllerKillFigures extends RunLedger {
  kills: number;
  /** Kills the controller made of itself at a failpoint (part of `kills`). */
  failpointKills: Record<string, number>;
  /** From the last kill to the last run's Finished. */
  finishedAfterLastKillMs: number;
}

/** Incarnations take turns: a failpoint armed in two of every three. */
const ARMING = ['before-pod-create=0.2', 'before-finished-status=0.25', undefined] as const;

export async function controllerKills(
  env: ChaosEnv,
  options: { runs: number; kills: number; timeoutMs: number },
): Promise<ControllerKillFigures> {
  const node = await env.startNode('chaos-node-1');
  await createChaosWorkflow(env.admin, 'chaos-kills', env.podNode);
  const start = (index: number) => {
    const failpoints = ARMING[index % ARMING.length];
    return env
      .startReplica('a', { leaderElect: false, ...(failpoints ? { failpoints } : {}) })
      .then((replica) => ({ replica, failpoints }));
  };
  let current: { replica: Replica; failpoints: string | undefined } = await start(0);
  const names = await createRuns(env.admin, 'chaos-kills', 'kill', options.runs);

  const failpointKills: Record<string, number> = {};
  let kills = 0;
  let lastKill = Date.now();
  // Spread the kills over the time the runs take: a few seconds each, on a busy node.
  const spreadMs = Math.max(8_000, options.runs * 150);
  for (let index = 1; kills < options.kills; index++) {
    const wait = between(0.3, 2) * (spreadMs / options.kills / 1.15);
    const diedAlone = await Promise.race([
      current.replica.exited.then(() => true),
      sleep(wait).then(() => false),
    ]);
    if (diedAlone && current.replica.killedItself()) {
      const point = (current.failpoints ?? 'unarmed').split('=')[0] ?? 'unarmed';
      failpointKills[point] = (failpointKills[point] ?? 0) + 1;
    } else {
      await current.replica.kill();
    }
    kills += 1;
    lastKill = Date.now();
    current = await start(index);
  }
  // The last incarnation runs clean: what must end now ends under a controller left alone.
  if (current.failpoints) {
    await current.replica.kill();
    kills += 1;
    lastKill = Date.now();
    current = await start(ARMING.length - 1);
  }
  await waitFinished(env.admin, names, options.timeoutMs);
  await current.replica.stop();
  await node.stop();
  const ledger = await takeLedger(env.admin, env.auditLog, names);
  return {
    ...ledger,
    kills,
    failpointKills,
    finishedAfterLastKillMs: Math.max(0, ledger.lastFinishedAt - lastKill),
  };
}
