// `lorenz runner` (inside a run Pod) and `lorenz controller` (the operator). Each loads its
// layer only when called, so the other subcommands never pay for the Kubernetes client.

export async function runnerCommand(args: string[]): Promise<number> {
  const { runRunnerCommand } = await import('../runner/index.js');
  return runRunnerCommand(args);
}

export async function controllerCommand(args: string[]): Promise<number> {
  // With the archive's read API beside it (src/server, above the controller's layer).
  const command = await import('./controller-command.js');
  return command.controllerCommand(args);
}
