// The chaos suite's scenarios at two scales: `short` (CI, through the integration tier) and
// `long` (`npm run chaos`, the README's figures). Each reports figures beside their goals
// and the promises it saw broken.
import type { ChaosEnv } from './env.js';
import { controllerKills } from './controller-kills.js';
import { brokenPromises } from './ledger.js';

export type Scale = 'short' | 'long';

export interface Report {
  lines: string[];
  broken: string[];
  figures: object;
}

const ms = (value: number) => `${(value / 1000).toFixed(1)} s`;

async function kills(env: ChaosEnv, scale: Scale): Promise<Report> {
  const figures = await controllerKills(
    env,
    scale === 'short'
      ? { runs: 20, kills: 6, timeoutMs: 180_000 }
      : { runs: 200, kills: 20, timeoutMs: 600_000 },
  );
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
      `last run Finished ${ms(figures.finishedAfterLastKillMs)} after the last kill`,
    ],
  };
}

export const SCENARIOS = { kills } satisfies Record<
  string,
  (env: ChaosEnv, scale: Scale) => Promise<Report>
>;
export type ScenarioName = keyof typeof SCENARIOS;
