import { existsSync } from 'node:fs';
import { chmod, mkdir, open, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { spawnContainer, type ContainerProcess } from './container-process.js';
import { baseEnv, expandVars, resolveEnv } from './env.js';
import { parseLogLine, renderEntry } from './log-file.js';
import { containerMounts, imageBindsFor, mountScript, runAsFor } from './mount-script.js';
import type { ObjectSource } from './objects.js';
import type { ContainerState } from './pod-status.js';
import { PodConfigError, type ImageMap } from './types.js';
import type { VolumeHosts } from './volumes.js';

export interface RunContext {
  pod: V1Pod;
  podDir: string;
  hosts: VolumeHosts;
  objects: ObjectSource;
  apiServer: string;
  imageMap: ImageMap;
}

export type Terminated = Extract<ContainerState, { terminated: unknown }>['terminated'];

export interface Attempt {
  process: ContainerProcess;
  containerID: string;
  startedAt: string;
  logPath: string;
  finished: Promise<Terminated>;
}

const MAX_MESSAGE = 4096;
const FALLBACK_LINES = 80;
const FALLBACK_BYTES = 2048;

async function readPrefix(path: string, max: number): Promise<string> {
  const handle = await open(path, 'r');
  try {
    const buf = Buffer.alloc(max);
    const { bytesRead } = await handle.read(buf, 0, max, 0);
    return buf.subarray(0, bytesRead).toString('utf8');
  } finally {
    await handle.close();
  }
}

/** The tail of the log, for terminationMessagePolicy FallbackToLogsOnError. */
async function logTail(logPath: string): Promise<string> {
  const lines = (await readFile(logPath, 'utf8')).split('\n');
  const text = lines
    .map((l) => parseLogLine(l))
    .filter((e) => e !== undefined)
    .slice(-FALLBACK_LINES)
    .map((e) => renderEntry(e, false))
    .join('');
  return Buffer.from(text).subarray(-FALLBACK_BYTES).toString('utf8');
}

/**
 * Prepares and starts one attempt of a container: env, command, mounts, a per-attempt
 * termination-log file and log file. Throws PodConfigError when the spec cannot be run.
 */
export async function startAttempt(
  ctx: RunContext,
  container: V1Container,
  attempt: number,
): Promise<Attempt> {
  const runAs = runAsFor(container, ctx.pod.spec?.securityContext);
  const base = baseEnv(ctx.pod, ctx.apiServer, runAs?.uid);
  const vars = await resolveEnv(ctx.pod, container, ctx.objects, base);
  if (!container.command?.length) {
    throw new PodConfigError(
      'ContainerCannotRun',
      `container "${container.name}" has no command: the process node runs the host filesystem in place of image ${container.image ?? ''} and knows no image entrypoint; set command`,
      false,
    );
  }
  const expand = (s: string) => expandVars(s, vars);
  const argv = [...container.command, ...(container.args ?? [])].map(expand);
  const mounts = containerMounts(
    container,
    ctx.hosts,
    imageBindsFor(ctx.imageMap, container.image),
    expand,
  );
  for (const m of mounts) {
    if (m.createIfMissing && !existsSync(m.source))
      await mkdir(m.source, { recursive: true, mode: 0o777 });
  }
  const dir = join(ctx.podDir, 'containers', container.name, String(attempt));
  await mkdir(dir, { recursive: true });
  const terminationLog = join(dir, 'termination-log');
  await writeFile(terminationLog, '', { mode: 0o666 });
  // Any runAsUser may write its message (the mode passed to writeFile is masked by umask).
  await chmod(terminationLog, 0o666);
  const scriptPath = join(dir, 'start.sh');
  await writeFile(
    scriptPath,
    mountScript({
      mounts,
      terminationLog: {
        host: terminationLog,
        path: container.terminationMessagePath || '/dev/termination-log',
      },
      workingDir: container.workingDir,
      runAs,
    }),
  );
  const logDir = join(ctx.podDir, 'logs', container.name);
  await mkdir(logDir, { recursive: true });
  const logPath = join(logDir, `${attempt}.log`);
  const startedAt = new Date().toISOString();
  const proc = spawnContainer({ scriptPath, argv, env: vars, logPath });
  const containerID = `process://${ctx.pod.metadata?.uid ?? ''}/${container.name}/${attempt}`;
  const finished = proc.exited.then(async (exit): Promise<Terminated> => {
    let message = await readPrefix(terminationLog, MAX_MESSAGE).catch(() => '');
    if (
      !message &&
      exit.exitCode !== 0 &&
      container.terminationMessagePolicy === 'FallbackToLogsOnError'
    ) {
      message = await logTail(logPath).catch(() => '');
    }
    return {
      exitCode: exit.exitCode,
      ...(exit.signal ? { signal: exit.exitCode - 128 } : {}),
      reason: exit.exitCode === 0 ? 'Completed' : 'Error',
      ...(message ? { message } : {}),
      startedAt,
      finishedAt: new Date().toISOString(),
      containerID,
    };
  });
  return { process: proc, containerID, startedAt, logPath, finished };
}
