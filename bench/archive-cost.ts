// The archiver's own costs, for `npm run bench:archive` (bench/archive.ts prints them beside
// issue 26's targets):
//
//   - controller CPU and apiserver writes per run, and the controller's RSS, with the archive
//     on (SQLite, the chart's default) and with `--archive-dsn off`, for the same workload:
//     N IssueRuns of a suspended Workflow (so no Pod starts and the figures are the
//     archiver's, not a runner's), created with the finalizer in the body as the poller
//     creates them, held in the cache, then all deleted, each deletion waiting for its
//     archive. The controller is a child process of its own (bench/reconcile-env.ts), so
//     its CPU (/proc/PID/stat) and RSS are its own;
//   - one 32 MiB Pod log, archived, read through the real CLI, `lorenz logs RUN
//     --archive-dsn sqlite:PATH`, as a whole process from start to exit.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import type { IssueRun } from '../src/api/index.js';
import { openSqliteArchive } from '../src/archive/sqlite.js';
import { DEFAULT_LOG_CAP_BYTES } from '../src/archive/types.js';
import { ARCHIVE_FINALIZER } from '../src/controller/shared/constants.js';
import {
  collection,
  createNamespace,
  createWorkflow,
  issueRunBody,
  memoryOf,
  repo,
  startBenchCluster,
  startControllerChild,
  until,
  workflowText,
  type BenchCluster,
} from './reconcile-env.js';
import { esbuildBundle } from '../test/support/operator-build.js';
import { auditMark, countWrites, CONTROLLER_USER } from './reconcile-audit.js';
import { inPool, sequenceNames } from './reconcile-load.js';
import { cpuSeconds, settled, workflowReady } from './reconcile-phases.js';
import { summarizeCpuProfile } from './cpu-profile.js';

/** BENCH_PROFILE=N: the controller's CPU profile of each mode, its top N entries (the CPU figure then includes the profiler's). */
const profileTop = Math.max(0, Math.floor(Number(process.env.BENCH_PROFILE ?? 0)) || 0);

const execFileAsync = promisify(execFile);

export interface ModeFigures {
  mode: 'on' | 'off';
  runs: number;
  /** The controller's writes (the apiserver's audit log) over the whole workload, per run. */
  writesPerRun: number;
  /** Those writes by `verb resource[/subresource] code`. */
  writes: Record<string, number>;
  /** Controller CPU (user + system) over the whole workload, per run, in ms. */
  cpuMsPerRun: number;
  /** RSS with the N runs in the cache, and after all were deleted (and archived). */
  rssCachedMiB: number;
  rssAfterMiB: number;
  /** Wall time from the first deletion to the last IssueRun gone. */
  deleteAllMs: number;
}

async function oneMode(
  cluster: BenchCluster,
  controllerBundle: string,
  scriptedAgent: string,
  mode: 'on' | 'off',
  runs: number,
  concurrency: number,
  say: (line: string) => void,
): Promise<ModeFigures> {
  const ns = `bench-archiver-${mode}`;
  const { admin } = cluster;
  await createNamespace(admin, ns);
  await createWorkflow(admin, ns, 'parked', workflowText(scriptedAgent), { suspend: true });
  const env: NodeJS.ProcessEnv = { ...process.env };
  if (mode === 'on') env.BENCH_ARCHIVE_DSN = `sqlite:${join(cluster.scratch, `${ns}.db`)}`;
  else delete env.BENCH_ARCHIVE_DSN;
  const controller = await startControllerChild(
    controllerBundle,
    cluster.controllerKubeconfig,
    ns,
    env,
  );
  try {
    await workflowReady(cluster, ns, 'parked', 'ConfigValid');
    await settled(controller.pid, 30_000);
    const writes0 = (await controller.writes()).writes;
    const mark = await auditMark(cluster.auditLog);
    if (profileTop > 0) await controller.profileStart();
    const cpu0 = await cpuSeconds(controller.pid);
    const body = issueRunBody('parked');
    const names = sequenceNames('parked', runs);
    say(`archive ${mode}: creating ${runs} IssueRuns`);
    await inPool(names, concurrency, async (name) => {
      const created = body(name);
      // As the poller creates them: the finalizer is in the body, so it costs no write.
      const metadata =
        mode === 'on' ? { ...created.metadata, finalizers: [ARCHIVE_FINALIZER] } : created.metadata;
      await admin.request({
        method: 'POST',
        path: collection.issueRuns(ns),
        body: { ...created, metadata },
      });
    });
    await until(
      `the controller to write the status of ${runs} parked runs`,
      async () => ((await controller.writes()).writes - writes0 >= runs ? true : undefined),
      600_000,
      // A machine too slow to write them all in time still gives its figures, said so.
    ).catch((error: unknown) => say(`archive ${mode}: ${String(error)}`));
    await settled(controller.pid, 120_000);
    await controller.collected();
    const rssCachedMiB = (await memoryOf(controller.pid)).rssMiB;
    say(`archive ${mode}: deleting them (with the archive on, each waits for its archive)`);
    const t0 = performance.now();
    await inPool(names, concurrency, async (name) => {
      await admin.request({ method: 'DELETE', path: `${collection.issueRuns(ns)}/${name}` });
    });
    await until(
      `all ${runs} IssueRuns to be gone`,
      async () => {
        const list = await admin.request<{ items: IssueRun[] }>({
          path: `${collection.issueRuns(ns)}?limit=1`,
        });
        return list.items.length === 0 ? true : undefined;
      },
      1_200_000,
    );
    const deleteAllMs = performance.now() - t0;
    await settled(controller.pid, 120_000);
    const writes = await countWrites(cluster.auditLog, CONTROLLER_USER, ns, mark);
    const cpu = (await cpuSeconds(controller.pid)) - cpu0;
    if (profileTop > 0)
      for (const line of summarizeCpuProfile((await controller.profileStop()).cpu, profileTop))
        say(`archive ${mode}: ${line}`);
    await controller.collected();
    const rssAfterMiB = (await memoryOf(controller.pid)).rssMiB;
    return {
      mode,
      runs,
      writesPerRun: writes.total / runs,
      writes: Object.fromEntries(writes.breakdown),
      cpuMsPerRun: (cpu * 1000) / runs,
      rssCachedMiB,
      rssAfterMiB,
      deleteAllMs,
    };
  } finally {
    await controller.stop();
  }
}

/** The same workload with the archive off, then on (off first: the base). */
export async function archiverCost(
  cluster: BenchCluster,
  runs: number,
  say: (line: string) => void,
): Promise<ModeFigures[]> {
  {
    const [controllerBundle, scriptedAgent] = await Promise.all([
      esbuildBundle(
        join(repo, 'bench/reconcile-controller.ts'),
        join(cluster.scratch, 'controller.mjs'),
      ),
      esbuildBundle(
        join(repo, 'test/fixtures/scripted-agent/main.ts'),
        join(cluster.scratch, 'scripted-agent.mjs'),
      ),
    ]);
    const figures: ModeFigures[] = [];
    for (const mode of ['off', 'on'] as const) {
      figures.push(await oneMode(cluster, controllerBundle, scriptedAgent, mode, runs, 50, say));
      say(`archive ${mode}: ${JSON.stringify(figures.at(-1))}`);
    }
    return figures;
  }
}

export { startBenchCluster, type BenchCluster };

export interface CliLogFigures {
  bytes: number;
  /** Wall time of each whole `lorenz logs` process, per output mode. */
  textMs: number[];
  jsonMs: number[];
  printedBytes: { text: number; json: number };
}

/**
 * A 32 MiB transcript archived in SQLite, then printed by `lorenz logs` (dist/cli/lorenz) with
 * the user's kubeconfig `kubeconfig`.
 */
export async function cliLogs(
  dir: string,
  kubeconfig: string,
  repeats = 3,
): Promise<CliLogFigures> {
  const path = join(dir, 'cli-logs.db');
  const store = await openSqliteArchive(path);
  const uid = 'bench-logs-uid';
  const line = `${JSON.stringify({
    type: 'session_notification',
    message: {
      turn: 1,
      update: {
        sessionUpdate: 'agent_message_chunk',
        content: { type: 'text', text: 'Reading the failing test and the login form. '.repeat(4) },
      },
    },
    slot: 0,
  })}\n`;
  const piece = line.repeat(Math.floor((256 * 1024) / line.length));
  const pieceBytes = Buffer.byteLength(piece);
  let offset = 0;
  try {
    await store.putRun({
      uid,
      namespace: 'bench',
      name: 'big-log',
      workflow: 'board',
      issueId: 'i-1',
      issueIdentifier: 'ENG-1',
      issueTitle: 'A long transcript',
      phase: 'Succeeded',
      attempts: 1,
      createdAt: new Date().toISOString(),
      usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
      object: {},
      deletedAt: new Date().toISOString(),
    });
    for (; offset + pieceBytes <= 32 * 1024 * 1024; offset += pieceBytes) {
      await store.appendLog({
        runUid: uid,
        podUid: 'bench-logs-pod',
        slot: 0,
        attempt: 1,
        offset,
        data: piece,
        capBytes: DEFAULT_LOG_CAP_BYTES,
      });
    }
  } finally {
    await store.close();
  }
  const cli = join(repo, 'dist', 'cli', 'lorenz');
  // The CLI looks for the run in the cluster first (as a user's would): the bench's
  // apiserver answers that there is no such IssueRun, and the archive is read.
  const once = async (output: 'text' | 'json') => {
    const t0 = performance.now();
    const { stdout } = await execFileAsync(
      cli,
      ['logs', 'big-log', '-n', 'bench', '--archive-dsn', `sqlite:${path}`, '--output', output],
      {
        maxBuffer: 256 * 1024 * 1024,
        encoding: 'buffer',
        env: { ...process.env, KUBECONFIG: kubeconfig },
      },
    );
    return { ms: performance.now() - t0, bytes: stdout.length };
  };
  const figures: CliLogFigures = {
    bytes: offset,
    textMs: [],
    jsonMs: [],
    printedBytes: { text: 0, json: 0 },
  };
  await once('text'); // warm-up: the page cache, the bundle read once
  for (let i = 0; i < repeats; i++) {
    const text = await once('text');
    const json = await once('json');
    figures.textMs.push(text.ms);
    figures.jsonMs.push(json.ms);
    figures.printedBytes = { text: text.bytes, json: json.bytes };
  }
  return figures;
}
