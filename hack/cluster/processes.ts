// Long-running child processes of the control plane (etcd, kube-apiserver, …): output to a
// log file, killed with the process that started them, stopped with a grace period.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import { readFile } from 'node:fs/promises';

export interface ManagedProcess {
  name: string;
  pid: number;
  logPath: string;
  /** Settles when the process has exited (never rejects). */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  hasExited(): boolean;
  /** SIGTERM, then SIGKILL after graceMs; resolves once it is gone. */
  stop(graceMs?: number): Promise<void>;
  /** SIGKILL at once (a crash: no shutdown path runs); resolves once it is gone. */
  kill(): Promise<void>;
}

let pdeathsigSupported: boolean | undefined;

// setpriv --pdeathsig makes the kernel SIGKILL the child when its parent dies, so a crashed
// test worker or a killed dev-cluster daemon never leaves an apiserver behind.
function canUsePdeathsig(): boolean {
  pdeathsigSupported ??=
    spawnSync('setpriv', ['--pdeathsig', 'KILL', '--', 'true'], { stdio: 'ignore' }).status === 0;
  return pdeathsigSupported;
}

export function startProcess(
  name: string,
  binary: string,
  args: string[],
  logPath: string,
): ManagedProcess {
  const logFd = openSync(logPath, 'a');
  const [command, commandArgs] = canUsePdeathsig()
    ? ['setpriv', ['--pdeathsig', 'KILL', '--', binary, ...args]]
    : [binary, args];
  let child: ChildProcess;
  try {
    child = spawn(command, commandArgs, { stdio: ['ignore', logFd, logFd] });
  } finally {
    closeSync(logFd);
  }
  let done = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => {
      done = true;
      resolve({ code, signal });
    });
    child.once('error', () => {
      done = true;
      resolve({ code: null, signal: null });
    });
  });
  const stop = async (graceMs = 5_000): Promise<void> => {
    if (done) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  };
  const kill = async (): Promise<void> => {
    if (done) return;
    child.kill('SIGKILL');
    await exited;
  };
  return { name, pid: child.pid ?? -1, logPath, exited, hasExited: () => done, stop, kill };
}

export async function tailFile(path: string, lines = 30): Promise<string> {
  try {
    const text = await readFile(path, 'utf8');
    return text.trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** A readable failure: which process, where its log is, and how that log ends. */
export async function describeFailure(process: ManagedProcess, what: string): Promise<string> {
  return `${what}: ${process.name} (pid ${process.pid}); log ${process.logPath}, last lines:\n${await tailFile(process.logPath)}`;
}
