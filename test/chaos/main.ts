// `npm run chaos [-- --short] [scenario…]`: the chaos suite against a real control plane and
// process nodes. Prints each scenario's figures beside its goal; exits 1 when a promise was
// broken (a run lost, doubled or left unfinished). The short form is what CI runs (through
// test/integration/chaos.test.ts); the long form is the benchmark of the README's figures.
//
//   scenarios: kills leader restarts node  (default: all four, in that order)
//   LORENZ_CHAOS_KEEP=1  keep the logs and the audit log (their folder is printed)
import { startChaosEnv } from './env.js';
import { SCENARIOS, type ScenarioName, type Scale } from './scenarios.js';

const args = process.argv.slice(2);
const scale: Scale = args.includes('--short') ? 'short' : 'long';
const chosen = args.filter((arg) => !arg.startsWith('--')) as ScenarioName[];
const unknown = chosen.filter((name) => !(name in SCENARIOS));
if (unknown.length > 0) {
  console.error(
    `unknown scenario(s): ${unknown.join(', ')}; known: ${Object.keys(SCENARIOS).join(', ')}`,
  );
  process.exit(2);
}
const names = chosen.length > 0 ? chosen : (Object.keys(SCENARIOS) as ScenarioName[]);

let broken = 0;
for (const name of names) {
  const env = await startChaosEnv();
  console.log(`\n## ${name} (${scale}) — logs in ${env.logDir}`);
  try {
    const report = await SCENARIOS[name](env, scale);
    for (const line of report.lines) console.log(line);
    if (report.broken.length > 0) {
      broken += report.broken.length;
      console.log(`BROKEN: ${report.broken.join('; ')}`);
    }
  } finally {
    await env.stop();
  }
}
process.exit(broken > 0 ? 1 : 0);
