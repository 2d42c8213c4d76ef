// The chaos suite's surroundings: a real control plane with an audit log of every write the
// controller replicas make, kube-controller-manager with the loops a node loss needs, and
// the controller replicas and the process node as child processes, so that each can be
// killed with SIGKILL as a crash, an OOM kill or a lost machine would end it.
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createKubeconfigFor,
  installCrds,
  startControlPlane,
  type ControlPlane,
} from '../../hack/cluster/control-plane.js';
import { createKubeClient, type KubeClient } from '../../src/controller/runtime/client.js';
import { DEFAULT_OPERATOR_IMAGE } from '../../src/controller/shared/constants.js';
import { providePodNode } from '../support/node-binary.js';
import {
  buildRunnerBundle,
  esbuildBundle,
  lorenzCrdFiles,
  operatorImageFiles,
  repoRootAbove,
} from '../support/operator-build.js';
import { startNodeChild, startReplica, type NodeChild, type Replica } from './children.js';

// `npm run chaos` runs this from a bundle in bench/, the short form from source.
const repo = repoRootAbove(import.meta.dirname);

export const NAMESPACE = 'default';
/** The two controller replicas act as users of their own: the audit log tells them apart. */
export const REPLICA_USERS = { a: 'lorenz-chaos-a', b: 'lorenz-chaos-b' } as const;
export type ReplicaName = keyof typeof REPLICA_USERS;

/** Node-loss timing: a node silent for this long is NotReady, then its Pods are evicted. */
export const NODE_MONITOR_GRACE_SECONDS = 16;
export const UNREACHABLE_TOLERATION_SECONDS = 2;

export interface ChaosEnv {
  cp: ControlPlane;
  admin: KubeClient;
  auditLog: string;
  /** Where the children's logs are (kept when the suite fails). */
  logDir: string;
  podNode: string;
  startReplica(
    name: ReplicaName,
    options?: { failpoints?: string; leaderElect?: boolean },
  ): Promise<Replica>;
  startNode(name: string): Promise<NodeChild>;
  stop(): Promise<void>;
}

/** Records, once complete, every write of the replicas; nothing else (auditing stays cheap). */
async function auditPolicy(dir: string): Promise<{ args: string[]; logPath: string }> {
  const policyPath = join(dir, 'audit-policy.yaml');
  const logPath = join(dir, 'audit.log');
  await writeFile(
    policyPath,
    [
      'apiVersion: audit.k8s.io/v1',
      'kind: Policy',
      'omitStages: [RequestReceived, ResponseStarted]',
      'rules:',
      '  - level: None',
      '    verbs: [get, list, watch]',
      '  - level: Metadata',
      `    users: [${Object.values(REPLICA_USERS).join(', ')}]`,
      '  - level: None',
      '',
    ].join('\n'),
  );
  return {
    args: [
      `--audit-policy-file=${policyPath}`,
      `--audit-log-path=${logPath}`,
      '--audit-log-format=json',
      '--audit-log-mode=blocking',
    ],
    logPath,
  };
}

export async function startChaosEnv(): Promise<ChaosEnv> {
  process.env.LORENZ_TOOLS_SCRIPT ??= join(repo, 'hack', 'tools.sh');
  const scratch = await mkdtemp(join(tmpdir(), 'lorenz-chaos-'));
  await chmod(scratch, 0o755);
  const audit = await auditPolicy(scratch);
  const cp = await startControlPlane({
    controllers: [
      'garbage-collector-controller',
      // A node that stops posting status turns NotReady, gets the unreachable NoExecute
      // taint, and its Pods are deleted once their toleration runs out.
      'node-lifecycle-controller',
      'taint-eviction-controller',
    ],
    extraControllerManagerArgs: [
      '--node-monitor-period=2s',
      `--node-monitor-grace-period=${NODE_MONITOR_GRACE_SECONDS}s`,
    ],
    extraApiserverArgs: [
      ...audit.args,
      `--default-unreachable-toleration-seconds=${UNREACHABLE_TOLERATION_SECONDS}`,
      `--default-not-ready-toleration-seconds=${UNREACHABLE_TOLERATION_SECONDS}`,
    ],
  });
  const admin = createKubeClient(cp.kubeConfig);
  try {
    await installCrds(cp, lorenzCrdFiles(repo));
    // No serviceaccount controller runs: ServiceAccount admission needs the default one.
    await admin.request({
      method: 'POST',
      path: `/api/v1/namespaces/${NAMESPACE}/serviceaccounts`,
      body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } },
    });
    const kubeconfigs = {
      a: await createKubeconfigFor(cp, { name: REPLICA_USERS.a, groups: ['system:masters'] }),
      b: await createKubeconfigFor(cp, { name: REPLICA_USERS.b, groups: ['system:masters'] }),
    };
    const podNode = await providePodNode(repo);
    const runner = await buildRunnerBundle(scratch, repo);
    const scriptedAgent = await esbuildBundle(
      join(repo, 'test/fixtures/scripted-agent/main.ts'),
      join(scratch, 'scripted-agent.mjs'),
    );
    const controllerBundle = await esbuildBundle(
      join(repo, 'test/chaos/controller-entry.ts'),
      join(scratch, 'controller.mjs'),
    );
    const nodeBundle = await esbuildBundle(
      join(repo, 'test/chaos/node-entry.ts'),
      join(scratch, 'node.mjs'),
    );
    const imageMap = { [DEFAULT_OPERATOR_IMAGE]: operatorImageFiles(runner, scriptedAgent, repo) };
    const logDir = join(scratch, 'logs');
    let incarnation = 0;
    return {
      cp,
      admin,
      auditLog: audit.logPath,
      logDir,
      podNode,
      startReplica: (name, options = {}) =>
        startReplica({
          bundle: controllerBundle,
          kubeconfig: kubeconfigs[name],
          namespace: NAMESPACE,
          identity: `chaos-${name}-${++incarnation}`,
          logDir,
          leaderElect: options.leaderElect ?? true,
          ...(options.failpoints ? { failpoints: options.failpoints } : {}),
        }),
      startNode: (name) =>
        startNodeChild({
          bundle: nodeBundle,
          controlPlane: cp,
          name,
          imageMap,
          dataDir: join(scratch, 'nodes', name),
          logDir,
        }),
      async stop() {
        admin.close();
        await cp.stop();
        if (!process.env.LORENZ_CHAOS_KEEP) await rm(scratch, { recursive: true, force: true });
      },
    };
  } catch (error) {
    admin.close();
    await cp.stop();
    throw error;
  }
}
