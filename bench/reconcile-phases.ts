// The benchmark's measurements, one function per figure family. Each phase works in a
// namespace of its own and starts (and stops) the controller it measures.
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { IssueRun, Workflow } from '../src/api/index.js';
import {
  DEFAULT_OPERATOR_IMAGE,
  OPERATOR_IMAGE_BUNDLE_PATH,
} from '../src/controller/shared/constants.js';
import { startProcessNode } from '../hack/process-node/index.js';
import {
  auditMark,
  countWrites,
  CONTROLLER_USER,
  JOB_CONTROLLER_USER,
  type WriteCount,
} from './reconcile-audit.js';
import {
  collection,
  createNamespace,
  createWorkflow,
  issueRunBody,
  jobBody,
  memoryOf,
  startControllerChild,
  startJobController,
  until,
  workflowText,
  type BenchCluster,
  type ControllerChild,
} from './reconcile-env.js';
import {
  createAndWaitForPods,
  inPool,
  sequenceNames,
  watchPodOwners,
  type LoadFigures,
} from './reconcile-load.js';

export interface Bundles {
  controller: string;
  runner: string;
  scriptedAgent: string;
}

export interface LoadSettings {
  count: number;
  concurrency: number;
  timeoutMs: number;
  /** BENCH_PROFILE: profile the controller during the load (its CPU figure then includes the profiler's). */
  profile?: boolean;
}

const condition =
  (object: { status?: { conditions?: { type: string; status: string }[] } }) => (type: string) =>
    object.status?.conditions?.find((c) => c.type === type)?.status;

export async function workflowReady(
  cluster: BenchCluster,
  ns: string,
  name: string,
  type = 'Ready',
): Promise<void> {
  await until(
    `Workflow ${ns}/${name} to be ${type}`,
    async () => {
      const workflow = await cluster.admin.request<Workflow>({
        path: `${collection.workflows(ns)}/${name}`,
      });
      return condition(workflow)(type) === 'True' ? true : undefined;
    },
    60_000,
  );
}

export interface WritesFigures {
  audit: WriteCount;
  counted: number;
  countedLog: string[];
  outcome: string;
}

/** Step 4: one single-slot run with four hooks to Succeeded on the process node. */
export async function measureWritesPerRun(
  cluster: BenchCluster,
  bundles: Bundles,
): Promise<WritesFigures> {
  const ns = 'bench-writes';
  const { admin } = cluster;
  await createNamespace(admin, ns);
  const node = await startProcessNode({
    controlPlane: cluster.cp,
    imageMap: { [DEFAULT_OPERATOR_IMAGE]: { [OPERATOR_IMAGE_BUNDLE_PATH]: bundles.runner } },
  });
  const controller = await startControllerChild(
    bundles.controller,
    cluster.controllerKubeconfig,
    ns,
  );
  try {
    await createWorkflow(admin, ns, 'bench', workflowText(bundles.scriptedAgent));
    await workflowReady(cluster, ns, 'bench');
    const mark = await auditMark(cluster.auditLog);
    const before = (await controller.writes()).writes;
    await admin.request({
      method: 'POST',
      path: collection.issueRuns(ns),
      body: issueRunBody('bench')('single-1'),
    });
    const run = await until(
      'IssueRun single-1 to finish',
      async () => {
        const current = await admin.request<IssueRun>({
          path: `${collection.issueRuns(ns)}/single-1`,
        });
        return condition(current)('Finished') === 'True' ? current : undefined;
      },
      180_000,
    );
    // The Workflow's run counts are written in batches: wait for the one that counts this run.
    await until(
      'the Workflow to count the run',
      async () => {
        const workflow = await admin.request<Workflow>({
          path: `${collection.workflows(ns)}/bench`,
        });
        const runs = workflow.status?.runs as Record<string, number> | undefined;
        return (runs?.succeeded ?? 0) + (runs?.failed ?? 0) >= 1 ? true : undefined;
      },
      30_000,
    ).catch((error: unknown) => process.stderr.write(`[bench] ${String(error)}\n`));
    await sleep(1500);
    const after = await controller.writes();
    const counted = after.writes - before;
    return {
      audit: await countWrites(cluster.auditLog, CONTROLLER_USER, ns, mark),
      counted,
      countedLog: counted > 0 ? after.log.slice(-counted) : [],
      outcome: `${run.status?.phase ?? '?'}${run.status?.reason ? ` (${run.status.reason})` : ''}`,
    };
  } finally {
    await controller.stop();
    await node.stop();
  }
}

export interface LoadRound {
  figures: LoadFigures;
  rssMiB: number;
  peakMiB: number;
  /** RSS after the warm-up object, before the load. */
  idleRssMiB: number;
  /**
   * CPU seconds the controller used from the first create until it was idle again (under
   * 2 % of a core for a second): the Pods and the status writes that trail them.
   */
  cpuSeconds: number;
  writes: WriteCount;
  /** The controller's CPU profile of the load (BENCH_PROFILE) as .cpuprofile JSON, and its sampled allocations. */
  profile?: { cpu: string; allocations: string };
}

/** Step 2: N IssueRuns at once through the Lorenz controller; IssueRun → Pod exists. */
export async function lorenzLoad(
  cluster: BenchCluster,
  bundles: Bundles,
  settings: LoadSettings,
  round: number,
): Promise<LoadRound> {
  const ns = `bench-lorenz-${round}`;
  const { admin } = cluster;
  await createNamespace(admin, ns);
  const controller = await startControllerChild(
    bundles.controller,
    cluster.controllerKubeconfig,
    ns,
  );
  const watch = await watchPodOwners(admin, ns);
  try {
    await createWorkflow(admin, ns, 'bench', workflowText(bundles.scriptedAgent));
    await workflowReady(cluster, ns, 'bench');
    // One run first, so that connections and caches are warm on both sides alike.
    await admin.request({
      method: 'POST',
      path: collection.issueRuns(ns),
      body: issueRunBody('bench')('warmup'),
    });
    if ((await watch.waitForAll(['warmup'], 60_000)).length > 0)
      throw new Error('the warm-up IssueRun got no Pod within 60 s');
    const mark = await auditMark(cluster.auditLog);
    const idle = await memoryOf(controller.pid);
    if (settings.profile) await controller.profileStart();
    const cpuBefore = await cpuSeconds(controller.pid);
    const figures = await createAndWaitForPods({
      client: admin,
      watch,
      path: collection.issueRuns(ns),
      names: sequenceNames('run', settings.count),
      make: issueRunBody('bench'),
      concurrency: settings.concurrency,
      timeoutMs: settings.timeoutMs,
    });
    const memory = await memoryOf(controller.pid);
    // The status writes that trail the Pods are the load's too: counted until the
    // controller is idle again, on both sides alike.
    await settled(controller.pid, SETTLE_MS);
    const cpu = (await cpuSeconds(controller.pid)) - cpuBefore;
    const profile = settings.profile ? await controller.profileStop() : undefined;
    const writes = await countWrites(cluster.auditLog, CONTROLLER_USER, ns, mark);
    return {
      figures,
      ...memory,
      idleRssMiB: idle.rssMiB,
      cpuSeconds: cpu,
      writes,
      ...(profile ? { profile } : {}),
    };
  } finally {
    watch.stop();
    await controller.stop();
  }
}

/** Step 3: N Jobs at once through kube-controller-manager's Job loop; Job → Pod exists. */
export async function jobLoad(
  cluster: BenchCluster,
  settings: LoadSettings,
  round: number,
  rate: { qps: number; burst: number },
): Promise<LoadRound> {
  const ns = `bench-jobs-${round}-qps${rate.qps}`;
  const { admin } = cluster;
  await createNamespace(admin, ns);
  const manager = startJobController(cluster, rate.qps, rate.burst);
  const watch = await watchPodOwners(admin, ns);
  try {
    await admin.request({ method: 'POST', path: collection.jobs(ns), body: jobBody('warmup') });
    if ((await watch.waitForAll(['warmup'], 90_000)).length > 0)
      throw new Error(`the warm-up Job got no Pod within 90 s (log: ${manager.logPath})`);
    const mark = await auditMark(cluster.auditLog);
    const idle = await memoryOf(manager.pid);
    const cpuBefore = await cpuSeconds(manager.pid);
    const figures = await createAndWaitForPods({
      client: admin,
      watch,
      path: collection.jobs(ns),
      names: sequenceNames('job', settings.count),
      make: jobBody,
      concurrency: settings.concurrency,
      timeoutMs: settings.timeoutMs,
    });
    const memory = await memoryOf(manager.pid);
    await settled(manager.pid, SETTLE_MS);
    const cpu = (await cpuSeconds(manager.pid)) - cpuBefore;
    const writes = await countWrites(cluster.auditLog, JOB_CONTROLLER_USER, ns, mark);
    await removeJobs(cluster, ns);
    return { figures, ...memory, idleRssMiB: idle.rssMiB, cpuSeconds: cpu, writes };
  } finally {
    watch.stop();
    await manager.stop();
  }
}

/**
 * Deletes the phase's Jobs and Pods while their controller still runs: Job Pods carry a
 * tracking finalizer only the Job controller removes, and a later Job controller would
 * otherwise spend its start-up on them.
 */
async function removeJobs(cluster: BenchCluster, ns: string): Promise<void> {
  const { admin } = cluster;
  // Clean-up only: a 504 on 10 000 objects means the apiserver is still deleting them.
  const tolerate = (error: unknown) => process.stderr.write(`[bench] clean-up: ${String(error)}\n`);
  await admin
    .request({
      method: 'DELETE',
      path: collection.jobs(ns),
      body: { propagationPolicy: 'Background' },
    })
    .catch(tolerate);
  await admin.request({ method: 'DELETE', path: `/api/v1/namespaces/${ns}/pods` }).catch(tolerate);
  await until(
    `the Pods in ${ns} to be gone`,
    async () => {
      const pods = await admin.request<{ items: unknown[] }>({
        path: `/api/v1/namespaces/${ns}/pods`,
      });
      return pods.items.length === 0 ? true : undefined;
    },
    600_000,
  ).catch((error: unknown) => process.stderr.write(`[bench] ${String(error)}\n`));
}

interface CacheMemory {
  /** Once the controller has settled (under 2 % of a core for a second). */
  rssMiB: number;
  /** AT_REST_MS later, nothing having happened in between. */
  restedRssMiB: number;
  peakMiB: number;
  anonMiB: number;
  /** After a full GC: the V8 heap still in use, and the RSS left. */
  heapUsedMiB: number;
  /** V8 heap reserved, and memory outside it (Buffers, strings held by C++), after GC. */
  heapTotalMiB: number;
  externalMiB: number;
  rssAfterGcMiB: number;
}

export interface CacheFigures {
  count: number;
  live: CacheMemory;
  restarted: CacheMemory;
  statusWrites: number;
}

/**
 * How long a controller that has settled is left at rest before its RSS is read a second
 * time: V8's memory reducer starts compacting an idle heap about 8 s after the allocations
 * stopped; a controller holding a cache spends most of its life so.
 */
const AT_REST_MS = 20_000;

async function cacheMemory(controller: ControllerChild): Promise<CacheMemory> {
  const before = await memoryOf(controller.pid);
  await sleep(AT_REST_MS);
  const rested = await memoryOf(controller.pid);
  const collected = await controller.collected();
  // The breakdown behind the figures, for finding where memory goes.
  process.stderr.write(
    `[bench] heap spaces after GC, MiB physical (used): ${collected.spaces}\n` +
      `[bench] ${await anonymousBreakdown(controller.pid)}\n`,
  );
  return {
    ...before,
    restedRssMiB: rested.rssMiB,
    heapUsedMiB: collected.heapUsedMiB,
    heapTotalMiB: collected.heapTotalMiB,
    externalMiB: collected.externalMiB,
    rssAfterGcMiB: collected.rssMiB,
  };
}

/**
 * smaps in brief: anonymous RSS and LazyFree (pages given back with MADV_FREE that the kernel
 * has not reclaimed yet: counted in RSS, free for the taking), and the largest anonymous
 * mappings by resident size.
 */
async function anonymousBreakdown(pid: number): Promise<string> {
  const smaps = await readFile(`/proc/${pid}/smaps`, 'utf8').catch(() => '');
  const mappings: { name: string; rssKiB: number; anonKiB: number; lazyKiB: number }[] = [];
  for (const block of smaps.split(/\n(?=[0-9a-f]+-[0-9a-f]+ )/)) {
    const header = block.slice(0, block.indexOf('\n'));
    const field = (name: string) =>
      Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(block)?.[1] ?? 0);
    const [range, , , , , name = ''] = header.split(/\s+/);
    const [from = '0', to = '0'] = (range ?? '').split('-');
    const sizeMiB = (parseInt(to, 16) - parseInt(from, 16)) / 2 ** 20;
    mappings.push({
      name: `${name || 'anon'}(${sizeMiB < 1 ? `${(sizeMiB * 1024).toFixed(0)}K` : `${sizeMiB.toFixed(0)}M`})`,
      rssKiB: field('Rss'),
      anonKiB: field('Anonymous'),
      lazyKiB: field('LazyFree'),
    });
  }
  const sum = (key: 'rssKiB' | 'anonKiB' | 'lazyKiB') =>
    (mappings.reduce((total, m) => total + m[key], 0) / 1024).toFixed(0);
  // Grouped by mapping name and size: V8 pages are many equal mappings, malloc arenas few.
  const groups = new Map<string, number>();
  for (const m of mappings) groups.set(m.name, (groups.get(m.name) ?? 0) + m.anonKiB);
  const largest = [...groups]
    .filter(([, anonKiB]) => anonKiB > 0)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 8)
    .map(([name, anonKiB]) => `${name} ${(anonKiB / 1024).toFixed(1)}`)
    .join(', ');
  return `smaps: Rss ${sum('rssKiB')} MiB, Anonymous ${sum('anonKiB')} MiB, LazyFree ${sum('lazyKiB')} MiB; largest anonymous (MiB): ${largest}`;
}

/** CPU seconds a process has used (utime + stime), from /proc/<pid>/stat. */
export async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** How long a load's controller may take to go idle after its last Pod (settled). */
const SETTLE_MS = 30_000;

/** Waits until the process is (nearly) idle: under 2 % of a core over one second. */
export async function settled(pid: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = await cpuSeconds(pid);
  while (Date.now() < deadline) {
    await sleep(1000);
    const now = await cpuSeconds(pid);
    if (now - last < 0.02) return;
    last = now;
  }
}

/** How long the cache step may wait per run cached, at most (see cacheRss). */
const CACHE_WAIT_MS_PER_RUN = { writes: 20, settle: 2, relist: 3 } as const;

/**
 * Step 5: RSS with N IssueRuns in the controller's cache. Their Workflow is suspended, so
 * each run gets one status write (Pending, WorkflowSuspended) and no Pod. Measured twice:
 * after the runs arrived one by one, and in a fresh controller that lists them all at start.
 */
export async function cacheRss(
  cluster: BenchCluster,
  bundles: Bundles,
  count: number,
  concurrency: number,
): Promise<CacheFigures> {
  const ns = 'bench-cache';
  const { admin } = cluster;
  // Bounds, not waits: they grow with the count (BENCH_CACHE_COUNT=100000 takes many minutes
  // on 2 cores).
  const waits = {
    writesMs: Math.max(300_000, count * CACHE_WAIT_MS_PER_RUN.writes),
    settleMs: Math.max(60_000, count * CACHE_WAIT_MS_PER_RUN.settle),
    relistMs: Math.max(120_000, count * CACHE_WAIT_MS_PER_RUN.relist),
  };
  await createNamespace(admin, ns);
  await createWorkflow(admin, ns, 'parked', workflowText(bundles.scriptedAgent), {
    suspend: true,
  });
  const start = () => startControllerChild(bundles.controller, cluster.controllerKubeconfig, ns);
  const first = await start();
  let statusWrites: number;
  let live;
  try {
    // A suspended Workflow is not Ready; its configuration is still checked.
    await workflowReady(cluster, ns, 'parked', 'ConfigValid');
    const base = (await first.writes()).writes;
    const body = issueRunBody('parked');
    await inPool(sequenceNames('parked', count), concurrency, async (name) => {
      await admin.request({ method: 'POST', path: collection.issueRuns(ns), body: body(name) });
    });
    await until(
      `the controller to write the status of ${count} parked runs`,
      async () => {
        const done = (await first.writes()).writes - base;
        return done >= count ? done : undefined;
      },
      waits.writesMs,
    ).catch((error: unknown) => process.stderr.write(`[bench] ${String(error)}\n`));
    await settled(first.pid, waits.settleMs);
    statusWrites = (await first.writes()).writes - base;
    live = await cacheMemory(first);
  } finally {
    await first.stop();
  }
  const second = await start();
  try {
    await settled(second.pid, waits.relistMs);
    return { count, live, restarted: await cacheMemory(second), statusWrites };
  } finally {
    await second.stop();
  }
}
