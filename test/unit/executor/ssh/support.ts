import {
  chmod,
  copyFile,
  link,
  mkdir,
  readdir,
  readFile,
  realpath,
  rename,
  rm,
} from 'node:fs/promises';
import { execFile } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createSshExecutor, type SshExecutor } from '../../../../src/executor/ssh/index.js';
import type { Executor } from '../../../../src/executor/types.js';
import { runIssueLifecycle, type LifecycleOptions } from '../../../../src/workspace/lifecycle.js';
import { parseConfig } from '../../../../src/workflow/config.js';
import type { LorenzEvent } from '../../../../src/workflow/events.js';
import { normalizeIssue } from '../../../../src/workflow/issue.js';
import type { Sshd } from '../../../support/fakes/sshd.js';

const run = promisify(execFile);

/** An SSH executor for the test sshd; `overrides` swap the key, the known_hosts, the port. */
export async function sshExecutor(
  sshd: Sshd,
  overrides: { keyFile?: string; knownHosts?: string; port?: number; timeoutMs?: number } = {},
): Promise<SshExecutor> {
  return createSshExecutor({
    target: {
      host: { user: sshd.user, host: sshd.host, port: overrides.port ?? sshd.port },
      privateKey: await readFile(overrides.keyFile ?? sshd.keyFile),
      knownHosts: overrides.knownHosts ?? sshd.knownHosts,
    },
    timeoutMs: overrides.timeoutMs ?? 10_000,
  });
}

/**
 * Runs issue ENG/9 through the lifecycle of the front matter `front` on `executor`, keeping
 * the events; `overrides` replace any option. LORENZ_WORKSPACE_ROOT is left out of the
 * environment, so that the root is the front matter's.
 */
export async function runLifecycle(
  executor: Executor,
  front: Record<string, unknown>,
  overrides: Partial<LifecycleOptions> = {},
) {
  const events: LorenzEvent[] = [];
  const { config } = parseConfig(front);
  const env = { ...process.env };
  delete env.LORENZ_WORKSPACE_ROOT;
  const summary = await runIssueLifecycle({
    config,
    issue: normalizeIssue({ identifier: 'ENG/9', title: 'Nine' }),
    executor,
    emit: (event) => events.push(event),
    attempt: null,
    env,
    ...overrides,
  });
  return { summary, events };
}

/** Whether `path` exists as the worker user sees it. */
export async function existsOnWorker(sshd: Sshd, path: string): Promise<boolean> {
  return (await sshd.asWorker(`test -e ${path} && echo yes || echo no`)).trim() === 'yes';
}

/** A number no other test uses, to find a test's own processes on the shared worker user. */
export function marker(): string {
  return String(900_000 + Math.floor(Math.random() * 99_999));
}

/** Polls until `check` holds (processes take a moment to go after a kill). */
export async function eventually(check: () => Promise<boolean>, withinMs = 5000): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * The scripted agent as the worker user can run it: a clean clone may sit in a directory
 * only its owner can enter (`mktemp -d`), so node and the bundle are put (hard-linked when
 * the file system allows, else copied) in a directory under the temp dir anyone can read.
 */
export async function workerReadableAgent(repo: string): Promise<string> {
  const directory = join(tmpdir(), `lorenz-worker-bin-${process.getuid?.() ?? 0}`);
  await mkdir(directory, { recursive: true });
  await chmod(directory, 0o755);
  const place = async (source: string, name: string, mode: number): Promise<string> => {
    const target = join(directory, name);
    const temporary = `${target}.${process.pid}`;
    await rm(temporary, { force: true });
    await link(await realpath(source), temporary).catch(() => copyFile(source, temporary));
    await chmod(temporary, mode);
    await rename(temporary, target);
    return target;
  };
  const node = await place(process.execPath, 'node', 0o755);
  const agent = await place(join(repo, 'dist/scripted-agent.mjs'), 'scripted-agent.mjs', 0o644);
  return `${node} ${agent}`;
}

/**
 * The pids of the processes on the host (this machine: the test sshd is on loopback) whose
 * environment carries LORENZ_RUN_MARKER=`runMarker`, read from /proc as the test's root.
 */
export async function markedProcesses(runMarker: string): Promise<number[]> {
  const wanted = `LORENZ_RUN_MARKER=${runMarker}`;
  const found: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const environ = await readFile(`/proc/${entry}/environ`, 'utf8').catch(() => '');
    if (environ.split('\0').includes(wanted)) found.push(Number(entry));
  }
  return found;
}

/** The pids of the worker user's live processes whose command line starts with `text`. */
export async function pidsOf(sshd: Sshd, text: string): Promise<number[]> {
  const { stdout } = await run('ps', ['-u', sshd.user, '-o', 'pid=,stat=,args=']);
  return stdout.split('\n').flatMap((line) => {
    const [, pid, stat, args] = /^\s*(\d+)\s+(\S+)\s+(.*)$/.exec(line) ?? [];
    return args?.startsWith(text) && !stat?.startsWith('Z') ? [Number(pid)] : [];
  });
}
