// `npm run bench:server`: lorenz server's cost with many open pages. A benchmark, not a test:
// it prints figures beside issue 27's targets and never fails on them.
//
// The server (its real handler, SSE fan-out and per-client review path) runs in this
// process over a cache that changes BENCH_RATE runs a second; BENCH_CLIENTS /watch streams
// are held open by a child process (so their cost is not counted as the server's). Measured:
// the server's RSS and CPU while the clients are connected and runs change, and the delay
// from a change to each client (p50/p99, goal p99 ≤ 1 s).
//
//   BENCH_CLIENTS  open /watch streams (1000)   BENCH_RATE  runs changed a second (50)
//   BENCH_SECONDS  how long changes run (20)
//   BENCH_PHASES   which parts run, comma-separated: paint,fanout (both)
//   BENCH_PAINT_RUNS  runs held for the first paint, half live, half archived (10000)
//   BENCH_PAINT_ROUNDS  pages timed after a warm-up (5)
//
// The first paint of the runs page in Chromium is bench/server-paint.ts.
import { fork } from 'node:child_process';
import http from 'node:http';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeClient } from '../src/controller/runtime/client.js';
import type { ChangeEvent, RunSummary } from '../src/server/view-api.js';
import { startViewServer } from '../src/server/view-server.js';
import { fixedViewCache, readAllAccess } from '../test/support/view-fakes.js';
import { firstPaint } from './server-paint.js';
import { say } from './report.js';

const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 1000) || 1000;
const RATE = Number(process.env.BENCH_RATE ?? 50) || 50;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20) || 20;
const PHASES = new Set(
  (process.env.BENCH_PHASES ?? 'paint,fanout').split(',').map((phase) => phase.trim()),
);
const PAINT_RUNS = Number(process.env.BENCH_PAINT_RUNS ?? 10_000) || 10_000;
const PAINT_ROUNDS = Number(process.env.BENCH_PAINT_ROUNDS ?? 5) || 5;

type Change = Exclude<ChangeEvent, { event: 'heartbeat' }>;

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return (
    sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ??
    NaN
  );
}

async function clients(port: number, count: number): Promise<void> {
  const delays: number[] = [];
  let open = 0;
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
  for (let i = 0; i < count; i += 1) {
    http.get(
      { host: '127.0.0.1', port, path: '/api/v1/watch', agent, headers: { Host: 'localhost' } },
      (response) => {
        open += 1;
        if (open === count) process.send?.({ kind: 'connected' });
        response.setEncoding('utf8');
        let pending = '';
        response.on('data', (chunk: string) => {
          pending += chunk;
          let end = pending.indexOf('\n\n');
          while (end >= 0) {
            const block = pending.slice(0, end);
            pending = pending.slice(end + 2);
            const sent = /"message":"sent (\d+)"/.exec(block)?.[1];
            if (sent) delays.push(Date.now() - Number(sent));
            end = pending.indexOf('\n\n');
          }
        });
      },
    );
  }
  process.on('message', (message: { kind: string }) => {
    if (message.kind !== 'report') return;
    // The clients may lag the server (1000 parsers on a shared core): report once the count
    // has stopped growing for a second, at most 30 s later.
    let last = -1;
    const deadline = Date.now() + 30_000;
    const check = setInterval(() => {
      if (delays.length === last || Date.now() > deadline) {
        clearInterval(check);
        process.send?.({ kind: 'report', delays, open }, () => process.exit(0));
      }
      last = delays.length;
    }, 1000);
  });
}

async function main(): Promise<void> {
  const listeners = new Set<(change: Change) => void>();
  const runs: RunSummary[] = [];
  const cache = fixedViewCache(runs, listeners);
  const access = readAllAccess();
  const webRoot = mkdtempSync(join(tmpdir(), 'lorenz-bench-web-'));
  writeFileSync(join(webRoot, 'index.html'), '<!doctype html>');
  const server = await startViewServer({
    access,
    cache,
    client: {} as KubeClient,
    webRoot,
    loopbackHostsOnly: true,
    bind: { host: '127.0.0.1', port: 0 },
  });
  const child = fork(
    process.argv[1] ?? '',
    ['clients', String(server.address.port), String(CLIENTS)],
    {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    },
  );
  await new Promise<void>((resolve) =>
    child.on('message', (m: { kind: string }) => m.kind === 'connected' && resolve()),
  );
  say(`${CLIENTS} /watch clients connected`);
  const rssStart = process.memoryUsage().rss;
  const cpuStart = process.cpuUsage();
  const wallStart = performance.now();
  let peakRss = rssStart;
  let n = 0;
  const timer = setInterval(() => {
    // Catch up on a late timer: the rate is held over the run, not per tick.
    const due = Math.floor(((performance.now() - wallStart) / 1000) * RATE);
    while (n < due) {
      n += 1;
      const run: RunSummary = {
        uid: `u-${n % 500}`,
        namespace: 'bench',
        name: `run-${n % 500}`,
        workflow: 'board',
        issue: { id: `${n}`, identifier: `B-${n % 500}`, title: 'bench' },
        phase: 'Running',
        message: `sent ${Date.now()}`,
        attempt: 1,
        createdAt: new Date().toISOString(),
        usage: { inputTokens: n, outputTokens: n, totalTokens: 2 * n },
        source: 'live',
      };
      for (const listener of listeners) listener({ event: 'run', data: run });
    }
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
  }, 100);
  await new Promise((resolve) => setTimeout(resolve, SECONDS * 1000));
  clearInterval(timer);
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const cpu = process.cpuUsage(cpuStart);
  const wall = performance.now() - wallStart;
  const report = await new Promise<{ delays: number[]; open: number }>((resolve) => {
    child.on(
      'message',
      (m: { kind: string; delays: number[]; open: number }) => m.kind === 'report' && resolve(m),
    );
    child.send({ kind: 'report' });
  });
  const cpuShare = ((cpu.user + cpu.system) / 1000 / wall) * 100;
  const line = (what: string, value: string, target: string) =>
    process.stdout.write(`${what.padEnd(44)} ${value.padStart(14)}   target ${target}\n`);
  process.stdout.write(
    `lorenz server, ${CLIENTS} /watch clients, ${RATE} runs changed a second for ${SECONDS} s\n`,
  );
  line('server RSS (peak)', `${(peakRss / 2 ** 20).toFixed(0)} MiB`, '≤ 256 MiB');
  line('server CPU (one core = 100 %)', `${cpuShare.toFixed(1)} %`, '≤ 50 %');
  line('runs changed a second (achieved)', `${(n / SECONDS).toFixed(1)}`, `${RATE}`);
  line('changes delivered', `${report.delays.length}`, `${n * CLIENTS}`);
  line('change → client p50', `${percentile(report.delays, 50)} ms`, '—');
  line('change → client p99', `${percentile(report.delays, 99)} ms`, '≤ 1000 ms');
  await server.close();
}

async function paint(): Promise<void> {
  const figures = await firstPaint(PAINT_RUNS, PAINT_ROUNDS, say);
  const median = (values: number[]) => percentile(values, 50);
  const max = (values: number[]) => Math.max(...values);
  process.stdout.write(
    `runs page in Chromium, ${figures.runs} runs (half live, half archived), ${figures.rowsMs.length} pages after a warm-up\n`,
  );
  process.stdout.write(
    `${'navigation → first row visible, median / max'.padEnd(44)} ${`${median(figures.rowsMs).toFixed(0)} / ${max(figures.rowsMs).toFixed(0)} ms`.padStart(14)}   target ≤ 1000 ms\n`,
  );
  process.stdout.write(
    `${'first-contentful-paint, median / max'.padEnd(44)} ${`${median(figures.firstContentfulPaintMs).toFixed(0)} / ${max(figures.firstContentfulPaintMs).toFixed(0)} ms`.padStart(14)}   —\n`,
  );
}

if (process.argv[2] === 'clients') await clients(Number(process.argv[3]), Number(process.argv[4]));
else {
  if (PHASES.has('paint')) await paint();
  if (PHASES.has('fanout')) await main();
}
