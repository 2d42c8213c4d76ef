import type { CommandTable } from './main.js';

/**
 * The subcommands of the plain entry. Each is imported on demand, so `lorenz run` never
 * loads the Kubernetes client.
 */
export const COMMANDS: CommandTable = {
  'workflow validate': async () => (await import('./validate-command.js')).validateCommand,
  'prompt render': async () => (await import('./workflow-commands.js')).promptRenderCommand,
  'hook render': async () => (await import('./workflow-commands.js')).hookRenderCommand,
  'workspace digest': async () => (await import('./digest-command.js')).workspaceDigestCommand,
  run: async () => (await import('./run-command.js')).runCommand,
  poll: async () => (await import('./poll-command.js')).pollCommand,
  runner: async () => (await import('./operator-commands.js')).runnerCommand,
  'get runs': async () => (await import('./runs/get-runs.js')).getRunsCommand,
  logs: async () => (await import('./runs/logs.js')).logsCommand,
  'describe run': async () => (await import('./runs/describe.js')).describeRunCommand,
  approve: async () => (await import('./approve.js')).approveCommand,
  controller: async () => (await import('./operator-commands.js')).controllerCommand,
  server: async () => (await import('./server-command.js')).serverCommand,
  completion: async () => (await import('./completion.js')).completionCommand,
};
