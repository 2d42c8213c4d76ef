// A real control plane on loopback without Docker: etcd + kube-apiserver (+ a lean
// kube-controller-manager) as child processes, with their own PKI and random free ports.
// This file is the contract the process node, the integration tests and dev-cluster use.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { createClusterPki, type ClusterPki } from './certs.js';
import {
  apiserverArgs,
  controllerManagerArgs,
  DEFAULT_CONTROLLERS,
  etcdArgs,
  stateLayout,
  type Ports,
} from './components.js';
import { apiGet, waitFor, type ProbeCredentials } from './https-probe.js';
import {
  createKubeconfigFor as createKubeconfigForAuthority,
  writeKubeconfig,
} from './kubeconfig.js';
import { freePorts } from './ports.js';
import { describeFailure, startProcess, tailFile, type ManagedProcess } from './processes.js';
import { ensureTools, type ToolPaths } from './tools.js';

export { ensureTools, type ToolPaths } from './tools.js';

export interface ControlPlane {
  /** State dir: certs/, etcd/, logs/, kubeconfig. */
  dir: string;
  /** https://127.0.0.1:<port> */
  server: string;
  /** Admin (system:masters) kubeconfig. */
  kubeconfigPath: string;
  kubeConfig: KubeConfig;
  /** The cluster CA: the node signs its kubelet serving certificate with it. */
  caCertPath: string;
  caKeyPath: string;
  tools: ToolPaths;
  /**
   * Stops one store process (SIGTERM, or SIGKILL with `kill`) and starts it again on the same
   * port with the same data; resolves once the apiserver answers /readyz again. For the chaos
   * suite: what clients live through when a control-plane component restarts.
   */
  restart(component: StoreComponent, options?: { kill?: boolean }): Promise<void>;
  /** Kills the controller manager, apiserver and etcd, waits for them; removes dir unless keep. */
  stop(): Promise<void>;
}

export type StoreComponent = 'etcd' | 'kube-apiserver';

export interface StartControlPlaneOptions {
  /** State dir to use (created if missing); default a fresh temp dir. */
  dir?: string;
  /** Keep the state dir after stop (logs for debugging). */
  keep?: boolean;
  extraApiserverArgs?: string[];
  /** kube-controller-manager loops to run; [] runs none. Default DEFAULT_CONTROLLERS. */
  controllers?: string[];
  /** More kube-controller-manager flags (node monitor periods, say). */
  extraControllerManagerArgs?: string[];
  /** Time allowed for /readyz; default 90 s (a 2-core machine running other tests). */
  readyTimeoutMs?: number;
}

const PORT_ATTEMPTS = 4;

export async function startControlPlane(
  options: StartControlPlaneOptions = {},
): Promise<ControlPlane> {
  const tools = await ensureTools();
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), 'lorenz-cp-')));
  const layout = stateLayout(dir);
  await Promise.all([
    mkdir(layout.certs, { recursive: true }),
    mkdir(layout.logs, { recursive: true }),
  ]);
  const pki = await createClusterPki(layout.certs);

  const processes: ManagedProcess[] = [];
  const stopAll = async () => {
    // Reverse start order: clients before the store they write to.
    for (const process of [...processes].reverse()) await process.stop();
    processes.length = 0;
  };
  try {
    const ports = await startStore(tools, pki, layout, options, processes);
    const server = `https://127.0.0.1:${ports.apiserver}`;
    await writeKubeconfig(layout.kubeconfig, {
      server,
      caCertPath: pki.ca.certPath,
      certPath: pki.admin.certPath,
      keyPath: pki.admin.keyPath,
      userName: 'admin',
    });
    const controllers = options.controllers ?? DEFAULT_CONTROLLERS;
    if (controllers.length > 0) {
      processes.push(
        startProcess(
          'kube-controller-manager',
          tools.kubeControllerManager,
          [
            ...controllerManagerArgs(pki, layout.kubeconfig, controllers),
            ...(options.extraControllerManagerArgs ?? []),
          ],
          join(layout.logs, 'kube-controller-manager.log'),
        ),
      );
      if (controllers.includes('serviceaccount-controller')) {
        await waitForDefaultServiceAccount(adminProbe(server, pki), processes);
      }
    }
    await writeFile(layout.pids, processes.map((p) => `${p.name} ${p.pid}\n`).join(''));

    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(layout.kubeconfig);
    let stopped: Promise<void> | undefined;
    const restart = async (component: StoreComponent, how: { kill?: boolean } = {}) => {
      const index = processes.findIndex((process) => process.name === component);
      const old = processes[index];
      if (!old) throw new Error(`no ${component} process to restart`);
      await (how.kill ? old.kill() : old.stop());
      const [binary, args] =
        component === 'etcd'
          ? [tools.etcd, etcdArgs(layout.etcdData, ports)]
          : [tools.kubeApiserver, apiserverArgs(pki, ports, options.extraApiserverArgs)];
      const next = startProcess(component, binary, args, old.logPath);
      processes[index] = next;
      await waitFor(
        'kube-apiserver /readyz after a restart',
        async () => (await apiGet(adminProbe(server, pki), '/readyz')).status === 200,
        {
          timeoutMs: options.readyTimeoutMs ?? 90_000,
          intervalMs: 100,
          abort: async () =>
            next.hasExited() ? describeFailure(next, 'exited after a restart') : undefined,
        },
      );
    };
    return {
      restart,
      dir,
      server,
      kubeconfigPath: layout.kubeconfig,
      kubeConfig,
      caCertPath: pki.ca.certPath,
      caKeyPath: pki.ca.keyPath,
      tools,
      stop: () =>
        (stopped ??= (async () => {
          await stopAll();
          if (!options.keep) await rm(dir, { recursive: true, force: true });
        })()),
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

function adminProbe(server: string, pki: ClusterPki): ProbeCredentials {
  return {
    server,
    caCertPath: pki.ca.certPath,
    certPath: pki.admin.certPath,
    keyPath: pki.admin.keyPath,
  };
}

const PORT_CLASH = /address already in use|bind: address/i;

/**
 * Starts etcd and kube-apiserver on fresh free ports and waits for /readyz. A port taken
 * between probing and binding (another control plane starting at the same moment) shows as
 * an early exit with "address already in use": then everything restarts on new ports.
 */
async function startStore(
  tools: ToolPaths,
  pki: ClusterPki,
  layout: ReturnType<typeof stateLayout>,
  options: StartControlPlaneOptions,
  processes: ManagedProcess[],
): Promise<Ports> {
  for (let attempt = 1; ; attempt++) {
    const [etcdClient, etcdPeer, apiserver] = (await freePorts(3)) as [number, number, number];
    const ports: Ports = { etcdClient, etcdPeer, apiserver };
    await rm(layout.etcdData, { recursive: true, force: true });
    const etcd = startProcess(
      'etcd',
      tools.etcd,
      etcdArgs(layout.etcdData, ports),
      join(layout.logs, 'etcd.log'),
    );
    processes.push(etcd);
    const api = startProcess(
      'kube-apiserver',
      tools.kubeApiserver,
      apiserverArgs(pki, ports, options.extraApiserverArgs),
      join(layout.logs, 'kube-apiserver.log'),
    );
    processes.push(api);
    const probe = adminProbe(`https://127.0.0.1:${apiserver}`, pki);
    try {
      await waitFor(
        'kube-apiserver /readyz',
        async () => (await apiGet(probe, '/readyz')).status === 200,
        {
          timeoutMs: options.readyTimeoutMs ?? 90_000,
          intervalMs: 250,
          abort: async () => {
            const dead = [etcd, api].find((p) => p.hasExited());
            return dead
              ? describeFailure(dead, 'exited before the control plane was ready')
              : undefined;
          },
        },
      );
      return ports;
    } catch (error) {
      const clash = (await Promise.all([etcd, api].map((p) => tailFile(p.logPath, 60)))).some(
        (log) => PORT_CLASH.test(log),
      );
      await Promise.all([api.stop(), etcd.stop()]);
      processes.length = 0;
      if (!clash || attempt >= PORT_ATTEMPTS) {
        const detail = error instanceof Error ? error.message : String(error);
        throw new Error(
          `control plane did not start (logs in ${layout.logs}): ${detail}\n` +
            `apiserver log ${api.logPath}, last lines:\n${await tailFile(api.logPath, 20)}`,
          { cause: error },
        );
      }
    }
  }
}

/** The ServiceAccount admission plugin rejects Pods until `default/default` exists. */
async function waitForDefaultServiceAccount(
  probe: ProbeCredentials,
  processes: ManagedProcess[],
): Promise<void> {
  await waitFor(
    'the default ServiceAccount and kube-root-ca.crt in namespace default',
    async () =>
      (await apiGet(probe, '/api/v1/namespaces/default/serviceaccounts/default')).status === 200 &&
      (await apiGet(probe, '/api/v1/namespaces/default/configmaps/kube-root-ca.crt')).status ===
        200,
    {
      timeoutMs: 60_000,
      intervalMs: 250,
      abort: async () => {
        const dead = processes.find((p) => p.hasExited());
        return dead ? describeFailure(dead, 'exited during start-up') : undefined;
      },
    },
  );
}

const execFileAsync = promisify(execFile);

async function kubectl(cp: ControlPlane, args: string[]): Promise<string> {
  try {
    const { stdout } = await execFileAsync(
      cp.tools.kubectl,
      ['--kubeconfig', cp.kubeconfigPath, ...args],
      {
        maxBuffer: 16 * 1024 * 1024,
      },
    );
    return stdout;
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? '';
    throw new Error(`kubectl ${args.join(' ')} failed: ${stderr.trim() || String(error)}`, {
      cause: error,
    });
  }
}

const fileArgs = (files: string[]) => files.flatMap((file) => ['-f', file]);

/** Server-side apply (field manager lorenz-dev), taking ownership of conflicting fields. */
export async function applyManifests(cp: ControlPlane, files: string[]): Promise<void> {
  if (files.length === 0) return;
  await kubectl(cp, [
    'apply',
    '--server-side',
    '--force-conflicts',
    '--field-manager=lorenz-dev',
    ...fileArgs(files),
  ]);
}

/** Applies CustomResourceDefinitions and waits until each is Established (served). */
export async function installCrds(cp: ControlPlane, crdFiles: string[]): Promise<void> {
  if (crdFiles.length === 0) return;
  await applyManifests(cp, crdFiles);
  await kubectl(cp, [
    'wait',
    '--for=condition=Established',
    '--timeout=60s',
    ...fileArgs(crdFiles),
  ]);
}

/** A kubeconfig for a user with a CA-signed client certificate (CN=name, O=groups). */
export function createKubeconfigFor(
  cp: ControlPlane,
  user: { name: string; groups?: string[] },
): Promise<string> {
  return createKubeconfigForAuthority(cp, user);
}
