import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { issueServingCert } from './certs.js';
import type { LogRegistry } from './log-registry.js';
import { startLogsServer } from './logs-server.js';
import { apiObjectSource } from './objects.js';
import { watchPods } from './pod-watcher.js';
import { registerNode } from './registration.js';
import type { ControlPlaneAccess, ImageMap, LogFn } from './types.js';

export type { ControlPlaneAccess, ImageMap, ImageBinds, LogFn } from './types.js';

export interface ProcessNodeOptions {
  controlPlane: ControlPlaneAccess;
  /** Node name; default 'process-node'. */
  name?: string;
  /** Where pod volumes, logs and PV directories live; default a fresh temp dir, removed on stop. */
  dataDir?: string;
  /** Image ref (or repository without tag/digest) → { container path: host path }. */
  imageMap?: ImageMap;
  log?: LogFn;
}

export interface ProcessNode {
  name: string;
  /** Where pod volumes (`pods/<uid>/`) and logs (`pods/<uid>/logs/<container>/`) live. */
  dataDir: string;
  /** Kills every container process group, stops serving logs, deletes the Node. */
  stop(): Promise<void>;
}

/**
 * A kubelet stand-in that runs Pods as local processes: it registers a Ready Node, binds
 * pending Pods to itself, runs their containers in private mount namespaces with their
 * volumes at their mountPaths, reports status and serves logs. See README.md here.
 */
export async function startProcessNode(options: ProcessNodeOptions): Promise<ProcessNode> {
  const name = options.name ?? 'process-node';
  const log = options.log ?? (() => undefined);
  const ownDataDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), `lorenz-${name}-`)));
  const { controlPlane } = options;
  const certDir = join(dataDir, 'pki');
  await mkdir(certDir, { recursive: true });
  const core = controlPlane.kubeConfig.makeApiClient(CoreV1Api);
  const cert = await issueServingCert(
    certDir,
    name,
    controlPlane.caCertPath,
    controlPlane.caKeyPath,
  );
  const logs: LogRegistry = new Map();
  const server = await startLogsServer(cert, logs, log);
  const registration = await registerNode(core, name, server.port, log).catch(
    async (err: unknown) => {
      await server.close();
      throw err;
    },
  );
  const watcher = await watchPods(controlPlane.kubeConfig, core, name, {
    core,
    apiServer: controlPlane.server,
    dataDir,
    objects: apiObjectSource(core, controlPlane.caCertPath),
    imageMap: options.imageMap ?? {},
    logs,
    log,
  }).catch(async (err: unknown) => {
    await registration.stop();
    await server.close();
    throw err;
  });
  log(`process node ${name} ready (kubelet port ${server.port}, data ${dataDir})`);

  let stopping: Promise<void> | undefined;
  return {
    name,
    dataDir,
    stop() {
      stopping ??= (async () => {
        await watcher.stop();
        await server.close();
        await registration.stop();
        if (ownDataDir) await rm(dataDir, { recursive: true, force: true });
      })();
      return stopping;
    },
  };
}
