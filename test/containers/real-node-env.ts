// The containers tier's real node, shared by its files: a local control plane, a node attached
// to it by hack/real-node.sh (kubelet, containerd, runc, CNI) and a namespace that enforces
// Pod Security `restricted`. Each file gives its node its own identity (name, address,
// ports, bridge, Pod range), so that a file never meets another's leftovers, nor the dev
// cluster's node (hack/real-node.sh's defaults), should two run on this machine at once.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { startControlPlane, type ControlPlane } from '../../hack/cluster/control-plane.js';
import { DEFAULT_CONTROLLERS } from '../../hack/cluster/components.js';

/** The repository, when the caller gives no `repoRoot` (csi-stack.ts's default too). */
export const root = join(import.meta.dirname, '..', '..');

/** hack/real-node.sh's environment for one node. */
export interface NodeIdentity {
  LORENZ_NODE_NAME: string;
  LORENZ_NODE_IP: string;
  LORENZ_KUBELET_PORT: string;
  LORENZ_BRIDGE: string;
  LORENZ_POD_CIDR: string;
}

/**
 * Why this machine cannot run the real node ('' when it can), from the tier's global setup
 * (`inject('containerImages')`). No vitest here: the benchmarks start the node too.
 */
export function realNodeSkipReason(
  images: { available: true } | { available: false; reason: string },
): string {
  if (!images.available) return images.reason;
  if (process.getuid?.() !== 0) return 'the real node needs root (containerd, kubelet)';
  return '';
}

export interface RealNode {
  cp: ControlPlane;
  /** The Node's name (its identity's LORENZ_NODE_NAME). */
  name: string;
  /** A scratch directory of this node's, removed by stop(). */
  dir: string;
  /** The kubelet's --root-dir (plugins_registry/ is where node plugins register). */
  kubeletRootDir: string;
  /**
   * Runs `cleanup` first when the node stops, the last added first: what runs beside the
   * node (the CSI stack) goes before its kubelet and control plane.
   */
  onStop(cleanup: () => Promise<void>): void;
  kubectl(args: string[], input?: string): string;
  getPod(namespace: string, name: string): V1Pod;
  /** Polls the Pod every 500 ms until `done`; the error carries its last status. */
  waitForPod(
    namespace: string,
    name: string,
    done: (pod: V1Pod) => boolean,
    seconds?: number,
  ): Promise<V1Pod>;
  /** A namespace enforcing Pod Security `restricted`, once its default ServiceAccount is there. */
  createRestrictedNamespace(name: string): Promise<void>;
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function startRealNode(options: {
  identity: NodeIdentity;
  /** kube-controller-manager loops besides the control plane's defaults. */
  extraControllers?: string[];
  /** The repository (hack/real-node.sh); given by a bundled caller, whose import.meta differs. */
  repoRoot?: string;
}): Promise<RealNode> {
  const script = join(options.repoRoot ?? root, 'hack', 'real-node.sh');
  const dir = mkdtempSync(join(tmpdir(), `${options.identity.LORENZ_NODE_NAME}-`));
  const nodeDir = join(dir, 'node');
  const env = { ...process.env, ...options.identity };
  let cp: ControlPlane | undefined;
  let nodeUp = false;
  const cleanups: (() => Promise<void>)[] = [];
  const stop = async () => {
    // Each cleanup runs even when one before it failed; the node still goes down after them.
    const failures: unknown[] = [];
    for (const cleanup of cleanups.splice(0).reverse()) {
      await cleanup().catch((error: unknown) => failures.push(error));
    }
    if (nodeUp) spawnSync(script, ['down', nodeDir], { env });
    await cp?.stop();
    rmSync(dir, { recursive: true, force: true });
    if (failures.length > 0) throw new AggregateError(failures, 'stopping the real node');
  };
  try {
    cp = await startControlPlane({
      dir: join(dir, 'cluster'),
      controllers: [...DEFAULT_CONTROLLERS, ...(options.extraControllers ?? [])],
    });
    const plane = cp;
    nodeUp = true; // from here on, a failed `up` may have left daemons for `down` to stop
    const up = spawnSync(
      script,
      ['up', nodeDir, plane.kubeconfigPath, plane.caCertPath, plane.caKeyPath],
      { encoding: 'utf8', env, timeout: 600_000 },
    );
    if (up.status !== 0) throw new Error(`hack/real-node.sh up failed:\n${up.stderr}`);
    const kubectl = (args: string[], input?: string) =>
      execFileSync(plane.tools.kubectl, ['--kubeconfig', plane.kubeconfigPath, ...args], {
        encoding: 'utf8',
        input,
        stdio: ['pipe', 'pipe', 'pipe'],
      });
    const getPod = (namespace: string, name: string): V1Pod =>
      JSON.parse(kubectl(['-n', namespace, 'get', 'pod', name, '-o', 'json'])) as V1Pod;
    return {
      cp: plane,
      name: options.identity.LORENZ_NODE_NAME,
      dir,
      kubeletRootDir: join(nodeDir, 'kubelet', 'root'),
      onStop: (cleanup) => void cleanups.push(cleanup),
      kubectl,
      getPod,
      async waitForPod(namespace, name, done, seconds = 90) {
        const deadline = Date.now() + seconds * 1000;
        for (;;) {
          const pod = getPod(namespace, name);
          if (done(pod)) return pod;
          if (Date.now() > deadline)
            throw new Error(`pod ${name} not there in ${seconds}s: ${JSON.stringify(pod.status)}`);
          await sleep(500);
        }
      },
      async createRestrictedNamespace(name) {
        kubectl(['create', 'namespace', name]);
        kubectl([
          'label',
          'namespace',
          name,
          'pod-security.kubernetes.io/enforce=restricted',
          'pod-security.kubernetes.io/enforce-version=latest',
        ]);
        // ServiceAccount admission refuses Pods until the serviceaccount controller made it.
        for (let i = 0; ; i += 1) {
          const probe = spawnSync(plane.tools.kubectl, [
            '--kubeconfig',
            plane.kubeconfigPath,
            ...['-n', name, 'get', 'sa', 'default'],
          ]);
          if (probe.status === 0) return;
          if (i >= 60) throw new Error(`namespace ${name} got no default ServiceAccount in 30 s`);
          await sleep(500);
        }
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
