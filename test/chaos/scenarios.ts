// The chaos suite's scenarios at two scales: `short` (CI, through the integration tier) and
// `long` (`npm run chaos`, the README's figures). Each reports figures beside their goals
// and the promises it saw broken.
import type { ChaosEnv } from './env.js';
import { controllerKills } from './controller-kills.js';
import { brokenPromises, type RunLedger } from './ledger.js';
import { leaderKills } from './leader-kills.js';
import { nodeLoss } from './node-loss.js';
import { controlPlaneRestarts } from './restarts.js';

export type Scale = 'short' | 'long';

export interface Report {
  lines: string[];
  broken: string[];
  figures: object;
}

const ms = (value: number) => `${(value / 1000).toFixed(1)} s`;
const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
const median = (values: number[]) => sorted(values)[Math.floor(values.length / 2)] ?? Number.NaN;

const ledgerLines = (figures: RunLedger) => [
  `runs lost ${figures.lost} (goal 0); never Finished ${figures.unfinished} (goal 0); failed ${JSON.stringify(figures.failed)}`,
  `duplicate Pods for one attempt ${figures.duplicatePods} (goal 0); duplicate hook Events ${figures.duplicateHookEvents} (goal 0); missing hook Events ${figures.missingHookEvents} (goal 0)`,
];

/** CHAOS_RUNS / CHAOS_KILLS: another size for the kills scenario (exploring a finding). */
const sized = (name: string, fallback: number) => Number(process.env[name] ?? fallback) || fallback;

async function kills(env: ChaosEnv, scale: Scale): Promise<Report> {
  const short = scale === 'short';
  const figures = await controllerKills(env, {
    runs: sized('CHAOS_RUNS', short ? 20 : 200),
    kills: sized('CHAOS_KILLS', short ? 6 : 20),
    timeoutMs: short ? 180_000 : 600_000,
  });
  const failpoints = Object.entries(figures.failpointKills)
    .map(([point, n]) => `${point} ×${n}`)
    .join(', ');
  return {
    figures,
    broken: brokenPromises(figures),
    lines: [
      `runs ${figures.runs}, controller SIGKILLs ${figures.kills} (at failpoints: ${failpoints || 'none'})`,
      `runs lost ${figures.lost} (goal 0); never Finished ${figures.unfinished} (goal 0); failed ${JSON.stringify(figures.failed)}`,
      `duplicate Pods for one attempt ${figures.duplicatePods} (goal 0); runs on an extra attempt ${figures.extraAttempts} (goal 0)`,
      `duplicate hook Events ${figures.duplicateHookEvents} (goal 0); missing hook Events ${figures.missingHookEvents} (goal 0)`,
      figures.finishedAfterLastKillMs > 0
        ? `last run Finished ${ms(figures.finishedAfterLastKillMs)} after the last kill`
        : 'every run had Finished before the last kill',
    ],
  };
}

async function leader(env: ChaosEnv, scale: Scale): Promise<Report> {
  const figures = await leaderKills(
    env,
    scale === 'short'
      ? { runs: 12, kills: 3, timeoutMs: 180_000 }
      : { runs: 60, kills: 10, timeoutMs: 600_000 },
  );
  const broken = brokenPromises(figures);
  if (figures.writesByNonLeader > 0)
    broken.push(`${figures.writesByNonLeader} write(s) by a replica that did not lead`);
  return {
    figures,
    broken,
    lines: [
      `two replicas, the leader SIGKILLed ${figures.kills} times during ${figures.runs} runs`,
      `takeover p50 ${ms(median(figures.takeoverMs))}, max ${ms(Math.max(...figures.takeoverMs))} (goal ≤ 15 s; all: ${figures.takeoverMs.map(ms).join(', ')})`,
      `writes by a non-leader ${figures.writesByNonLeader} of ${figures.writes} (goal 0, from the audit log)`,
      ...ledgerLines(figures),
    ],
  };
}

async function restarts(env: ChaosEnv, scale: Scale): Promise<Report> {
  const figures = await controlPlaneRestarts(
    env,
    scale === 'short' ? { runs: 12, timeoutMs: 180_000 } : { runs: 100, timeoutMs: 600_000 },
  );
  const broken = brokenPromises(figures);
  if (!figures.controllerAlive) broken.push('the controller exited');
  return {
    figures,
    broken,
    lines: [
      ...figures.restarts.map(
        (r) =>
          `${r.component} SIGKILLed and restarted: away ${ms(r.downMs)}; the controller wrote again ${ms(r.firstWriteAfterMs)} after it was back`,
      ),
      `relists after 410 Gone ${figures.relists}; controller alive ${figures.controllerAlive}`,
      ...ledgerLines(figures),
    ],
  };
}

async function node(env: ChaosEnv, scale: Scale): Promise<Report> {
  const figures = await nodeLoss(
    env,
    scale === 'short' ? { runs: 4, timeoutMs: 240_000 } : { runs: 20, timeoutMs: 600_000 },
  );
  const broken = brokenPromises(figures, true);
  const failed = Object.entries(figures.failed);
  if (failed.length > 0)
    broken.push(`runs not saved by their retry: ${JSON.stringify(figures.failed)}`);
  if (figures.retried !== figures.runs)
    broken.push(`${figures.runs - figures.retried} run(s) not retried after the node loss`);
  return {
    figures,
    broken,
    lines: [
      `${figures.runs} runs mid-hook on a node that went dark (spec.retries 1; a second node joins)`,
      `attempts ended NodeLost: every one after ${ms(figures.allLostAttemptsEndedMs)} (seen in status: ${figures.nodeLostSeen}); retried ${figures.retried}`,
      `every run Finished ${ms(figures.allFinishedMs)} after the loss; left Running ${figures.unfinished} (goal 0)`,
      ...ledgerLines(figures),
    ],
  };
}

export const SCENARIOS = { kills, leader, restarts, node } satisfies Record<
  string,
  (env: ChaosEnv, scale: Scale) => Promise<Report>
>;
export type ScenarioName = keyof typeof SCENARIOS;
