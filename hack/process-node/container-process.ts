import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { openLogWriter } from './log-file.js';

export interface ExitStatus {
  exitCode: number;
  /** Set when the process died of a signal (exitCode is then 128 + its number). */
  signal?: NodeJS.Signals;
}

export interface ContainerProcess {
  pid: number | undefined;
  exited: Promise<ExitStatus>;
  /** Signals the whole process group (the container). */
  signal(sig: NodeJS.Signals): void;
}

function killGroup(pid: number | undefined, sig: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, sig);
  } catch {
    // ESRCH: the group is already gone.
  }
}

/**
 * Starts one container: `unshare --mount` gives it a private mount namespace in which the
 * generated script binds the volumes and execs the command, so the process keeps unshare's
 * pid and leads its own process group. When the main process exits, whatever it left
 * behind in its group is killed, as a runtime does when a container's pid 1 ends.
 */
export function spawnContainer(options: {
  scriptPath: string;
  argv: string[];
  env: Map<string, string>;
  logPath: string;
}): ContainerProcess {
  const log = openLogWriter(options.logPath);
  const child = spawn(
    'unshare',
    ['--mount', '--propagation', 'private', '--', 'sh', options.scriptPath, ...options.argv],
    {
      env: Object.fromEntries(options.env),
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  child.stdout.on('data', (chunk: Buffer) => log.write('stdout', chunk));
  child.stderr.on('data', (chunk: Buffer) => log.write('stderr', chunk));
  const exited = new Promise<ExitStatus>((resolve) => {
    let status: ExitStatus | undefined;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      log.close();
      resolve(status ?? { exitCode: 128 });
    };
    child.on('error', (err) => {
      log.write('stderr', Buffer.from(`process-node: cannot start container: ${err.message}\n`));
      status = { exitCode: 128 };
      finish();
    });
    child.on('exit', (code, signal) => {
      status = signal
        ? { exitCode: 128 + (constants.signals[signal] ?? 0), signal }
        : { exitCode: code ?? 0 };
      killGroup(child.pid, 'SIGKILL');
      // Output still buffered in the pipes is drained on 'close'; a grandchild that escaped
      // the group could hold them open, so do not wait for it forever.
      const fallback = setTimeout(finish, 2000);
      child.once('close', () => {
        clearTimeout(fallback);
        finish();
      });
    });
  });
  return {
    pid: child.pid,
    exited,
    signal: (sig) => killGroup(child.pid, sig),
  };
}
