// Real CSI storage for the real node (real-node-env.ts): our hostpath driver
// (test/support/csi-hostpath: volumes and snapshots are directories of this machine, registered
// with the kubelet as node-driver-registrar would), the kubernetes-csi csi-provisioner and
// csi-snapshotter sidecars, and the snapshot-controller with the snapshot CRDs of its release.
// All run as host processes beside the control plane's; hack/tools.sh builds them. No vitest
// here: the benchmarks may start it too.
import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { installCrds } from '../../hack/cluster/control-plane.js';
import { waitFor } from '../../hack/cluster/https-probe.js';
import {
  describeFailure,
  startProcess,
  tailFile,
  type ManagedProcess,
} from '../../hack/cluster/processes.js';
import { root, type RealNode } from './real-node-env.js';

const execFileAsync = promisify(execFile);

/** The driver's name: the CSIDriver, the StorageClass's provisioner, the snapshot class's driver. */
export const CSI_DRIVER_NAME = 'hostpath.csi.lorenz.dev';
/** StorageClass of the driver's volumes (binding Immediate, reclaim Delete). */
export const CSI_STORAGE_CLASS = 'lorenz-csi-hostpath';
/** VolumeSnapshotClass of the driver (deletionPolicy Delete). */
export const CSI_SNAPSHOT_CLASS = 'lorenz-csi-snapshots';
/**
 * kube-controller-manager loops the stack needs, for startRealNode's `extraControllers`: the
 * binder marks a claim of the class for the external provisioner and binds the volume it makes.
 */
export const CSI_CONTROLLERS = ['persistentvolume-binder-controller'];

export interface CsiStackOptions {
  /** The repository (hack/tools.sh); given by a bundled caller, whose import.meta differs. */
  repoRoot?: string;
  /** Time for the driver's registration and the probe claim and snapshot; default 120 s. */
  readyTimeoutMs?: number;
}

export interface CsiStack {
  /** Where the driver keeps volumes/<id>/ and snapshots/<id>/tree (inside the node's dir). */
  stateDir: string;
  /** The processes' logs: csi-hostpath, csi-provisioner, csi-snapshotter, snapshot-controller. */
  logDir: string;
  /** Stops the processes (also done by the node's stop()). */
  stop(): Promise<void>;
}

/** The objects the stack installs, besides the CRDs. */
export function csiStackObjects(): object[] {
  return [
    {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'CSIDriver',
      metadata: { name: CSI_DRIVER_NAME },
      spec: {
        // No ControllerPublish: a directory on this machine is attached to nothing.
        attachRequired: false,
        podInfoOnMount: false,
        // The kubelet applies the Pod's fsGroup (honouring fsGroupChangePolicy), as it does
        // for a disk: a restored volume whose root already has the group is left as it is.
        fsGroupPolicy: 'File',
        volumeLifecycleModes: ['Persistent'],
      },
    },
    {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: { name: CSI_STORAGE_CLASS },
      provisioner: CSI_DRIVER_NAME,
      reclaimPolicy: 'Delete',
      // Immediate: with one node there is no placement to wait for, every volume is on this
      // machine, and a claim is Bound before any Pod uses it (which tests can wait for).
      volumeBindingMode: 'Immediate',
    },
    {
      apiVersion: 'snapshot.storage.k8s.io/v1',
      kind: 'VolumeSnapshotClass',
      metadata: { name: CSI_SNAPSHOT_CLASS },
      driver: CSI_DRIVER_NAME,
      deletionPolicy: 'Delete',
    },
  ];
}

async function toolPath(repoRoot: string, tool: string): Promise<string> {
  const { stdout } = await execFileAsync(join(repoRoot, 'hack', 'tools.sh'), ['path', tool], {
    maxBuffer: 1024 * 1024,
  });
  return stdout.trim();
}

/**
 * Installs the snapshot CRDs, the CSIDriver, StorageClass CSI_STORAGE_CLASS and
 * VolumeSnapshotClass CSI_SNAPSHOT_CLASS, starts the driver and the three controllers, and
 * resolves once a probe claim was provisioned and snapshotted (then deleted). The node's
 * control plane must run CSI_CONTROLLERS. Stopped with the node, or by `stop()`.
 */
export async function startCsiStack(
  node: RealNode,
  options: CsiStackOptions = {},
): Promise<CsiStack> {
  const repoRoot = options.repoRoot ?? root;
  // One at a time: hack/tools.sh builds under a lock anyway, and a cold build says so.
  const driver = await toolPath(repoRoot, 'csi-hostpath');
  const provisioner = await toolPath(repoRoot, 'csi-provisioner');
  const snapshotter = await toolPath(repoRoot, 'csi-snapshotter');
  const snapshotController = await toolPath(repoRoot, 'snapshot-controller');
  const crdDir = join(`${snapshotController}.manifests`, 'crds');
  await installCrds(
    node.cp,
    readdirSync(crdDir).map((file) => join(crdDir, file)),
  );
  node.kubectl(
    ['apply', '-f', '-'],
    JSON.stringify({ kind: 'List', apiVersion: 'v1', items: csiStackObjects() }),
  );

  const dir = join(node.dir, 'csi');
  const stateDir = join(dir, 'state');
  const logDir = join(dir, 'logs');
  mkdirSync(logDir, { recursive: true });
  const socket = join(dir, 'csi.sock');
  // The sidecars run as the admin (system:masters): their RBAC is their release's concern,
  // not what the tests check.
  const kubeconfig = `--kubeconfig=${node.cp.kubeconfigPath}`;
  const processes: ManagedProcess[] = [];
  const start = (name: string, binary: string, args: string[]) =>
    processes.push(startProcess(name, binary, args, join(logDir, `${name}.log`)));
  const stop = async () => {
    for (const process of processes.splice(0).reverse()) await process.stop();
  };
  node.onStop(stop);

  start('csi-hostpath', driver, [
    `--endpoint=${socket}`,
    `--state-dir=${stateDir}`,
    `--node-id=${node.name}`,
    `--driver-name=${CSI_DRIVER_NAME}`,
    `--registry-dir=${join(node.kubeletRootDir, 'plugins_registry')}`,
  ]);
  start('csi-provisioner', provisioner, [
    `--csi-address=${socket}`,
    kubeconfig,
    // The claim's name and namespace reach the driver's log with each CreateVolume.
    '--extra-create-metadata',
    '--timeout=60s',
  ]);
  start('csi-snapshotter', snapshotter, [
    `--csi-address=${socket}`,
    kubeconfig,
    '--extra-create-metadata',
  ]);
  start('snapshot-controller', snapshotController, [
    kubeconfig,
    // No group snapshots (nor their CRDs): with the gate on, it waits 30 s for those CRDs
    // before it starts without them.
    '--feature-gates=CSIVolumeGroupSnapshot=false',
  ]);

  const abort = async () => {
    const dead = processes.find((process) => process.hasExited());
    return dead ? describeFailure(dead, 'exited before the CSI stack was ready') : undefined;
  };
  const timeoutMs = options.readyTimeoutMs ?? 120_000;
  try {
    await waitFor(
      `the kubelet to register ${CSI_DRIVER_NAME} (CSINode ${node.name})`,
      async () =>
        node
          .kubectl(['get', 'csinode', node.name, '-o', 'jsonpath={.spec.drivers[*].name}'])
          .split(' ')
          .includes(CSI_DRIVER_NAME),
      { timeoutMs, intervalMs: 500, abort },
    );
    await probe(node, timeoutMs, abort);
  } catch (error) {
    // The logs go with the node's directory: their ends go with the error.
    const tails = await Promise.all(
      processes.map(
        async (process) => `--- ${process.name}:\n${await tailFile(process.logPath, 15)}`,
      ),
    );
    await stop();
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(`the CSI stack did not start: ${message}\n${tails.join('\n')}`, {
      cause: error,
    });
  }
  return { stateDir, logDir, stop };
}

/** A claim provisioned and snapshotted end to end, then deleted: every part answers. */
async function probe(node: RealNode, timeoutMs: number, abort: () => Promise<string | undefined>) {
  const claim = 'lorenz-csi-probe';
  /** The probe's objects, each named `claim` in default. */
  const create = (apiVersion: string, kind: string, spec: object) =>
    node.kubectl(
      ['apply', '-f', '-'],
      JSON.stringify({ apiVersion, kind, metadata: { name: claim, namespace: 'default' }, spec }),
    );
  create('v1', 'PersistentVolumeClaim', {
    storageClassName: CSI_STORAGE_CLASS,
    accessModes: ['ReadWriteOnce'],
    resources: { requests: { storage: '1Mi' } },
  });
  const get = (kind: string, jsonpath: string) =>
    node.kubectl(['-n', 'default', 'get', kind, claim, '-o', `jsonpath=${jsonpath}`]);
  await waitFor(
    `the probe claim to be provisioned and bound (is ${CSI_CONTROLLERS.join(', ')} running?)`,
    async () => get('pvc', '{.status.phase}') === 'Bound',
    { timeoutMs, intervalMs: 500, abort },
  );
  create('snapshot.storage.k8s.io/v1', 'VolumeSnapshot', {
    volumeSnapshotClassName: CSI_SNAPSHOT_CLASS,
    source: { persistentVolumeClaimName: claim },
  });
  await waitFor(
    'the probe snapshot to be ready',
    async () => get('volumesnapshot', '{.status.readyToUse}') === 'true',
    { timeoutMs, intervalMs: 500, abort },
  );
  // The snapshot first: while it is being taken its claim is protected from deletion.
  node.kubectl(['-n', 'default', 'delete', 'volumesnapshot', claim, '--wait', '--timeout=60s']);
  node.kubectl(['-n', 'default', 'delete', 'pvc', claim, '--wait', '--timeout=60s']);
}
