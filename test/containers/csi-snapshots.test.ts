// Real CSI volumes and VolumeSnapshots on the real node (csi-stack.ts): a claim of the class is
// provisioned by csi-provisioner through our hostpath driver and mounted by the kubelet into a
// restricted Pod; a VolumeSnapshot of it is taken by the snapshot-controller and csi-snapshotter;
// claims restored from it hold the exact tree (modes, owners, sizes, contents, symlink
// targets), and a restore written to leaves the snapshot as it was. What the operator's
// snapshot workspaces rest on, checked here without the operator.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { realNodeSkipReason, startRealNode, type RealNode } from './real-node-env.js';
import {
  CSI_CONTROLLERS,
  CSI_DRIVER_NAME,
  CSI_SNAPSHOT_CLASS,
  CSI_STORAGE_CLASS,
  startCsiStack,
} from './csi-stack.js';
import { DEFAULT_RUN_AS_USER } from '../../src/controller/issuerun/pod-builder.js';
import { installOperator } from '../integration/operator-harness.js';
import { describeSnapshotStartsOnRealNode } from './snapshot-start.js';
import { describeWarmStartsOnRealNode } from './warm-start.js';
import { RESTRICTED_CONTAINER, restrictedPod } from './restricted-pod.js';

const images = inject('containerImages');
const skipReason = realNodeSkipReason(images);
const builtImages = () => {
  if (!images.available) throw new Error(`no images: ${images.reason}`);
  return { operator: images.operator, agent: images.agent };
};
if (skipReason) console.warn(`[containers] skipping the CSI snapshot tests: ${skipReason}`);

// Not real-node.test.ts's node nor the dev cluster's: its own name, address, port, bridge, range.
const NODE = {
  LORENZ_NODE_NAME: 'lorenz-csi-node',
  LORENZ_NODE_IP: '10.89.0.3',
  LORENZ_KUBELET_PORT: '10252',
  LORENZ_BRIDGE: 'lorenz2',
  LORENZ_POD_CIDR: '10.88.2.0/24',
};
const NAMESPACE = 'restricted';
const SNAPSHOT = 'work-snap';

// The tree a run would leave: an executable, a private file, a symlink, nested directories.
const WRITE = `set -e
cd /workspace
mkdir -p nested/deeper
printf '#!/bin/sh\\necho ran from the snapshot\\n' > run.sh
chmod 0755 run.sh
printf 'secret\\n' > secret
chmod 0600 secret
printf 'deep\\n' > nested/deeper/file
chmod 0640 nested/deeper/file
chmod 0750 nested
ln -s nested/deeper/file link
`;
// One line per entry, sorted: type, mode, owner, size and sha256 of a file, a link's target;
// first the root's mode and group (what fsGroupChangePolicy OnRootMismatch looks at).
const LIST = `cd /workspace
stat -c 'root %a %u:%g' .
find . -mindepth 1 | LC_ALL=C sort | while IFS= read -r p; do
  if [ -L "$p" ]; then echo "$p link $(readlink "$p")"
  elif [ -d "$p" ]; then echo "$p dir $(stat -c '%a %u:%g' "$p")"
  else echo "$p file $(stat -c '%a %u:%g %s' "$p") $(sha256sum < "$p" | cut -d' ' -f1)"
  fi
done
`;

describe.skipIf(skipReason !== '')('CSI volumes and snapshots on the real node', () => {
  let node: RealNode;
  let written = '';
  const kubectl = (args: string[], input?: string) => node.kubectl(args, input);
  const apply = (object: object) => kubectl(['apply', '-f', '-'], JSON.stringify(object));
  const jsonpath = (kind: string, name: string, path: string) =>
    kubectl(['-n', NAMESPACE, 'get', kind, name, '-o', `jsonpath=${path}`]);
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  /** Polls `read` every 500 ms until `done`; the error carries the last value. */
  async function until(what: string, read: () => string, done: (value: string) => boolean) {
    const deadline = Date.now() + 90_000;
    for (;;) {
      const value = read();
      if (done(value)) return value;
      if (Date.now() > deadline) throw new Error(`${what}: not in 90 s (last: ${value})`);
      await sleep(500);
    }
  }

  function claim(name: string, snapshot?: string) {
    apply({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name, namespace: NAMESPACE },
      spec: {
        storageClassName: CSI_STORAGE_CLASS,
        accessModes: ['ReadWriteOnce'],
        resources: { requests: { storage: '10Mi' } },
        ...(snapshot
          ? {
              dataSource: {
                apiGroup: 'snapshot.storage.k8s.io',
                kind: 'VolumeSnapshot',
                name: snapshot,
              },
            }
          : {}),
      },
    });
    return until(
      `claim ${name} Bound`,
      () => jsonpath('pvc', name, '{.status.phase}'),
      (phase) => phase === 'Bound',
    );
  }

  /** A restricted Pod (non-root, fsGroup) running `script` on the claim; resolves to its log. */
  async function runOn(
    name: string,
    claimName: string,
    script: string,
    fsGroupChangePolicy = 'OnRootMismatch',
  ): Promise<string> {
    if (!images.available) throw new Error(images.reason);
    const podSecurity = {
      runAsGroup: DEFAULT_RUN_AS_USER,
      fsGroup: DEFAULT_RUN_AS_USER,
      fsGroupChangePolicy,
    };
    apply(
      restrictedPod(name, NAMESPACE, podSecurity, {
        containers: [
          {
            name: 'main',
            image: images.base,
            command: ['sh', '-c', script],
            securityContext: RESTRICTED_CONTAINER,
            volumeMounts: [{ name: 'workspace', mountPath: '/workspace' }],
          },
        ],
        volumes: [{ name: 'workspace', persistentVolumeClaim: { claimName } }],
      }),
    );
    const ended = await node.waitForPod(NAMESPACE, name, (pod) =>
      ['Succeeded', 'Failed'].includes(pod.status?.phase ?? ''),
    );
    const log = kubectl(['-n', NAMESPACE, 'logs', name]);
    expect(ended.status?.phase, log).toBe('Succeeded');
    return log;
  }

  beforeAll(async () => {
    node = await startRealNode({ identity: NODE, extraControllers: CSI_CONTROLLERS });
    const started = Date.now();
    await startCsiStack(node);
    // Said in the log: what the stack adds to a node's start (its tools built, or cached).
    process.stderr.write(`[containers] CSI stack ready in ${(Date.now() - started) / 1000}s\n`);
    await node.createRestrictedNamespace(NAMESPACE);
    // The CRDs and RBAC of the operator, once for the controllers the describes below start.
    await installOperator(node.cp);
  }, 900_000);

  afterAll(async () => {
    await node?.stop();
  }, 120_000);

  it('provisions a claim of the class through the driver; a restricted Pod writes a tree on it', async () => {
    await claim('work');
    const volume = jsonpath('pvc', 'work', '{.spec.volumeName}');
    const pv = JSON.parse(kubectl(['get', 'pv', volume, '-o', 'json'])) as {
      spec: { csi?: { driver?: string; volumeHandle?: string }; storageClassName?: string };
    };
    expect(pv.spec).toMatchObject({
      storageClassName: CSI_STORAGE_CLASS,
      csi: { driver: CSI_DRIVER_NAME, volumeHandle: volume },
    });
    written = await runOn('writer', 'work', `${WRITE}\n${LIST}`);
    const gid = DEFAULT_RUN_AS_USER;
    // The driver made the root root-owned 0755: the kubelet gave it the Pod's fsGroup.
    expect(written).toContain(`root 2775 0:${gid}\n`);
    expect(written).toMatch(new RegExp(`^\\./run\\.sh file 755 ${gid}:${gid} 37 `, 'm'));
    expect(written).toMatch(new RegExp(`^\\./secret file 600 ${gid}:${gid} 7 `, 'm'));
    // Directories made under the setgid root inherit the bit: 0750 reads 2750.
    expect(written).toMatch(new RegExp(`^\\./nested dir 2750 ${gid}:${gid}$`, 'm'));
    expect(written).toContain('./link link nested/deeper/file\n');
  });

  it('takes a VolumeSnapshot of the claim: readyToUse, with its content and restore size', async () => {
    apply({
      apiVersion: 'snapshot.storage.k8s.io/v1',
      kind: 'VolumeSnapshot',
      metadata: { name: SNAPSHOT, namespace: NAMESPACE },
      spec: {
        volumeSnapshotClassName: CSI_SNAPSHOT_CLASS,
        source: { persistentVolumeClaimName: 'work' },
      },
    });
    await until(
      `snapshot ${SNAPSHOT} ready`,
      () => jsonpath('volumesnapshot', SNAPSHOT, '{.status.readyToUse}'),
      (ready) => ready === 'true',
    );
    const content = jsonpath(
      'volumesnapshot',
      SNAPSHOT,
      '{.status.boundVolumeSnapshotContentName}',
    );
    const handle = kubectl([
      'get',
      'volumesnapshotcontent',
      content,
      '-o',
      'jsonpath={.status.snapshotHandle}',
    ]);
    expect(handle).toMatch(/^snapshot-/);
    // The files' bytes: 37 + 7 + 5.
    expect(jsonpath('volumesnapshot', SNAPSHOT, '{.status.restoreSize}')).toBe('49');
  });

  it('restores the snapshot into a new claim: a Pod with fsGroup and OnRootMismatch reads back the exact tree', async () => {
    await claim('restored-1', SNAPSHOT);
    // Same root group and setgid bit: the kubelet changes nothing, so 0600 stays 0600.
    expect(await runOn('reader-1', 'restored-1', LIST)).toBe(written);
  });

  it('keeps the snapshot as it was when a restored claim is written: a second restore reads the original', async () => {
    const changed = await runOn(
      'changer',
      'restored-1',
      `set -e; cd /workspace; ./run.sh; echo changed > secret; chmod 0644 secret; rm link; echo new > added\n${LIST}`,
    );
    expect(changed).toContain('ran from the snapshot\n');
    expect(changed).not.toBe(written);
    await claim('restored-2', SNAPSHOT);
    expect(await runOn('reader-2', 'restored-2', LIST)).toBe(written);
    // The control: with fsGroupChangePolicy Always the kubelet walks the tree and gives every
    // file group read and write, so the private file is no longer 0600.
    const always = await runOn('reader-always', 'restored-2', LIST, 'Always');
    expect(always).toMatch(/^\.\/secret file 660 /m);
  });

  it("leaves a snapshot of a claim that does not exist not ready, with the snapshot-controller's error", async () => {
    apply({
      apiVersion: 'snapshot.storage.k8s.io/v1',
      kind: 'VolumeSnapshot',
      metadata: { name: 'of-nothing', namespace: NAMESPACE },
      spec: {
        volumeSnapshotClassName: CSI_SNAPSHOT_CLASS,
        source: { persistentVolumeClaimName: 'no-such-claim' },
      },
    });
    const message = await until(
      'an error on snapshot of-nothing',
      () => jsonpath('volumesnapshot', 'of-nothing', '{.status.error.message}'),
      (value) => value !== '',
    );
    // The controller's words: it cannot build a VolumeSnapshotContent without the claim.
    expect(message).toBe(
      'Failed to create snapshot content with error snapshot controller failed to update of-nothing on API server: cannot get claim from snapshot',
    );
    const reasons = kubectl([
      ...['-n', NAMESPACE, 'get', 'events', '--field-selector', 'involvedObject.name=of-nothing'],
      ...['-o', 'jsonpath={.items[*].reason}'],
    ]);
    expect(reasons).toContain('SnapshotContentCreationFailed');
    // Still not ready after the controller's retries: no content, nothing for the driver.
    await sleep(5000);
    expect(jsonpath('volumesnapshot', 'of-nothing', '{.status.readyToUse}')).toBe('false');
    expect(
      jsonpath('volumesnapshot', 'of-nothing', '{.status.boundVolumeSnapshotContentName}'),
    ).toBe('');
  });

  describeSnapshotStartsOnRealNode(() => node, builtImages, {
    storageClass: CSI_STORAGE_CLASS,
    snapshotClass: CSI_SNAPSHOT_CLASS,
  });

  describeWarmStartsOnRealNode(() => node, builtImages, { storageClass: CSI_STORAGE_CLASS });
});
