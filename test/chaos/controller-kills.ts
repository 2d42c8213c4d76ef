// Scenario: the controller is killed with SIGKILL again and again while runs are under way,
// at random moments and, through failpoints, at the two worst ones: between an IssueRun's
// inputs ConfigMap and its Pod, and between a Pod's end and the status that says Finished.
// One replica without leader election, restarted at once after each kill (leader takeover
// is the leader scenario's figure, not this one's).
import type { ChaosEnv } from './env.js';
import type { Replica } from './children.js';
import { takeLedger, type RunLedger } from './ledger.js';
import {
  between,
  createChaosWorkflow,
  createRuns,
  finishedCount,
  sleep,
  waitFinished,
} from './workload.js';

export interface ControllerKillFigures extends RunLedger {
  kills: number;
  /** Kills the controller made of itself at a failpoint (part of `kills`). */
  failpointKills: Record<string, number>;
  /** From the last kill to the last run's Finished. */
  finishedAfterLastKillMs: number;
}

/**
 * Incarnations take turns: two of every three die at the first pass of their failpoint (if
 * the suite does not kill them first); the third only by the suite's hand.
 */
const ARMING = ['before-pod-create=1', 'before-finished-status=1', undefined] as const;
/** The runs come in waves over the kills, so that Pods are made and runs end all along. */
const WAVES = 3;

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
  const names: string[] = [];
  const perWave = Math.ceil(options.runs / WAVES);
  const wave = async () => {
    const count = Math.min(perWave, options.runs - names.length);
    if (count > 0) {
      const wave = `kill${Math.ceil(names.length / perWave) + 1}`;
      names.push(...(await createRuns(env.admin, 'chaos-kills', wave, count)));
    }
  };
  await wave();

  const failpointKills: Record<string, number> = {};
  let kills = 0;
  let lastKill = Date.now();
  // Spread the kills over the time the runs take: a few seconds each, on a busy node. Go on
  // past the count asked for (up to 4×) until each failpoint has killed at least once.
  const spreadMs = options.runs * 250;
  const bothFired = () => ARMING.every((arm) => !arm || failpointKills[arm.split('=')[0] ?? '']);
  const waveEvery = Math.max(1, Math.floor(options.kills / WAVES));
  // On a slow machine every run may have ended before an armed incarnation met its moment:
  // then a few more runs come (at most as many again), so that there are Pods to make and
  // runs to end while the suite goes on.
  let extraRuns = 0;
  const goOn = async () => {
    if (kills < options.kills) return true;
    if (bothFired() || kills >= options.kills * 4) return false;
    if ((await finishedCount(env.admin, names)) < names.length) return true;
    if (extraRuns >= options.runs) return false;
    const count = Math.min(perWave, options.runs - extraRuns);
    extraRuns += count;
    names.push(...(await createRuns(env.admin, 'chaos-kills', `extra${extraRuns}`, count)));
    return true;
  };
  /** Resolves when every run so far has Finished (checked every second). */
  const allFinished = async (untilMs: number) => {
    while (Date.now() < untilMs) {
      if ((await finishedCount(env.admin, names)) === names.length) return;
      await sleep(1000);
    }
  };
  for (let index = 1; await goOn(); index++) {
    if (index % waveEvery === 0) await wave();
    // A life of 0.5–1.5 × the mean, the mean at least 1.5 s: some die while starting up,
    // most after they have done some work. An armed one is left to meet its moment (up to
    // 30 s, or until no run is left that could bring it), however slow the machine.
    const wait = between(0.5, 1.5) * Math.max(1_500, spreadMs / options.kills);
    const diedAlone = await Promise.race([
      current.replica.exited.then(() => true),
      (current.failpoints ? allFinished(Date.now() + 30_000) : sleep(wait)).then(() => false),
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
  while (names.length < options.runs) await wave();
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
