import type { AgentStep } from '../workspace/agent-step.js';
import type { AcpAgentStepOptions } from './step.js';

/**
 * `createAcpAgentStep`, with the agent runtime (the ACP SDK and its protocol schemas) loaded
 * at the step's first call rather than at start: it is needed only after after_create and
 * before_run, so loading it up front delayed the first hook, and in the startup snapshot it
 * made the heap (and every start's deserializing) ≈ 1.4 MB bigger for `--no-agent` runs.
 */
export function createLazyAcpAgentStep(options: AcpAgentStepOptions): AgentStep {
  let step: Promise<AgentStep> | undefined;
  return async (context) => {
    step ??= import('./step.js').then((runtime) => runtime.createAcpAgentStep(options));
    return (await step)(context);
  };
}
