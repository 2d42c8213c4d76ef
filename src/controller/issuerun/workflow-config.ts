import type { LoadedWorkflow } from '../../template/load-workflow.js';

export { createWorkflowConfigCache, type RunnableWorkflow } from '../shared/workflow-config.js';

/** activeDeadlineSeconds when the Workflow sets no runTimeoutSeconds: every hook and turn at its limit. */
export function defaultRunTimeoutSeconds(config: LoadedWorkflow['config']): number {
  const hooks = 4 * Math.ceil(config.hooks.timeoutMs / 1000);
  const turns = config.agent.maxTurns * Math.ceil(config.agents.turnTimeoutMs / 1000);
  return hooks + turns + 300;
}
