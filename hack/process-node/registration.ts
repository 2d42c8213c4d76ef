import { cpus, arch, release, totalmem } from 'node:os';
import {
  PatchStrategy,
  setHeaderOptions,
  type CoreV1Api,
  type V1Node,
  type V1NodeCondition,
} from '@kubernetes/client-node';
import { describeError, httpStatus, type LogFn } from './types.js';

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const HEARTBEAT_MS = 10_000;

export interface NodeRegistration {
  stop(): Promise<void>;
}

function nodeConditions(now: string): V1NodeCondition[] {
  const pressure = (type: string, reason: string): V1NodeCondition => ({
    type,
    status: 'False',
    reason,
    message: 'the process node does not track pressure',
    lastHeartbeatTime: now as unknown as Date,
    lastTransitionTime: now as unknown as Date,
  });
  return [
    pressure('MemoryPressure', 'KubeletHasSufficientMemory'),
    pressure('DiskPressure', 'KubeletHasNoDiskPressure'),
    pressure('PIDPressure', 'KubeletHasSufficientPID'),
    {
      type: 'Ready',
      status: 'True',
      reason: 'KubeletReady',
      message: 'process node is posting ready status',
      lastHeartbeatTime: now as unknown as Date,
      lastTransitionTime: now as unknown as Date,
    },
  ];
}

function nodeStatus(name: string, port: number, startedAt: string, now: string) {
  const capacity = {
    cpu: String(cpus().length),
    memory: `${Math.floor(totalmem() / 1024)}Ki`,
    pods: '110',
    'ephemeral-storage': '100Gi',
  };
  return {
    capacity,
    allocatable: capacity,
    // Transition times stay at registration; only the heartbeat moves.
    conditions: nodeConditions(now).map((c) => ({ ...c, lastTransitionTime: startedAt })),
    addresses: [
      { type: 'InternalIP', address: '127.0.0.1' },
      { type: 'Hostname', address: name },
    ],
    daemonEndpoints: { kubeletEndpoint: { Port: port } },
    nodeInfo: {
      machineID: name,
      systemUUID: name,
      bootID: startedAt,
      kernelVersion: release(),
      osImage: 'host filesystem (lorenz process node)',
      containerRuntimeVersion: 'process://0.1.0',
      kubeletVersion: 'v0.0.0-process-node',
      kubeProxyVersion: '',
      operatingSystem: 'linux',
      architecture: goArch(),
    },
  };
}

function goArch(): string {
  const a = arch();
  return a === 'x64' ? 'amd64' : a;
}

/**
 * Creates (or takes over) the Node object, clears the not-ready taint that admission adds
 * (no node-lifecycle controller runs to clear it), and posts a Ready heartbeat.
 */
export async function registerNode(
  core: CoreV1Api,
  name: string,
  port: number,
  log: LogFn,
): Promise<NodeRegistration> {
  const startedAt = new Date().toISOString();
  const node: V1Node = {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: {
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': goArch(),
        'node.kubernetes.io/instance-type': 'lorenz-process-node',
      },
    },
    spec: {},
  };
  try {
    await core.createNode({ body: node });
  } catch (err) {
    if (httpStatus(err) !== 409) throw err;
    log(`node ${name} already exists; taking it over`);
  }
  const current = await core.readNode({ name });
  const taints = (current.spec?.taints ?? []).filter(
    (t) => t.key !== 'node.kubernetes.io/not-ready',
  );
  await core.patchNode(
    { name, body: { spec: { taints: taints.length ? taints : null } } },
    mergePatch,
  );
  const postStatus = () =>
    core.patchNodeStatus(
      { name, body: { status: nodeStatus(name, port, startedAt, new Date().toISOString()) } },
      mergePatch,
    );
  await postStatus();
  const timer = setInterval(() => {
    postStatus().catch((err) => log(`node heartbeat failed: ${describeError(err)}`));
  }, HEARTBEAT_MS);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      try {
        await core.deleteNode({ name });
      } catch (err) {
        if (httpStatus(err) !== 404) log(`deregistering node failed: ${describeError(err)}`);
      }
    },
  };
}
