import { spawn, type ChildProcess } from 'node:child_process';
import { readFile, readdir, readlink } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * A PID namespace that every hook of one executor runs in, so that nothing a hook starts can
 * outlive the run, not even a process that left the hook's group (`setsid cmd &`): when the
 * namespace's first process dies, the kernel kills every process left in it.
 *
 * The namespace is held by `unshare --pid --fork --kill-child sh -c 'read'`: its `sh` is the
 * namespace's init, waiting on a pipe from this process. Closing the pipe (or this process
 * dying, even by SIGKILL) ends `sh` and so the whole namespace. It has its own /proc, so
 * pids inside a hook are the namespace's. Hooks join it with
 * `nsenter`, which forks the hook inside and passes its exit status on. Without root a user
 * namespace comes along (`--map-current-user`, so the hook still sees its own uid); with root
 * the hook keeps root's real capabilities. Where neither works (no util-linux, a seccomp
 * profile that forbids unshare, as Kubernetes' RuntimeDefault does) the probe returns null
 * and hooks run as before, in their own process group only.
 */
export interface PidNamespace {
  /**
   * The argv prefix that runs a command inside the namespace, in `cwd`; with null, in the
   * namespace's root directory (a standby, which enters the command's directory itself).
   */
  enter(cwd: string | null): string[];
  /** SIGTERM everything inside, give it `graceMs`, then end the namespace (SIGKILL to all). */
  end(graceMs: number): Promise<void>;
}

/** How long the holder may take to report that the namespace is up. */
const START_TIMEOUT_MS = 2000;
/** After the holder is gone the kernel still needs a moment to tear the namespace down. */
const TEARDOWN_WAIT_MS = 2000;
const READY = 'lorenz-pid-namespace-ready';
/** The holder prints this first when its nsenter knows `--wdns` (util-linux ≥ 2.38). */
const WDNS = 'lorenz-nsenter-wdns';

/**
 * The holder's script, run as the namespace's init. It asks nsenter, off this process's way
 * to the first hook, whether it has `--wdns`: `--wd` opens the directory before entering the
 * mount namespace, so a hook's cwd lies outside the namespace's tree, the kernel's getcwd
 * answers `(unreachable)/…`, and libc then finds the path by reading every directory up to /
 * (sh, bash and every program in the login profile that asks: ≈ 6 ms a hook here, more where
 * a parent directory is big). `--wdns` changes directory by path once inside.
 */
const HOLDER_SCRIPT = `case "$(nsenter --help 2>&1)" in *--wdns*) echo ${WDNS} ;; esac; echo ${READY}; read _`;

function unshareArguments(): string[] {
  const root = process.getuid?.() === 0;
  return [
    ...(root ? [] : ['--map-current-user']),
    '--pid',
    '--fork',
    '--kill-child',
    // Its own /proc, so that `$!` and `ps` agree inside a hook; outer mounts still show up.
    '--mount-proc',
    '--propagation',
    'slave',
    'sh',
    '-c',
    HOLDER_SCRIPT,
  ];
}

/** What the holder printed once READY; null when it failed or took too long. */
function holderReady(holder: ChildProcess): Promise<{ wdns: boolean } | null> {
  return new Promise((resolve) => {
    let seen = '';
    const timer = setTimeout(() => resolve(null), START_TIMEOUT_MS);
    const settle = (ready: { wdns: boolean } | null) => {
      clearTimeout(timer);
      resolve(ready);
    };
    holder.stdout?.setEncoding('utf8');
    holder.stdout?.on('data', (chunk: string) => {
      seen += chunk;
      if (seen.includes(READY)) settle({ wdns: seen.includes(WDNS) });
    });
    holder.once('error', () => settle(null));
    holder.once('exit', () => settle(null));
  });
}

/** Outer pids of the processes in the namespace `inode` names (`pid:[…]`). */
async function members(inode: string): Promise<number[]> {
  let entries: string[];
  try {
    entries = await readdir('/proc');
  } catch {
    return [];
  }
  const found: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if ((await readlink(`/proc/${entry}/ns/pid`)) === inode) found.push(Number(entry));
    } catch {
      // exited while we looked, or not ours to inspect
    }
  }
  return found;
}

function signalAll(pids: number[], signal: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}

async function waitEmpty(inode: string, withinMs: number, except: number[]): Promise<boolean> {
  const deadline = performance.now() + withinMs;
  for (;;) {
    const left = (await members(inode)).filter((pid) => !except.includes(pid));
    if (left.length === 0) return true;
    if (performance.now() >= deadline) return false;
    await sleep(20);
  }
}

/** True when `exited` resolves within `ms`; the timer never outlives the wait. */
export async function exitWithin(exited: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const inTime = await Promise.race([
    exited.then(() => true),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), ms);
    }),
  ]);
  clearTimeout(timer);
  return inTime;
}

/**
 * The holder's children (its init): one small read where `members` reads every process's
 * namespace link, which on a busy machine costs milliseconds before the first hook. Null
 * where the kernel has no `children` file (CONFIG_PROC_CHILDREN).
 */
async function holderChildren(pid: number): Promise<number[] | null> {
  try {
    const text = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8');
    const pids = text.split(' ').filter((word) => /^\d+$/.test(word));
    return pids.length === 1 ? pids.map(Number) : null;
  } catch {
    return null;
  }
}

/**
 * Whether the namespace holds only its init, read from the namespace's own /proc (mounted by
 * --mount-proc, seen through the init's root): it lists the members alone, so the common end
 * (every hook done, nothing left behind) needs no scan of the machine's processes. False
 * when that cannot be read: then `members` decides.
 */
async function onlyInitLeft(init: readonly number[]): Promise<boolean> {
  if (init.length !== 1) return false;
  try {
    const inside = (await readdir(`/proc/${init[0]}/root/proc`)).filter((entry) =>
      /^\d+$/.test(entry),
    );
    return inside.length === 1 && inside[0] === '1';
  } catch {
    return false;
  }
}

/** Start the holder; null when this machine does not let us have a PID namespace. */
export async function startPidNamespace(): Promise<PidNamespace | null> {
  let holder: ChildProcess;
  try {
    holder = spawn('unshare', unshareArguments(), { stdio: ['pipe', 'pipe', 'ignore'] });
  } catch {
    return null;
  }
  holder.on('error', () => {}); // reported through holderReady
  const exited = new Promise<void>((resolve) => holder.once('exit', () => resolve()));
  const pid = holder.pid;
  const ready = await holderReady(holder);
  if (ready === null || pid === undefined) {
    holder.kill('SIGKILL');
    return null;
  }
  let inode: string;
  try {
    inode = await readlink(`/proc/${pid}/ns/pid_for_children`);
  } catch {
    holder.kill('SIGKILL');
    return null;
  }
  // Right after READY the namespace holds its init (the holder's `sh`) and nothing else.
  const init = (await holderChildren(pid)) ?? (await members(inode));
  // The holder must never keep this process alive: `end` is the orderly way out, and this
  // process exiting closes the pipe, which ends the namespace too.
  holder.unref();
  holder.stdout?.destroy();
  (holder.stdin as (NodeJS.WritableStream & { unref?: () => void }) | null)?.unref?.();
  const root = process.getuid?.() === 0;
  const namespaces = [
    `--pid=/proc/${pid}/ns/pid_for_children`,
    `--mount=/proc/${pid}/ns/mnt`,
    ...(root ? [] : [`--user=/proc/${pid}/ns/user`, '--preserve-credentials']),
  ];
  let ending: Promise<void> | undefined;
  return {
    // Joining a mount namespace moves to its root directory: --wdns (else --wd) moves back.
    enter: (cwd) => [
      'nsenter',
      ...namespaces,
      ...(cwd === null ? [] : [ready.wdns ? `--wdns=${cwd}` : `--wd=${cwd}`]),
      '--',
    ],
    end(graceMs) {
      ending ??= (async () => {
        // Everything but the init gets a SIGTERM and the grace (an init ignores SIGTERM).
        const left = (await onlyInitLeft(init))
          ? []
          : (await members(inode)).filter((member) => !init.includes(member));
        signalAll(left, 'SIGTERM');
        if (left.length > 0) await waitEmpty(inode, graceMs, init);
        // The init ends with its pipe, and the kernel kills whatever is left in the namespace
        // before the init is reaped: the holder's exit is the namespace's end. Awaited rather
        // than polled (a poll costs up to its interval on every run's way out).
        holder.stdin?.end();
        if (await exitWithin(exited, TEARDOWN_WAIT_MS)) return;
        // The holder did not exit in time: SIGKILL whatever is left and wait as before.
        const lingering = await members(inode);
        if (lingering.length > 0) {
          signalAll(lingering, 'SIGKILL');
          await waitEmpty(inode, TEARDOWN_WAIT_MS, []);
        }
      })();
      return ending;
    },
  };
}
