import type { ArchiveApi } from '../server/archive-api.js';

/**
 * `lorenz controller` composed with the archive's read API: the controller (src/controller)
 * is a lower layer than the API server (src/server), so the command starts both here.
 *
 * `--archive-api-bind-address ADDR`: where the read API listens; `0` turns it off. Default:
 * `:8091` in a cluster (KUBERNETES_SERVICE_HOST set; the chart's Service port `archive`),
 * off on a laptop, where `lorenz get runs --all` reads the controller's SQLite file itself.
 * (`:8090` is the agent-tools gateway's.)
 */
export const ARCHIVE_API_FLAG = '--archive-api-bind-address';
export const IN_CLUSTER_ARCHIVE_API_ADDRESS = ':8091';

export function defaultArchiveApiAddress(env: NodeJS.ProcessEnv = process.env): string {
  return env.KUBERNETES_SERVICE_HOST ? IN_CLUSTER_ARCHIVE_API_ADDRESS : '0';
}

/** The read API's flag taken out of the controller's arguments; `--archive-dsn` is read, kept. */
export function splitArchiveApiArgs(args: readonly string[]): {
  bindAddress: string | undefined;
  dsn: string | undefined;
  kubeconfig: string | undefined;
  rest: string[];
} {
  const rest: string[] = [];
  let bindAddress: string | undefined;
  let dsn: string | undefined;
  let kubeconfig: string | undefined;
  for (let index = 0; index < args.length; index += 1) {
    const arg = args[index] ?? '';
    const [flag, inline] = arg.startsWith('--')
      ? [arg.split('=')[0], arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : undefined]
      : [arg, undefined];
    const value = () => inline ?? args[index + 1];
    if (flag === ARCHIVE_API_FLAG) {
      bindAddress = value();
      if (inline === undefined) index += 1;
      continue;
    }
    if (flag === '--archive-dsn') dsn = value();
    if (flag === '--kubeconfig') kubeconfig = value();
    rest.push(arg);
  }
  return { bindAddress, dsn, kubeconfig, rest };
}

export async function controllerCommand(args: string[]): Promise<number> {
  const { bindAddress, kubeconfig, rest } = splitArchiveApiArgs(args);
  const { parseControllerArgs, startController } = await import('../controller/main.js');
  const { KubeConfig } = await import('@kubernetes/client-node');
  const { createLogger } = await import('../controller/runtime/logger.js');
  const { createKubeClient } = await import('../controller/runtime/client.js');
  const { tuneControllerHeap } = await import('../controller/runtime/heap-flags.js');
  const { kubeconfig: _path, ...options } = parseControllerArgs(rest);
  // Before the informers fill the heap: see heap-flags.ts for why not on the command line.
  const collector = tuneControllerHeap();
  const kubeConfig = new KubeConfig();
  if (kubeconfig) kubeConfig.loadFromFile(kubeconfig);
  else kubeConfig.loadFromDefault();
  const logger = createLogger();
  const running = await startController({ ...options, kubeConfig });
  const address = bindAddress ?? defaultArchiveApiAddress();
  let api: ArchiveApi | undefined;
  const client = createKubeClient(kubeConfig);
  if (address !== '0' && options.archive) {
    const { delegatingArchive } = await import('../archive/delegate.js');
    const { startArchiveApi } = await import('../server/archive-api.js');
    try {
      // The API reads the store the archiver writes: one SQLite writer, one PostgreSQL pool.
      const store = delegatingArchive(() => running.archiveStore());
      api = await startArchiveApi({ store, client, bindAddress: address, logger });
    } catch (error) {
      // The read API is for people; the controller goes on without it, and says why.
      logger.error({ err: error }, `archive read API not served: ${(error as Error).message}`);
    }
  } else if (address !== '0') {
    logger.info('archive read API not served: the run archive is off');
  }
  const reason = await running.done;
  collector.stop();
  await api?.close();
  client.close();
  switch (reason) {
    case 'stopped':
    case 'signal':
      return 0;
  }
}
