import { mkdir, mkdtemp, readFile, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';

/** A fresh real directory under the system tmp dir (canonical, so symlinked /tmp is fine). */
export async function makeTempDir(prefix = 'lorenz-ws-'): Promise<string> {
  return realpath(await mkdtemp(join(tmpdir(), prefix)));
}

export async function removeTempDir(path: string): Promise<void> {
  await rm(path, { recursive: true, force: true });
}

/**
 * A temp dir made before the file's tests (`'file'`) or before each test (`'test'`) and removed
 * after them. `ready` gets the new dir, to keep its path and lay out what the tests need in it.
 */
export function useTempDir(
  prefix: string,
  lifetime: 'file' | 'test',
  ready: (dir: string) => void | Promise<void>,
): void {
  let made: string | undefined;
  const [before, after] = lifetime === 'file' ? [beforeAll, afterAll] : [beforeEach, afterEach];
  before(async () => {
    made = await makeTempDir(prefix);
    await ready(made);
  });
  after(async () => {
    if (made !== undefined) await removeTempDir(made);
    made = undefined;
  });
}

/** Where an issue's hooks run in a test: `<base>/root/<identifier>`, made; `base` is their HOME. */
export interface IssueWorkspace {
  base: string;
  root: string;
  workspace: string;
}

export async function makeIssueWorkspace(
  base: string,
  identifier: string,
): Promise<IssueWorkspace> {
  const root = join(base, 'root');
  const workspace = join(root, identifier);
  await mkdir(workspace, { recursive: true });
  return { base, root, workspace };
}

/** An IssueWorkspace in a temp dir of `useTempDir`: its fields are set once the tests run. */
export function useIssueWorkspace(
  prefix: string,
  identifier: string,
  lifetime: 'file' | 'test' = 'file',
): Readonly<IssueWorkspace> {
  const place: IssueWorkspace = { base: '', root: '', workspace: '' };
  useTempDir(prefix, lifetime, async (dir) => {
    Object.assign(place, await makeIssueWorkspace(dir, identifier));
  });
  return place;
}

/** A process counts as alive unless it is gone or a zombie (PID 1 here may never reap it). */
export async function isAlive(pid: number): Promise<boolean> {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/** The pids a command printed, one per line, as `pid:<n>`. */
export function printedPids(output: string): number[] {
  return [...output.matchAll(/pid:(\d+)/g)].map((match) => Number(match[1]));
}

/**
 * An environment whose HOME has no profile, so `bash -lc` starts in milliseconds: timing
 * tests must not depend on how slow the machine's login profile is.
 */
export function quickLoginEnv(home: string): NodeJS.ProcessEnv {
  return { ...process.env, HOME: home };
}

/** The four hooks' hook_execution records, as `name:status`, in the order a run emits them. */
export const FOUR_HOOKS_RAN: readonly string[] = [
  'after_create',
  'before_run',
  'after_run',
  'before_remove',
].flatMap((hook) => [`${hook}:started`, `${hook}:completed`]);
