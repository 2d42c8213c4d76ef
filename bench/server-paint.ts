// `npm run bench:server`, its first-paint part: how long the runs page takes to show its
// first rows in a real browser (Debian's chromium, headless, driven by playwright-core) when
// the server holds BENCH_PAINT_RUNS runs, half live (the watch cache) and half only in the
// archive (SQLite). The server is the real one (handler, merge of live and archived runs,
// static files of `npm run build`'s web bundle); the cache is a stand-in that holds summaries.
// Timed: from the navigation's start to the first row of the table visible, and Chromium's
// own first-contentful-paint, over BENCH_PAINT_ROUNDS fresh pages after a warm-up.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { openSqliteArchive } from '../src/archive/sqlite.js';
import type { RunRecord } from '../src/archive/types.js';
import type { KubeClient } from '../src/controller/runtime/client.js';
import { storeSource } from '../src/server/archive-source.js';
import type { RunSummary } from '../src/server/view-api.js';
import { startViewServer } from '../src/server/view-server.js';
import { launchBrowser } from '../test/support/browser.js';
import { fixedViewCache, readAllAccess } from '../test/support/view-fakes.js';

export interface PaintFigures {
  runs: number;
  rowsMs: number[];
  firstContentfulPaintMs: number[];
}

const START = Date.parse('2026-11-01T00:00:00Z');

function liveRun(i: number): RunSummary {
  return {
    uid: `live-${i}`,
    namespace: `team-${i % 5}`,
    name: `eng-${i}`,
    workflow: 'board',
    issue: { id: `id-${i}`, identifier: `ENG-${i}`, title: `Live issue number ${i}` },
    phase: i % 7 === 0 ? 'Failed' : i % 3 === 0 ? 'Running' : 'Succeeded',
    attempt: 1 + (i % 3),
    createdAt: new Date(START + (2 * i + 1) * 60_000).toISOString(),
    usage: { inputTokens: 1000 + i, outputTokens: 200, totalTokens: 1200 + i },
    source: 'live',
  };
}

function archivedRun(i: number): RunRecord {
  const createdAt = new Date(START + 2 * i * 60_000).toISOString();
  return {
    uid: `archived-${i}`,
    namespace: `team-${i % 5}`,
    name: `old-${i}`,
    workflow: 'board',
    issueId: `old-id-${i}`,
    issueIdentifier: `OLD-${i}`,
    issueTitle: `Archived issue number ${i}`,
    issueState: 'Done',
    phase: i % 7 === 0 ? 'Failed' : 'Succeeded',
    attempts: 1,
    createdAt,
    usage: { inputTokens: 1000, outputTokens: 200, totalTokens: 1200 },
    object: { metadata: { name: `old-${i}`, namespace: `team-${i % 5}` }, status: {} },
    deletedAt: new Date(START + 2 * i * 60_000 + 3_600_000).toISOString(),
  };
}

export async function firstPaint(
  total: number,
  rounds: number,
  say: (line: string) => void,
): Promise<PaintFigures> {
  // `npm run build`'s output (the web/ of the source tree holds Vite's sources).
  const webRoot = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'web');
  if (!existsSync(join(webRoot, 'index.html')))
    throw new Error(`no web bundle at ${webRoot}: run npm run build first`);
  const dir = mkdtempSync(join(tmpdir(), 'lorenz-bench-paint-'));
  const store = await openSqliteArchive(join(dir, 'archive.db'));
  await store.migrate();
  const half = Math.floor(total / 2);
  for (let i = 0; i < total - half; i += 1) await store.putRun(archivedRun(i));
  // Newest first, as the cache keeps them.
  const live = Array.from({ length: half }, (_, i) => liveRun(i)).reverse();
  say(`first paint: ${half} live and ${total - half} archived runs`);
  const server = await startViewServer({
    access: readAllAccess(),
    cache: fixedViewCache(live),
    client: {} as KubeClient,
    webRoot,
    archive: storeSource(store),
    loopbackHostsOnly: true,
    bind: { host: '127.0.0.1', port: 0 },
  });
  const url = `http://localhost:${server.address.port}/runs`;
  const browser = await launchBrowser();
  const figures: PaintFigures = { runs: total, rowsMs: [], firstContentfulPaintMs: [] };
  try {
    for (let round = 0; round <= rounds; round += 1) {
      const { page } = await browser.newPage();
      const t0 = performance.now();
      await page.goto(url, { waitUntil: 'commit' });
      await page
        .getByRole('row', { name: /^Run / })
        .first()
        .waitFor({ state: 'visible', timeout: 30_000 })
        .catch(async (error: unknown) => {
          const shot = join(tmpdir(), 'lorenz-bench-paint.png');
          await page.screenshot({ path: shot });
          throw new Error(`no run row on ${url} (a screenshot: ${shot}): ${String(error)}`);
        });
      const rowsMs = performance.now() - t0;
      const fcp = await page.evaluate(
        `performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? -1`,
      );
      await page.close();
      // Round 0 warms the browser's and the server's caches up; it is not counted.
      if (round === 0) continue;
      figures.rowsMs.push(rowsMs);
      figures.firstContentfulPaintMs.push(Number(fcp));
    }
  } finally {
    await browser.close();
    await server.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return figures;
}
