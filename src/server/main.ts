import { existsSync } from 'node:fs';
import { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { defaultArchivePath, openArchive } from '../archive/dsn.js';
import type { ArchiveStore } from '../archive/types.js';
import { createKubeClient } from '../controller/runtime/client.js';
import { createLogger } from '../controller/runtime/logger.js';
import { parseBindAddress } from '../controller/runtime/servers.js';
import { clusterAccess, localAccess } from './access.js';
import { storeSource, urlSource, type ArchiveSource } from './archive-source.js';
import { kubeAuthorizer } from './auth.js';
import { createViewCache } from './cache.js';
import { defaultWebRoot } from './static.js';
import { startViewServer } from './view-server.js';

/** The server's parts, composed: what `lorenz server` and the tests start. */
export interface StartServerOptions {
  kubeconfig?: string;
  /** Instead of a kubeconfig file (tests). */
  kubeConfig?: KubeConfig;
  bindAddress: string;
  archiveDsn?: string;
  archiveUrl?: string;
  /** An open store instead of a DSN (tests); closed by the caller, not by close(). */
  archiveStore?: ArchiveStore;
  namespace?: string;
  webRoot?: string;
  auth: 'token' | 'local';
  logger?: Logger;
}

export interface RunningServer {
  mode: 'cluster' | 'local';
  url: string;
  address: { host: string; port: number };
  close(): Promise<void>;
}

/**
 * The archive a local-mode server opens when no flag names one: the file a laptop controller
 * archives to by default (lorenz controller without --archive-dsn), as `lorenz get runs --all`
 * finds it, so runs the poller deleted once their issues were Done are still there to open.
 * None in token mode (in a cluster the chart says where the archive is), none for
 * `--archive-dsn off`, none when the file does not exist.
 */
export function laptopArchiveDsn(
  options: Pick<StartServerOptions, 'auth' | 'archiveDsn' | 'archiveUrl'>,
  path: string = defaultArchivePath(),
  exists: (path: string) => boolean = existsSync,
): string | undefined {
  if (options.auth === 'token' || options.archiveDsn !== undefined || options.archiveUrl)
    return undefined;
  return exists(path) ? `sqlite:${path}` : undefined;
}

export async function startServer(options: StartServerOptions): Promise<RunningServer> {
  const logger = options.logger ?? createLogger();
  const kubeConfig = options.kubeConfig ?? new KubeConfig();
  if (!options.kubeConfig) {
    if (options.kubeconfig) kubeConfig.loadFromFile(options.kubeconfig);
    else kubeConfig.loadFromDefault();
  }
  const client = createKubeClient(kubeConfig);
  const bind = parseBindAddress(options.bindAddress);
  if (!bind) throw new Error('lorenz server needs a bind address (not 0)');
  let archive: ArchiveSource | undefined;
  if (options.archiveStore)
    archive = { ...storeSource(options.archiveStore), close: async () => {} };
  else if (options.archiveDsn && options.archiveDsn !== 'off')
    archive = storeSource(await openArchive(options.archiveDsn));
  else if (options.archiveUrl) archive = urlSource(options.archiveUrl);
  else {
    const laptop = laptopArchiveDsn(options);
    if (laptop) archive = storeSource(await openArchive(laptop));
  }
  const access =
    options.auth === 'token'
      ? clusterAccess(kubeConfig, kubeAuthorizer(client))
      : await localAccess(kubeConfig, client);
  const cache = createViewCache({
    client,
    logger,
    ...(options.namespace ? { namespace: options.namespace } : {}),
  });
  cache.start();
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'lorenz_server_' });
  const server = await startViewServer({
    access,
    cache,
    client,
    archive,
    webRoot: options.webRoot ?? defaultWebRoot(),
    logger,
    registry,
    loopbackHostsOnly: access.mode === 'local',
    bind,
  });
  const host = server.address.host.includes(':') ? `[${server.address.host}]` : server.address.host;
  const shown = host === '0.0.0.0' || host === '[::]' ? '127.0.0.1' : host;
  logger.info(
    {
      address: `${server.address.host}:${server.address.port}`,
      mode: access.mode,
      archive: archive?.location,
    },
    'lorenz server listening',
  );
  return {
    mode: access.mode,
    url: `http://${shown}:${server.address.port}/`,
    address: server.address,
    async close() {
      await server.close();
      await cache.stop();
      await archive?.close();
      client.close();
    },
  };
}
