import { spawn, type ChildProcess } from 'node:child_process';
import { statSync } from 'node:fs';
import type { Readable, Writable } from 'node:stream';
import { shellEscape } from '../template/shell-escape.js';
import { oversizedArgument } from './exec-limits.js';
import { signalGroup } from './local-group.js';
import { exitWithin } from './pid-namespace.js';

/**
 * A command's process started ahead of the command: what a hook's start costs before bash
 * itself (Node forking, `nsenter` joining the run's PID namespace, the `sh` that merges the
 * output) is paid while the previous hook runs instead of on the way from one hook to the
 * next: a hook then costs ≈ 1.6 ms over a bare `bash -lc true` instead of ≈ 3.3.
 *
 * The standby is `sh` waiting on fd 3, a pipe from this process, in its own process group,
 * inside the namespace where there is one, as a command's process would be. `take` writes it
 * the command as a small program: change to the command's directory, then replace itself
 * with `bash -lc <command>`, stdout and stderr merged as local-run.ts merges them. The `sh`
 * acknowledges on fd 3 once it has read the program and before it runs it: a standby that a
 * previous hook killed (`kill -9 -1` inside the namespace) ends without that, and the
 * command is then started afresh, never reported as having failed.
 */
// `cat` rather than a loop of `read`: dash reads a byte a syscall, slow for a long hook.
const STANDBY_SCRIPT = 'p=$(cat <&3) || exit 1; [ -n "$p" ] || exit 0; printf . >&3; eval "$p"';

/**
 * Well under Linux's usual ARG_MAX (2 MiB: a quarter of an 8 MiB stack): a command and an
 * environment that are more are started by a spawn, whose E2BIG names the limit.
 */
const SAFE_EXEC_BYTES = 1024 * 1024;

/** How long an unused standby may take to leave before its group is killed. */
const DISCARD_WAIT_MS = 1000;

export interface TakenStandby {
  child: ChildProcess;
  /** Whether the standby read the command and started it: false means start it afresh. */
  acknowledged(): boolean;
}

export interface Standby {
  /** The standby as the command's process, or null when it cannot serve (gone, other env). */
  take(command: string, cwd: string, env: NodeJS.ProcessEnv): TakenStandby | null;
  /** Whether it still waits for a command (not taken, not gone). */
  waiting(): boolean;
  /** End an unused standby and wait for it to be gone. */
  discard(): Promise<void>;
}

function sameEnvironment(a: NodeJS.ProcessEnv, b: NodeJS.ProcessEnv): boolean {
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((key) => Object.hasOwn(b, key) && a[key] === b[key]);
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * The program a standby runs: the directory as `nsenter --wdns` (or a spawn's cwd) would
 * enter it, by its physical path, with OLDPWD as the command's environment has it (`cd`
 * would set it to the standby's own directory), then the command as local-run.ts runs it.
 */
function standbyProgram(command: string, cwd: string, env: NodeJS.ProcessEnv): string {
  const oldPwd = env.OLDPWD;
  return [
    `cd -P -- ${shellEscape(cwd)} || exit 1`,
    oldPwd === undefined ? 'unset OLDPWD' : `OLDPWD=${shellEscape(oldPwd)}`,
    `exec bash -lc ${shellEscape(command)} 2>&1 3<&-`,
    '',
  ].join('\n');
}

/**
 * Start a standby: `enter` is the argv prefix that joins the namespace (without a working
 * directory: the program enters it), `env` the environment every command it may serve has.
 */
export function startStandby(enter: readonly string[], environment: NodeJS.ProcessEnv): Standby {
  // As it is now: a command taking the standby later must have this very environment.
  const env = { ...environment };
  const envBytes = Object.entries(env).reduce(
    (sum, [key, value]) => sum + Buffer.byteLength(key) + Buffer.byteLength(value ?? '') + 2,
    0,
  );
  const argv = [...enter, '/bin/sh', '-c', STANDBY_SCRIPT];
  let child: ChildProcess | null;
  try {
    child = spawn(argv[0] ?? '/bin/sh', argv.slice(1), {
      cwd: '/',
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    });
  } catch {
    child = null;
  }
  let exited = child === null || child.pid === undefined;
  let acknowledged = false;
  const gone = new Promise<void>((resolve) => {
    if (child === null || exited) return resolve();
    child.once('exit', () => {
      exited = true;
      resolve();
    });
    child.once('error', () => {
      exited = true;
      resolve();
    });
  });
  // Waiting, a standby never keeps this process alive (its exit closes fd 3, which ends the
  // standby); taken, it does, as any command's process does.
  const handles = (child?.stdio ?? []) as ({ ref?: () => void; unref?: () => void } | null)[];
  const hold = (held: boolean): void => {
    if (held) child?.ref();
    else child?.unref();
    for (const handle of handles) (held ? handle?.ref : handle?.unref)?.call(handle);
  };
  hold(false);
  const control = child?.stdio[3] as (Readable & Writable) | undefined;
  control?.on('error', () => {});
  control?.on('data', () => {
    acknowledged = true;
  });
  let used = false;
  return {
    take(command, cwd, commandEnv) {
      if (used || exited || child === null || control === undefined || !control.writable)
        return null;
      // A directory that is not there, or a NUL byte (which the pipe would carry and `sh`
      // drop), fails as a fresh spawn reports it (spawnError), never runs another command.
      if (command.includes('\0') || cwd.includes('\0')) return null;
      // Too long for exec(2) (E2BIG), alone or with the environment: refused by the spawn,
      // which says which limit (hooks.ts), rather than by the `sh` at its exec.
      if (oversizedArgument(command) !== null) return null;
      if (envBytes + Buffer.byteLength(command) > SAFE_EXEC_BYTES) return null;
      if (!sameEnvironment(env, commandEnv) || !isDirectory(cwd)) return null;
      used = true;
      hold(true);
      control.end(standbyProgram(command, cwd, commandEnv));
      const taken = child;
      return { child: taken, acknowledged: () => acknowledged };
    },
    waiting: () => !used && !exited,
    async discard() {
      if (used) return;
      used = true;
      if (child === null || exited || child.pid === undefined) return;
      hold(true); // this process waits for it to be gone
      // An empty program: `sh` exits and nsenter reaps it. A SIGKILL to the group would leave
      // the `sh` to the namespace's init, which reaps nothing while it waits on its pipe.
      control?.end();
      // Not reaped yet (no exit event), so its group id is still its own to signal.
      if (!(await exitWithin(gone, DISCARD_WAIT_MS)) && !exited) {
        signalGroup(child.pid, 'SIGKILL');
        await gone;
      }
    },
  };
}
