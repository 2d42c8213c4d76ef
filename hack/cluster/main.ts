// The dev-cluster daemon: one Node process that holds a control plane (and, when the process
// node is built in, a node) until SIGTERM. hack/dev-cluster.sh bundles it with esbuild and
// runs it in the background; it reports readiness through <state>/ready.env.
import { readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { installCrds, startControlPlane, type ControlPlane } from './control-plane.js';
import { DEFAULT_CONTROLLERS } from './components.js';

export type StartProcessNode = (options: {
  controlPlane: ControlPlane;
  name?: string;
  imageMap?: Record<string, Record<string, string>>;
  dataDir?: string;
  log?: (line: string) => void;
}) => Promise<{ stop(): Promise<void> }>;

export interface DaemonOptions {
  stateDir: string;
  /** Where crds/*.yaml are looked for. */
  repoRoot: string;
  startProcessNode?: StartProcessNode;
  /** JSON file: image ref -> { container path: host path } (see CONTRIBUTING.md). */
  imageMapPath?: string;
}

const log = (message: string) =>
  console.log(`[dev-cluster] ${new Date().toISOString()} ${message}`);

async function crdFiles(repoRoot: string): Promise<string[]> {
  const dir = join(repoRoot, 'crds');
  const names = await readdir(dir).catch(() => [] as string[]);
  return names.filter((name) => /\.ya?ml$/.test(name)).map((name) => join(dir, name));
}

async function readImageMap(
  path: string | undefined,
): Promise<Record<string, Record<string, string>> | undefined> {
  if (!path) return undefined;
  return JSON.parse(await readFile(path, 'utf8')) as Record<string, Record<string, string>>;
}

/** ready.env: sourced by dev-cluster.sh; values are single-quoted for the shell. */
export function renderReadyEnv(values: Record<string, string>): string {
  const quote = (value: string) => `'${value.replace(/'/g, `'\\''`)}'`;
  return Object.entries(values)
    .map(([key, value]) => `${key}=${quote(value)}\n`)
    .join('');
}

/**
 * For workloads that run in the cluster (`make e2e-local`: the chart's Deployment on the real
 * node): the Deployment and ReplicaSet loops, and an apiserver that Pods can reach, listening
 * on every address and advertising `advertise` (the real node's address, routed to from the
 * Pod network), so that the `kubernetes` Service's endpoint is not loopback. Off by default:
 * the dev cluster otherwise listens on 127.0.0.1 only.
 */
export function inClusterOptions(advertise: string | undefined): {
  extraApiserverArgs?: string[];
  controllers?: string[];
} {
  if (!advertise) return {};
  return {
    extraApiserverArgs: ['--bind-address=0.0.0.0', `--advertise-address=${advertise}`],
    controllers: [...DEFAULT_CONTROLLERS, 'deployment-controller', 'replicaset-controller'],
  };
}

export async function runDaemon(options: DaemonOptions): Promise<void> {
  const readyPath = join(options.stateDir, 'ready.env');
  await rm(readyPath, { force: true });
  log('starting control plane');
  const controlPlane = await startControlPlane({
    dir: join(options.stateDir, 'cluster'),
    keep: true,
    ...inClusterOptions(process.env.LORENZ_APISERVER_ADVERTISE),
  });
  let node: { stop(): Promise<void> } | undefined;
  let stopping: Promise<void> | undefined;
  const shutdown = (signal: string) =>
    (stopping ??= (async () => {
      log(`${signal}: stopping`);
      await rm(readyPath, { force: true });
      await node?.stop().catch((error: unknown) => log(`node stop failed: ${String(error)}`));
      await controlPlane.stop();
      log('stopped');
      process.exit(0);
    })());
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  try {
    log(`control plane ready at ${controlPlane.server}`);
    if (options.startProcessNode) {
      node = await options.startProcessNode({
        controlPlane,
        imageMap: await readImageMap(options.imageMapPath),
        dataDir: join(options.stateDir, 'node'),
        log: (line) => log(`[node] ${line}`),
      });
      log('process node started');
    } else if (process.env.LORENZ_DEV_NODE === 'real') {
      log('no process node: hack/real-node.sh runs a kubelet against this control plane');
    } else {
      log(
        'no process node in this build (hack/process-node/index.ts missing): Pods will stay Pending',
      );
    }
    const crds = await crdFiles(options.repoRoot);
    await installCrds(controlPlane, crds);
    if (crds.length > 0) log(`installed ${crds.length} CRD file(s)`);
    const ready = renderReadyEnv({
      SERVER: controlPlane.server,
      KUBECONFIG_PATH: controlPlane.kubeconfigPath,
      BIN_DIR: controlPlane.tools.binDir,
      PROCESS_NODE: node ? 'yes' : 'no',
    });
    await writeFile(`${readyPath}.tmp`, ready);
    await rename(`${readyPath}.tmp`, readyPath);
    log('ready');
  } catch (error) {
    log(`start failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    await node?.stop().catch(() => undefined);
    await controlPlane.stop();
    process.exit(1);
  }
}

/** Entry used by the bundle: `dev-cluster.mjs serve <stateDir>`. */
export async function main(argv: string[], startProcessNode?: StartProcessNode): Promise<void> {
  const [command, stateDir] = argv;
  if (command !== 'serve' || !stateDir) {
    console.error(
      'usage: dev-cluster.mjs serve <state-dir>   (use hack/dev-cluster.sh up|down|status)',
    );
    process.exit(2);
  }
  try {
    await runDaemon({
      stateDir: resolve(stateDir),
      repoRoot: process.env.LORENZ_REPO_ROOT ?? process.cwd(),
      // --node=real: the kubelet of hack/real-node.sh is the node; the process node would
      // bind every Pod to itself first.
      startProcessNode: process.env.LORENZ_DEV_NODE === 'real' ? undefined : startProcessNode,
      imageMapPath: process.env.LORENZ_IMAGE_MAP || undefined,
    });
  } catch (error) {
    log(`start failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(1);
  }
}
