import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteArchive } from '../../../src/archive/sqlite.js';
import type { ArchiveStore, RunRecord } from '../../../src/archive/types.js';
import { retryName, retryObject } from '../../../src/server/actions.js';
import { storeSource } from '../../../src/server/archive-source.js';
import { newestFirst, type ViewCache } from '../../../src/server/cache.js';
import { parseServerArgs } from '../../../src/cli/server-command.js';
import { runOfIssueRun, runOfRecord } from '../../../src/server/mappers.js';
import { runsPage } from '../../../src/server/runs-page.js';
import type { RunSummary } from '../../../src/server/view-api.js';
import { fixedViewCache } from '../../support/view-fakes.js';
import { eachCase } from '../../support/cases.js';

// /api/v1/runs over a real SQLite archive and a cache of 10 000 live runs: the merge (a run
// both live and archived once, as live), the filters, paging, and the first page's time.

const time = (i: number) => new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString();
const NAMESPACES = ['team-a', 'team-b'];

function issueRun(i: number) {
  return {
    metadata: {
      uid: `live-${String(i).padStart(6, '0')}`,
      namespace: NAMESPACES[i % 2],
      name: `run-${i}`,
      creationTimestamp: time(i * 2 + 1),
    },
    spec: {
      workflowRef: { name: i % 3 === 0 ? 'board' : 'other' },
      issue: {
        id: `${i}`,
        identifier: `ENG-${i}`,
        title: `<b>issue ${i}</b>`,
        url: 'javascript:x',
      },
    },
    status: { phase: i % 5 === 0 ? 'Failed' : 'Succeeded', attempt: 1 },
  };
}

const archived = (i: number, uid = `arch-${String(i).padStart(6, '0')}`): RunRecord => ({
  uid,
  namespace: NAMESPACES[i % 2] ?? '',
  name: `old-${i}`,
  workflow: 'board',
  issueId: `${i}`,
  issueIdentifier: `OLD-${i}`,
  issueTitle: 'old',
  phase: 'Succeeded',
  attempts: 1,
  createdAt: time(i * 2),
  usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
  object: {},
  deletedAt: time(i * 2 + 5),
});

describe('the runs list', () => {
  let dir: string;
  let store: ArchiveStore;
  const LIVE = 10_000;
  const ARCHIVED = 2_000;
  let cache: ViewCache;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lorenz-runs-'));
    store = await openSqliteArchive(join(dir, 'a.db'));
    await store.migrate();
    for (let i = 0; i < ARCHIVED; i += 1) await store.putRun(archived(i));
    // A live run that is archived too (the archiver writes rows while runs run).
    await store.putRun({ ...archived(0, 'live-000007'), name: 'run-7', namespace: 'team-b' });
    cache = fixedViewCache(
      Array.from({ length: LIVE }, (_, i) => runOfIssueRun(issueRun(i))).sort(newestFirst),
    );
  }, 120_000);
  afterAll(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  const all = async () => new Set(NAMESPACES);

  it('answers the first page of 10 000 live runs and the archive within 100 ms', async () => {
    const deps = { cache, archive: storeSource(store).forCaller(undefined), readable: all };
    await runsPage({ query: {} }, deps);
    const started = performance.now();
    const page = await runsPage({ query: {} }, deps);
    const ms = performance.now() - started;
    expect(ms).toBeLessThan(100);
    expect(page.runs).toHaveLength(100);
    expect(page.continue).toBeDefined();
  });

  it('pages through everything once, newest first, a live-and-archived run once as live', async () => {
    const deps = { cache, archive: storeSource(store).forCaller(undefined), readable: all };
    const seen: RunSummary[] = [];
    let next: string | undefined;
    do {
      const page = await runsPage(
        { query: { limit: 1000, ...(next ? { continue: next } : {}) } },
        deps,
      );
      seen.push(...page.runs);
      next = page.continue;
    } while (next);
    expect(seen).toHaveLength(LIVE + ARCHIVED);
    expect(new Set(seen.map((run) => run.uid)).size).toBe(seen.length);
    expect([...seen].sort(newestFirst)).toEqual(seen);
    expect(seen.find((run) => run.uid === 'live-000007')?.source).toBe('live');
    // A javascript: URL never reaches the page; the title is the text it was.
    expect(seen.find((run) => run.uid === 'live-000001')?.issue).toEqual({
      id: '1',
      identifier: 'ENG-1',
      title: '<b>issue 1</b>',
    });
  });

  it.each([
    ['namespace', { namespace: 'team-a', query: {} }, (r: RunSummary) => r.namespace === 'team-a'],
    ['workflow', { query: { workflow: 'other' } }, (r: RunSummary) => r.workflow === 'other'],
    ['phase', { query: { phase: 'Failed' } }, (r: RunSummary) => r.phase === 'Failed'],
    ['issue', { query: { issue: 'OLD-3' } }, (r: RunSummary) => r.issue.identifier === 'OLD-3'],
    [
      'source=archive',
      { query: {}, source: 'archive' as const },
      (r: RunSummary) => r.source === 'archive',
    ],
    ['source=live', { query: {}, source: 'live' as const }, (r: RunSummary) => r.source === 'live'],
    ['since', { query: { since: time(19_000) } }, (r: RunSummary) => r.createdAt >= time(19_000)],
  ])('filters by %s', async (_name, request, holds) => {
    const page = await runsPage(request, {
      cache,
      archive: storeSource(store).forCaller(undefined),
      readable: all,
    });
    expect(page.runs.length).toBeGreaterThan(0);
    expect(page.runs.every(holds)).toBe(true);
  });

  it('shows only the namespaces the caller may read, live and archived', async () => {
    const page = await runsPage(
      { query: { limit: 1000 } },
      {
        cache,
        archive: storeSource(store).forCaller(undefined),
        readable: async (namespaces) => new Set([...namespaces].filter((ns) => ns === 'team-b')),
      },
    );
    expect(page.runs.length).toBe(1000);
    expect(page.runs.every((run) => run.namespace === 'team-b')).toBe(true);
  });
});

describe("what a run's workspace started from", () => {
  const warm = {
    type: 'VolumeSnapshot',
    volumeSnapshot: 'board-warm-2',
    digest: 'sha256:eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee',
    commit: 'c0ffee',
  };
  const shown =
    'VolumeSnapshot board-warm-2 (sha256:eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee, commit c0ffee)';
  it('is a line of the live run and of the archived one, unset before the start', () => {
    const live = issueRun(1);
    expect(
      runOfIssueRun({ ...live, status: { ...live.status, workspaceSource: warm } }).workspace,
    ).toBe(shown);
    expect(runOfIssueRun(live).workspace).toBeUndefined();
    expect(
      runOfRecord({ ...archived(2), object: { status: { workspaceSource: warm } } }).workspace,
    ).toBe(shown);
    expect(runOfRecord(archived(3)).workspace).toBeUndefined();
    const clean = { ...live, status: { ...live.status, workspaceSource: { type: 'Clean' } } };
    expect(runOfIssueRun(clean).workspace).toBe('clean');
  });
});

describe('retry and server flags', () => {
  eachCase('names the retry of %s, attempt %i, %s', retryName, [
    ['run', 2, 'run-retry-2'],
    ['run-retry-2', 3, 'run-retry-3'],
    ['x'.repeat(253), 2, `${'x'.repeat(245)}-retry-2`],
  ]);

  it('retries with the same spec, the next attempt, the labels and owner, not cancelled', () => {
    const object = retryObject({
      metadata: { name: 'r', namespace: 'n', labels: { a: 'b' }, ownerReferences: [{ uid: 'w' }] },
      spec: { issue: { identifier: 'E-1' }, cancelRequested: true, attempt: 1 },
      status: { phase: 'Failed', attempt: 3 },
    });
    expect(object).toEqual({
      apiVersion: 'lorenz.dev/v1alpha1',
      kind: 'IssueRun',
      metadata: {
        name: 'r-retry-4',
        namespace: 'n',
        labels: { a: 'b' },
        ownerReferences: [{ uid: 'w' }],
        annotations: { 'lorenz.dev/retry-of': 'r' },
      },
      spec: { issue: { identifier: 'E-1' }, attempt: 4 },
    });
  });

  it.each([
    [[], {}, { auth: 'local', bindAddress: '127.0.0.1:8090' }],
    [['--auth=token'], {}, { auth: 'token', bindAddress: ':8090' }],
    [
      ['--bind-address=0.0.0.0:9000', '--allow-remote-bind'],
      {},
      { auth: 'local', bindAddress: '0.0.0.0:9000' },
    ],
  ])('parses %j', (args, env, want) => {
    expect(parseServerArgs(args, env)).toMatchObject(want);
  });

  it.each([
    [['--bind-address=0.0.0.0:9000'], /loopback address only/],
    [['--archive-dsn=x', '--archive-url=y'], /not both/],
    [['--auth=none'], /--auth must be token or local/],
  ])('refuses %j', (args, message) => {
    expect(() => parseServerArgs(args, {})).toThrow(message);
  });
});
