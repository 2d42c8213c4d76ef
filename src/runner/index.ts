export { parseRunnerArgs, runRunner, runRunnerCommand, type RunnerOptions } from './main.js';
export { readVerifiedInputs } from './inputs.js';
export { parseTerminationSummary, type TerminationSummary } from './summary.js';
