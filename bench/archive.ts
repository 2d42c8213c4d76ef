// `npm run bench:archive`: the run archive's stores against issue 26's targets. A benchmark,
// not a test: it prints figures beside their targets and never fails on them.
//
//   1. write cost: putRun of one run as the archiver writes it, on the store's durable
//      settings (SQLite: WAL, synchronous=FULL);
//   2. `lorenz get runs` over BENCH_RUNS archived runs: 200 listRuns queries of the kinds the
//      CLI makes (first page of all namespaces or of the three a user may see, one namespace,
//      one Workflow, one issue), p50/p99 (goal p99 ≤ 100 ms);
//   3. one 32 MiB Pod log written as 256 KiB pieces, then read whole through readLog
//      (goal ≤ 1 s).
//
// On SQLite (a file in a temp directory) always; on PostgreSQL too: the empty database that
// LORENZ_BENCH_PG_URL names, else a server the bench starts on loopback (test/support/postgres.ts).
//
//   4. the archiver's own cost (bench/archive-cost.ts): controller CPU and writes per run and
//      its RSS with BENCH_ARCHIVER_RUNS runs, archive on vs off (goal ≤ 2 ms CPU per run more,
//      no writes more than the finalizer's removal, RSS within 10 %);
//   5. a 32 MiB transcript through `lorenz logs --archive-dsn` as a whole process (goal ≤ 1 s;
//      needs `npm run build`).
//
//   BENCH_RUNS           archived runs to seed (100000)
//   BENCH_ARCHIVER_RUNS  IssueRuns through the archiver, on and off (10000)
//   BENCH_PHASES         which parts run, comma-separated: stores,archiver,logs (all)
//   BENCH_PROFILE        N: the controller's CPU profile in the archiver part, top N entries (off)
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { openArchive, maskDsn } from '../src/archive/dsn.js';
import { openSqliteArchive } from '../src/archive/sqlite.js';
import { startPostgres, type TestPostgres } from '../test/support/postgres.js';
import type { ArchiveStore, RunQuery, RunRecord } from '../src/archive/types.js';
import { DEFAULT_LOG_CAP_BYTES } from '../src/archive/types.js';
import { archiverCost, cliLogs, startBenchCluster, type BenchCluster } from './archive-cost.js';
import { say } from './report.js';

const PHASES_RUN = new Set(
  (process.env.BENCH_PHASES ?? 'stores,archiver,logs').split(',').map((phase) => phase.trim()),
);
const ARCHIVER_RUNS = Math.max(
  100,
  Math.floor(Number(process.env.BENCH_ARCHIVER_RUNS ?? 10_000)) || 10_000,
);

const RUNS = Math.max(1000, Math.floor(Number(process.env.BENCH_RUNS ?? 100_000)) || 100_000);
const NAMESPACES = 10;
const WORKFLOWS = 20;
const RUNS_PER_ISSUE = 4;
const QUERIES = 200;
const LOG_BYTES = 32 * 1024 * 1024;
const PIECE_BYTES = 256 * 1024;

/** Nearest-rank percentile (p in 0..100). */
function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return (
    sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ??
    NaN
  );
}

/** A deterministic pseudo-random sequence, so that runs of the bench compare. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const START = Date.parse('2026-01-01T00:00:00Z');
const PHASES = ['Succeeded', 'Succeeded', 'Succeeded', 'Failed', 'Running'];

/** Run i, with an object the size of a real IssueRun's (conditions, slots, hook records). */
function seedRun(i: number): RunRecord {
  const issue = Math.floor(i / RUNS_PER_ISSUE);
  const phase = PHASES[i % PHASES.length] ?? 'Succeeded';
  const createdAt = new Date(START + i * 60_000).toISOString();
  const hooks = ['after_create', 'before_run', 'after_run'].map((hook) => ({
    hook,
    exitCode: 0,
    durationMs: 1234,
    output: 'npm ci\n'.repeat(40),
  }));
  return {
    uid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    namespace: `team-${i % NAMESPACES}`,
    name: `eng-${issue}-${i % RUNS_PER_ISSUE}`,
    workflow: `wf-${(i * 7) % WORKFLOWS}`,
    issueId: `issue-id-${issue}`,
    issueIdentifier: `ENG-${issue}`,
    issueTitle: `Issue number ${issue}`,
    issueState: phase === 'Succeeded' ? 'Done' : 'In Progress',
    phase,
    reason:
      phase === 'Failed' ? 'HookFailed' : phase === 'Succeeded' ? 'IssueCompleted' : undefined,
    attempts: 1 + (i % 3),
    createdAt,
    branch: `lorenz/eng-${issue}`,
    usage: { inputTokens: 1000 + i, outputTokens: 200, totalTokens: 1200 + i },
    object: {
      metadata: { name: `eng-${issue}`, namespace: `team-${i % NAMESPACES}`, labels: { a: 'b' } },
      spec: {
        workflowRef: { name: `wf-${(i * 7) % WORKFLOWS}` },
        issue: { id: `issue-id-${issue}` },
      },
      status: {
        phase,
        conditions: [
          { type: 'Ready', status: 'True', reason: 'Started', lastTransitionTime: createdAt },
        ],
        slots: [{ slot: 0, attempt: 1, phase, hooks }],
      },
    },
    ...(i % 2 === 0 ? { deletedAt: new Date(START + i * 60_000 + 3_600_000).toISOString() } : {}),
  };
}

async function seed(store: ArchiveStore, concurrency: number): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < RUNS; i += concurrency) {
    const batch = [];
    for (let j = i; j < Math.min(RUNS, i + concurrency); j++) batch.push(store.putRun(seedRun(j)));
    await Promise.all(batch);
    if ((i / concurrency) % 500 === 0) say(`${store.kind}: seeded ${i}/${RUNS}`);
  }
  return performance.now() - t0;
}

/** ms per putRun of one more run (upserting over seeded ones, as the archiver's rewrites do). */
async function writeCost(store: ArchiveStore): Promise<number[]> {
  const times: number[] = [];
  for (let k = 0; k < 200; k++) {
    const t0 = performance.now();
    await store.putRun(seedRun(RUNS - 1 - k));
    times.push(performance.now() - t0);
  }
  return times;
}

type Kind =
  | 'first page, all namespaces'
  | 'first page, 3 allowed namespaces'
  | 'by namespace'
  | 'by workflow'
  | 'by issue';

function queryOf(kind: Kind, random: () => number): RunQuery {
  const pick = (n: number) => Math.floor(random() * n);
  switch (kind) {
    case 'first page, all namespaces':
      return { limit: 100 };
    case 'first page, 3 allowed namespaces': {
      // What the read API asks for a user whose RBAC lets them see three namespaces.
      const first = pick(NAMESPACES);
      return { limit: 100, namespaces: [0, 3, 7].map((k) => `team-${(first + k) % NAMESPACES}`) };
    }
    case 'by namespace':
      return { limit: 100, namespaces: [`team-${pick(NAMESPACES)}`] };
    case 'by workflow':
      return { limit: 100, workflow: `wf-${pick(WORKFLOWS)}` };
    case 'by issue':
      return { limit: 100, issue: `ENG-${pick(RUNS / RUNS_PER_ISSUE)}` };
  }
}

const KINDS: Kind[] = [
  'first page, all namespaces',
  'first page, 3 allowed namespaces',
  'by namespace',
  'by workflow',
  'by issue',
];

async function listTimes(store: ArchiveStore): Promise<Map<Kind | 'all', number[]>> {
  const random = rng(26);
  const times = new Map<Kind | 'all', number[]>(KINDS.map((kind) => [kind, []]));
  times.set('all', []);
  // Warm the caches and prepared statements once per kind, then time.
  for (const kind of KINDS) await store.listRuns(queryOf(kind, random));
  for (let q = 0; q < QUERIES; q++) {
    const kind = KINDS[q % KINDS.length] ?? 'by issue';
    const t0 = performance.now();
    const page = await store.listRuns(queryOf(kind, random));
    const ms = performance.now() - t0;
    if (page.runs.length === 0) throw new Error(`bench: ${kind} found no runs`);
    times.get(kind)?.push(ms);
    times.get('all')?.push(ms);
  }
  return times;
}

async function logFigures(
  store: ArchiveStore,
): Promise<{ writeMs: number; readMs: number; bytes: number; entries: number }> {
  const line = `${JSON.stringify({ type: 'session_update', update: { kind: 'agent_message_chunk', text: 'x'.repeat(180) } })}\n`;
  const piece = line.repeat(Math.floor(PIECE_BYTES / line.length));
  const pieceBytes = Buffer.byteLength(piece);
  const runUid = seedRun(0).uid;
  const t0 = performance.now();
  for (let offset = 0; offset < LOG_BYTES; offset += pieceBytes) {
    await store.appendLog({
      runUid,
      podUid: 'bench-pod',
      slot: 0,
      attempt: 1,
      offset,
      data: piece,
      capBytes: DEFAULT_LOG_CAP_BYTES,
    });
  }
  const writeMs = performance.now() - t0;
  const t1 = performance.now();
  let bytes = 0;
  let entries = 0;
  for await (const entry of store.readLog(runUid)) {
    entries++;
    if (entry.kind === 'data') bytes += Buffer.byteLength(entry.piece.data);
  }
  return { writeMs, readMs: performance.now() - t1, bytes, entries };
}

const ms = (v: number) => `${v.toFixed(1)} ms`;
const ratio = (v: number, goal: number) => `${(v / goal).toFixed(2)}×`;

async function benchStore(
  label: string,
  open: () => Promise<ArchiveStore>,
  seedStore: () => Promise<ArchiveStore>,
  concurrency: number,
) {
  say(`${label}: seeding ${RUNS} runs`);
  const seeding = await seedStore();
  const seedMs = await seed(seeding, concurrency);
  await seeding.close();
  const store = await open();
  try {
    const writes = await writeCost(store);
    const lists = await listTimes(store);
    say(`${label}: writing and reading a 32 MiB log`);
    const log = await logFigures(store);
    console.log(`\n### ${label} (${store.location})\n`);
    console.log(
      `seeded ${RUNS} runs in ${(seedMs / 1000).toFixed(1)} s (${(seedMs / RUNS).toFixed(3)} ms/run)`,
    );
    console.log(
      `putRun (durable, one run): p50 ${ms(percentile(writes, 50))}, p99 ${ms(percentile(writes, 99))}\n`,
    );
    console.log('| listRuns (limit 100) | queries | p50 | p99 | goal (p99) | p99 / goal |');
    console.log('|---|---|---|---|---|---|');
    for (const [kind, times] of lists) {
      const p99 = percentile(times, 99);
      console.log(
        `| ${kind === 'all' ? 'all kinds' : kind} | ${times.length} | ${ms(percentile(times, 50))} | ${ms(p99)} | ≤ 100 ms | ${ratio(p99, 100)} |`,
      );
    }
    console.log('\n| 32 MiB log (256 KiB pieces) | figure | goal | figure / goal |');
    console.log('|---|---|---|---|');
    console.log(`| appendLog, whole log | ${ms(log.writeMs)} | — | — |`);
    console.log(
      `| readLog, whole log | ${ms(log.readMs)} | ≤ 1000 ms | ${ratio(log.readMs, 1000)} |`,
    );
    console.log(
      `| read back | ${(log.bytes / 1024 / 1024).toFixed(1)} MiB in ${log.entries} entries | 32 MiB | — |`,
    );
    return store.location;
  } finally {
    await store.close();
  }
}

async function benchArchiver(cluster: BenchCluster): Promise<void> {
  say(`archiver: ${ARCHIVER_RUNS} IssueRuns with the archive off, then on (SQLite)`);
  const [off, on] = await archiverCost(cluster, ARCHIVER_RUNS, say);
  if (!off || !on) return;
  const pct = (a: number, b: number) => `${(((a - b) / b) * 100).toFixed(1)} %`;
  console.log(
    `\n### The archiver (${ARCHIVER_RUNS} IssueRuns created with the finalizer, cached, deleted)\n`,
  );
  console.log('| figure | archive off | archive on | on − off | goal |');
  console.log('|---|---|---|---|---|');
  console.log(
    `| controller CPU per run | ${on.cpuMsPerRun > 0 ? off.cpuMsPerRun.toFixed(2) : '—'} ms | ${on.cpuMsPerRun.toFixed(2)} ms | ${(on.cpuMsPerRun - off.cpuMsPerRun).toFixed(2)} ms | ≤ 2 ms more |`,
  );
  console.log(
    `| controller writes per run | ${off.writesPerRun.toFixed(2)} | ${on.writesPerRun.toFixed(2)} | ${(on.writesPerRun - off.writesPerRun).toFixed(2)} | the finalizer's removal (1) |`,
  );
  console.log(
    `| RSS, ${ARCHIVER_RUNS} runs in the cache | ${off.rssCachedMiB.toFixed(0)} MiB | ${on.rssCachedMiB.toFixed(0)} MiB | ${pct(on.rssCachedMiB, off.rssCachedMiB)} | within 10 % |`,
  );
  console.log(
    `| RSS, all ${ARCHIVER_RUNS} deleted (and archived) | ${off.rssAfterMiB.toFixed(0)} MiB | ${on.rssAfterMiB.toFixed(0)} MiB | ${pct(on.rssAfterMiB, off.rssAfterMiB)} | within 10 % |`,
  );
  for (const figures of [off, on]) {
    const breakdown = Object.entries(figures.writes)
      .map(([what, count]) => `${what} ×${count}`)
      .join(', ');
    console.log(`| writes, archive ${figures.mode} | ${breakdown} | | | |`);
  }
  console.log(
    `| deleting all, until the last is gone | ${(off.deleteAllMs / 1000).toFixed(1)} s | ${(on.deleteAllMs / 1000).toFixed(1)} s | — | — |`,
  );
}

async function benchCliLogs(dir: string, cluster: BenchCluster): Promise<void> {
  say('lorenz logs: a 32 MiB transcript from the archive, as a whole process');
  const figures = await cliLogs(dir, cluster.cp.kubeconfigPath);
  const median = (values: number[]) => percentile(values, 50);
  console.log(
    `\n### \`lorenz logs --archive-dsn sqlite:…\`, ${(figures.bytes / 2 ** 20).toFixed(0)} MiB transcript (${figures.textMs.length} runs each, after a warm-up)\n`,
  );
  console.log('| output | median | min–max | printed | goal | median / goal |');
  console.log('|---|---|---|---|---|---|');
  for (const [output, times, bytes] of [
    ['text', figures.textMs, figures.printedBytes.text],
    ['json', figures.jsonMs, figures.printedBytes.json],
  ] as const) {
    console.log(
      `| ${output} | ${ms(median(times))} | ${ms(Math.min(...times))}–${ms(Math.max(...times))} | ${(bytes / 2 ** 20).toFixed(1)} MiB | ≤ 1000 ms | ${ratio(median(times), 1000)} |`,
    );
  }
}

const dir = mkdtempSync(join(tmpdir(), 'lorenz-bench-archive-'));
try {
  if (PHASES_RUN.has('logs') || PHASES_RUN.has('archiver')) {
    say('starting a control plane for the archiver and `lorenz logs`');
    const cluster = await startBenchCluster();
    try {
      if (PHASES_RUN.has('logs')) await benchCliLogs(dir, cluster);
      if (PHASES_RUN.has('archiver')) await benchArchiver(cluster);
    } finally {
      await cluster.stop();
    }
  }
  if (PHASES_RUN.has('stores')) {
    const file = join(dir, 'archive.db');
    // Seeding skips the per-commit sync (100 000 fsyncs would time the disk, not the store);
    // everything timed runs on the store's durable defaults.
    await benchStore(
      'SQLite',
      () => openSqliteArchive(file),
      () => openSqliteArchive(file, { synchronous: 'OFF' }),
      1,
    );
    console.log(
      `\nSQLite file: ${(statSync(file).size / 1024 / 1024).toFixed(0)} MiB for ${RUNS} runs and one 32 MiB log`,
    );
    const pg = process.env.LORENZ_BENCH_PG_URL;
    if (pg !== undefined && pg !== '') {
      await benchStore(
        'PostgreSQL',
        () => openArchive(pg),
        () => openArchive(pg),
        16,
      );
    } else {
      // None given: a server of its own, as the tests start one (Debian's postgresql package,
      // hack/ensure-postgres.sh), with fsync on so that putRun's figure is a durable write's.
      let server: TestPostgres | undefined;
      try {
        server = await startPostgres({ fsync: true });
      } catch (error) {
        say(
          `PostgreSQL: skipped, no server could be started (${error instanceof Error ? error.message : String(error)}); ` +
            `set LORENZ_BENCH_PG_URL to an empty database, e.g. ${maskDsn('postgres://lorenz:pw@127.0.0.1:5432/bench')}`,
        );
      }
      if (server !== undefined) {
        const url = server.url;
        say(`PostgreSQL: started a server for the bench at ${url}`);
        try {
          await benchStore(
            'PostgreSQL',
            () => openArchive(url),
            () => openArchive(url),
            16,
          );
        } finally {
          await server.stop();
        }
      }
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
