// The chaos suite's killable children: controller replicas and process nodes, each a Node
// process with its output in a log file of its own, killed with SIGKILL when the suite says.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ControlPlane } from '../../hack/cluster/control-plane.js';
import type { ImageMap } from '../../hack/process-node/index.js';
import { FAILPOINTS_ENV } from '../../src/controller/runtime/failpoints.js';
import type { ReplicaArgs } from './controller-entry.js';
import type { NodeArgs } from './node-entry.js';

export interface Child {
  pid: number;
  logPath: string;
  /** Settles when the process is gone, with its exit signal (SIGKILL for a failpoint). */
  exited: Promise<NodeJS.Signals | number | null>;
  hasExited(): boolean;
  /** SIGKILL, now: no shutdown path runs. */
  kill(): Promise<void>;
  /** SIGTERM: the process's own shutdown. */
  stop(): Promise<void>;
}

export interface Replica extends Child {
  identity: string;
  /** Whether it died of its own failpoint rather than the suite's kill. */
  killedItself(): boolean;
}

export interface NodeChild extends Child {
  name: string;
}

async function spawnLogged(
  bundle: string,
  argument: object,
  logPath: string,
  env: NodeJS.ProcessEnv,
): Promise<{ child: ChildProcess; exited: Child['exited']; hasExited: () => boolean }> {
  await mkdir(join(logPath, '..'), { recursive: true });
  const fd = openSync(logPath, 'a');
  let child: ChildProcess;
  try {
    // setpriv --pdeathsig: a suite stopped by a signal takes its children with it.
    child = spawn(
      'setpriv',
      ['--pdeathsig', 'KILL', '--', process.execPath, bundle, JSON.stringify(argument)],
      {
        stdio: ['ignore', fd, fd],
        env,
      },
    );
  } finally {
    closeSync(fd);
  }
  let done = false;
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) => {
    child.once('exit', (code, signal) => {
      done = true;
      resolve(signal ?? code);
    });
  });
  return { child, exited, hasExited: () => done };
}

const stopWith =
  (child: ChildProcess, exited: Promise<unknown>, signal: NodeJS.Signals) =>
  async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill(signal);
    await exited;
  };

export async function startReplica(options: {
  bundle: string;
  kubeconfig: string;
  namespace: string;
  identity: string;
  leaderElect: boolean;
  logDir: string;
  failpoints?: string;
}): Promise<Replica> {
  const args: ReplicaArgs = {
    kubeconfig: options.kubeconfig,
    namespace: options.namespace,
    identity: options.identity,
    leaderElect: options.leaderElect,
  };
  const env = { ...process.env, [FAILPOINTS_ENV]: options.failpoints ?? '' };
  const logPath = join(options.logDir, `${options.identity}.log`);
  const { child, exited, hasExited } = await spawnLogged(options.bundle, args, logPath, env);
  let killedBySuite = false;
  const kill = stopWith(child, exited, 'SIGKILL');
  return {
    identity: options.identity,
    pid: child.pid ?? -1,
    logPath,
    exited,
    hasExited,
    killedItself: () => hasExited() && !killedBySuite && child.signalCode === 'SIGKILL',
    kill: async () => {
      killedBySuite = !hasExited();
      await kill();
    },
    stop: stopWith(child, exited, 'SIGTERM'),
  };
}

/** Every process below `pid` (children, their children…), read from /proc. */
async function descendants(pid: number): Promise<number[]> {
  const parents = new Map<number, number[]>();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    // pid (comm) state ppid …: comm may hold spaces and parentheses; split after the last ')'.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (!Number.isFinite(ppid)) continue;
    parents.set(ppid, [...(parents.get(ppid) ?? []), Number(entry)]);
  }
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    for (const child of parents.get(queue.shift() as number) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

export async function startNodeChild(options: {
  bundle: string;
  controlPlane: ControlPlane;
  name: string;
  imageMap: ImageMap;
  dataDir: string;
  logDir: string;
}): Promise<NodeChild> {
  const args: NodeArgs = {
    server: options.controlPlane.server,
    kubeconfig: options.controlPlane.kubeconfigPath,
    caCertPath: options.controlPlane.caCertPath,
    caKeyPath: options.controlPlane.caKeyPath,
    name: options.name,
    dataDir: options.dataDir,
    imageMap: options.imageMap,
  };
  const logPath = join(options.logDir, `node-${options.name}.log`);
  const { child, exited, hasExited } = await spawnLogged(
    options.bundle,
    args,
    logPath,
    process.env,
  );
  const pid = child.pid ?? -1;
  await waitForLine(logPath, `node ${options.name} ready`, exited);
  return {
    name: options.name,
    pid,
    logPath,
    exited,
    hasExited,
    // The whole machine at once: the node and every container process it started, taken
    // before the first kill so that none is re-parented out of sight.
    async kill() {
      const all = [pid, ...(await descendants(pid))];
      for (const each of all) {
        try {
          process.kill(each, 'SIGKILL');
        } catch {
          // already gone
        }
      }
      await exited;
    },
    stop: stopWith(child, exited, 'SIGTERM'),
  };
}

async function waitForLine(path: string, line: string, exited: Promise<unknown>): Promise<void> {
  let gone = false;
  void exited.then(() => (gone = true));
  const deadline = Date.now() + 60_000;
  for (;;) {
    const text = await readFile(path, 'utf8').catch(() => '');
    if (text.includes(line)) return;
    if (gone || Date.now() > deadline) {
      throw new Error(`${path} never said "${line}"; it ends:\n${text.slice(-2000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
