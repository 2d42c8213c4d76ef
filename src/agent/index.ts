/** The agent runtime: ACP sessions over a bridge command, and the turn loop. */
export {
  createAcpAgentStep,
  type AcpAgentStepOptions,
  type AgentRuntimeConfig,
  type McpServer,
} from './step.js';
export { createLazyAcpAgentStep } from './lazy.js';
export { AgentFailure, type AgentFailureCode } from './failures.js';
export { bridgeEnvironment, TRACKER_CREDENTIAL_VARIABLES } from './environment.js';
