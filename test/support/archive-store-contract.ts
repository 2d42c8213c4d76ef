// What every archive store (src/archive/types.ts) must do, as one suite that each store's test
// file registers against a real database: test/unit/archive/sqlite.test.ts on SQLite files,
// the PostgreSQL store's test on a real server. Each test opens a fresh, empty store.
import { afterEach, describe, expect, it } from 'vitest';
import {
  ArchiveError,
  type ArchiveStore,
  type AttemptRecord,
  type EventRecord,
  type LogAppend,
  type LogEntry,
  type RunQuery,
  type RunRecord,
} from '../../src/archive/types.js';

export interface ContractFixtures {
  /**
   * Records `version` as applied in the store's schema_migrations, behind its back (as a
   * newer Lorenz would have), so that the suite can check that the store refuses it.
   */
  recordSchemaVersion(store: ArchiveStore, version: number): Promise<void>;
}

export function run(overrides: Partial<RunRecord> & { uid: string }): RunRecord {
  return {
    namespace: 'team-a',
    name: `run-${overrides.uid}`,
    workflow: 'wf',
    issueId: `id-${overrides.uid}`,
    issueIdentifier: `ENG-${overrides.uid}`,
    issueTitle: 'An issue',
    phase: 'Succeeded',
    reason: 'IssueCompleted',
    attempts: 1,
    createdAt: '2026-01-01T00:00:00Z',
    usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
    object: { spec: { issue: overrides.uid }, status: { phase: overrides.phase ?? 'Succeeded' } },
    ...overrides,
  };
}

function attempt(overrides: Partial<AttemptRecord> & { runUid: string }): AttemptRecord {
  return {
    slot: 0,
    attempt: 1,
    podName: 'pod',
    podUid: `pod-${overrides.runUid}-${overrides.slot ?? 0}-${overrides.attempt ?? 1}`,
    phase: 'Succeeded',
    turns: 1,
    usage: { inputTokens: 1, outputTokens: 2, totalTokens: 3 },
    hooks: [],
    ...overrides,
  };
}

function event(overrides: Partial<EventRecord> & { uid: string; runUid: string }): EventRecord {
  return {
    involvedKind: 'IssueRun',
    involvedName: 'run',
    type: 'Normal',
    reason: 'Started',
    message: 'started',
    count: 1,
    firstTime: '2026-01-01T00:00:00Z',
    ...overrides,
  };
}

function piece(offset: number, data: string, overrides: Partial<LogAppend> = {}): LogAppend {
  return {
    runUid: 'r1',
    podUid: 'pod-1',
    slot: 0,
    attempt: 1,
    offset,
    data,
    capBytes: 1024 * 1024,
    ...overrides,
  };
}

async function readAll(
  store: ArchiveStore,
  runUid: string,
  filter?: { slot?: number; attempt?: number },
) {
  const entries: LogEntry[] = [];
  for await (const entry of store.readLog(runUid, filter)) entries.push(entry);
  return entries;
}

/** The entries as short strings: `pod@offset:text` or `gap@offset:bytes`. */
function shown(entries: LogEntry[]): string[] {
  return entries.map((e) =>
    e.kind === 'data'
      ? `${e.piece.podUid}/${e.piece.slot}/${e.piece.attempt}@${e.piece.offset}:${e.piece.data}`
      : `${e.podUid}/${e.slot}/${e.attempt}@${e.offset}:gap ${e.bytes}`,
  );
}

async function uids(store: ArchiveStore, query: RunQuery): Promise<string[]> {
  return (await store.listRuns(query)).runs.map((r) => r.uid);
}

async function rejectsWith(promise: Promise<unknown>, code: string): Promise<ArchiveError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ArchiveError);
  expect((error as ArchiveError).code).toBe(code);
  return error as ArchiveError;
}

export function describeArchiveContract(
  name: string,
  open: () => Promise<ArchiveStore>,
  fixtures: ContractFixtures,
): void {
  describe(`archive store contract: ${name}`, () => {
    const opened: ArchiveStore[] = [];
    const fresh = async (): Promise<ArchiveStore> => {
      const store = await open();
      opened.push(store);
      return store;
    };
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((s) => s.close()));
    });

    it('writes a run once however often it is put, the later write winning', async () => {
      const store = await fresh();
      await store.putRun(run({ uid: 'r1', phase: 'Running', reason: undefined }));
      await store.putRun(
        run({ uid: 'r1', phase: 'Failed', reason: 'HookFailed', message: 'exit 1' }),
      );
      const page = await store.listRuns({});
      expect(page.runs.map((r) => [r.uid, r.phase, r.reason, r.message])).toEqual([
        ['r1', 'Failed', 'HookFailed', 'exit 1'],
      ]);
      expect(page.continue).toBeUndefined();
      const got = await store.getRun({ uid: 'r1' });
      expect(got?.run).toEqual(
        run({ uid: 'r1', phase: 'Failed', reason: 'HookFailed', message: 'exit 1' }),
      );
    });

    it('upserts attempts by (run, slot, attempt) and Events by uid', async () => {
      const store = await fresh();
      // Attempt 2 of slot 0 written twice: the second write, which ends it, is what stays.
      // A fresh record each time: what was written is never the object compared.
      const secondAttempt = () =>
        attempt({
          runUid: 'r1',
          slot: 0,
          attempt: 2,
          phase: 'Succeeded',
          host: 'worker-1',
          git: { branch: 'lorenz/eng-1', pushedCommits: ['abc'] },
        });
      await store.putRun(run({ uid: 'r1' }));
      await store.putAttempt(attempt({ runUid: 'r1', slot: 0, attempt: 2, phase: 'Running' }));
      await store.putAttempt(
        attempt({ runUid: 'r1', slot: 0, attempt: 1, phase: 'Failed', reason: 'HookFailed' }),
      );
      await store.putAttempt(secondAttempt());
      await store.putAttempt(attempt({ runUid: 'r1', slot: 1, attempt: 1 }));
      await store.putEvents([
        event({ uid: 'e2', runUid: 'r1', firstTime: '2026-01-01T00:00:02Z', reason: 'HookFailed' }),
        event({ uid: 'e1', runUid: 'r1', firstTime: '2026-01-01T00:00:01Z' }),
      ]);
      await store.putEvents([
        event({ uid: 'e1', runUid: 'r1', firstTime: '2026-01-01T00:00:01Z', count: 3 }),
      ]);
      await store.putEvents([]);
      const got = await store.getRun({ uid: 'r1' });
      expect(got?.attempts.map((a) => [a.slot, a.attempt, a.phase])).toEqual([
        [0, 1, 'Failed'],
        [0, 2, 'Succeeded'],
        [1, 1, 'Succeeded'],
      ]);
      expect(got?.attempts[1]).toEqual(secondAttempt());
      expect(got?.events.map((e) => [e.uid, e.count])).toEqual([
        ['e1', 3],
        ['e2', 1],
      ]);
    });

    it('filters runs by namespaces, Workflow, issue, phase, reason, time and liveness', async () => {
      const store = await fresh();
      const runs = [
        run({
          uid: 'a',
          namespace: 'ns1',
          workflow: 'w1',
          issueIdentifier: 'ENG-1',
          issueId: 'i1',
          createdAt: '2026-01-01T00:00:00Z',
        }),
        run({
          uid: 'b',
          namespace: 'ns1',
          workflow: 'w2',
          issueIdentifier: 'ENG-2',
          issueId: 'i2',
          phase: 'Failed',
          reason: 'HookFailed',
          createdAt: '2026-01-02T00:00:00Z',
        }),
        run({
          uid: 'c',
          namespace: 'ns2',
          workflow: 'w1',
          issueIdentifier: 'ENG-1',
          issueId: 'i1',
          phase: 'Running',
          reason: undefined,
          createdAt: '2026-01-03T00:00:00Z',
        }),
        // +02:00: the same instant as 2026-01-03T22:00:00Z, sorted as that.
        run({
          uid: 'd',
          namespace: 'ns3',
          workflow: 'w1',
          issueIdentifier: 'ENG-3',
          issueId: 'i3',
          phase: 'Failed',
          reason: 'AgentFailed',
          createdAt: '2026-01-04T00:00:00+02:00',
        }),
      ];
      for (const r of runs) await store.putRun(r);
      for (const r of runs.filter((each) => each.uid === 'a' || each.uid === 'd'))
        await store.putRun({ ...r, deletedAt: '2026-01-05T00:00:00Z' });
      const cases: [string, RunQuery, string[]][] = [
        ['all, newest first', {}, ['d', 'c', 'b', 'a']],
        ['namespace list', { namespaces: ['ns1', 'ns3'] }, ['d', 'b', 'a']],
        ['one namespace', { namespaces: ['ns2'] }, ['c']],
        ['no namespace allowed', { namespaces: [] }, []],
        ['workflow', { workflow: 'w1' }, ['d', 'c', 'a']],
        ['issue by identifier', { issue: 'ENG-1' }, ['c', 'a']],
        ['issue by tracker id', { issue: 'i2' }, ['b']],
        ['phase', { phase: 'Failed' }, ['d', 'b']],
        ['reason', { reason: 'HookFailed' }, ['b']],
        ['since (inclusive)', { since: '2026-01-02T00:00:00Z' }, ['d', 'c', 'b']],
        ['until (exclusive)', { until: '2026-01-03T00:00:00Z' }, ['b', 'a']],
        [
          'since and until in another offset',
          { since: '2026-01-03T23:00:00+01:00', until: '2026-01-04T00:00:00Z' },
          ['d'],
        ],
        ['only deleted', { includeLive: false }, ['d', 'a']],
        ['combined', { namespaces: ['ns1', 'ns2'], workflow: 'w1', includeLive: true }, ['c', 'a']],
        ['nothing matches', { workflow: 'none' }, []],
      ];
      for (const [what, query, want] of cases) {
        expect(await uids(store, query), what).toEqual(want);
      }
    });

    it('pages 250 runs in 3 pages: newest first, no duplicate, no gap, ties broken by uid', async () => {
      const store = await fresh();
      const all: RunRecord[] = [];
      for (let i = 0; i < 250; i++) {
        // Ten runs share each creation time: the order must not depend on insertion.
        const minute = String(Math.floor(i / 10)).padStart(2, '0');
        all.push(
          run({
            uid: `u${String((i * 7919) % 1000).padStart(4, '0')}`,
            createdAt: `2026-02-01T10:${minute}:00Z`,
          }),
        );
      }
      for (const r of all) await store.putRun(r);
      const want = [...all]
        .sort((x, y) =>
          x.createdAt === y.createdAt
            ? x.uid < y.uid
              ? 1
              : -1
            : x.createdAt < y.createdAt
              ? 1
              : -1,
        )
        .map((r) => r.uid);
      const pages: string[][] = [];
      let token: string | undefined;
      do {
        const page = await store.listRuns({
          limit: 100,
          ...(token === undefined ? {} : { continue: token }),
        });
        pages.push(page.runs.map((r) => r.uid));
        token = page.continue;
      } while (token !== undefined && pages.length < 10);
      expect(pages.map((p) => p.length)).toEqual([100, 100, 50]);
      expect(pages.flat()).toEqual(want);
      // The default page is 100.
      const first = await store.listRuns({});
      expect(first.runs).toHaveLength(100);
      expect(first.continue).toBeDefined();
    });

    it('refuses a bad limit or continue token with archive_query_invalid', async () => {
      const store = await fresh();
      const bad: RunQuery[] = [
        { limit: 0 },
        { limit: 1001 },
        { limit: 2.5 },
        { continue: 'not a token!' },
        { continue: Buffer.from('["x","y"]').toString('base64url') },
        { continue: Buffer.from('{"a":1}').toString('base64url') },
        { since: 'yesterday' },
        // No zone: which instant it names would depend on the server's.
        { until: '2026-01-01T00:00:00' },
      ];
      for (const query of bad) await rejectsWith(store.listRuns(query), 'archive_query_invalid');
      await rejectsWith(store.getRun({}), 'archive_query_invalid');
      await rejectsWith(store.usageByDay({ from: '2026-1-1' }), 'archive_query_invalid');
    });

    it('finds a run by uid, and by namespace and name as the newest of that name', async () => {
      const store = await fresh();
      await store.putRun(run({ uid: 'old', name: 'eng-1', createdAt: '2026-01-01T00:00:00Z' }));
      await store.putRun(run({ uid: 'new', name: 'eng-1', createdAt: '2026-01-02T00:00:00Z' }));
      await store.putRun(
        run({
          uid: 'other',
          name: 'eng-1',
          namespace: 'team-b',
          createdAt: '2026-01-03T00:00:00Z',
        }),
      );
      expect((await store.getRun({ uid: 'old' }))?.run.uid).toBe('old');
      expect((await store.getRun({ namespace: 'team-a', name: 'eng-1' }))?.run.uid).toBe('new');
      expect(await store.getRun({ uid: 'missing' })).toBeUndefined();
      expect(await store.getRun({ namespace: 'team-a', name: 'missing' })).toBeUndefined();
      expect(await store.getRun({ uid: 'new' })).toEqual({
        run: run({ uid: 'new', name: 'eng-1', createdAt: '2026-01-02T00:00:00Z' }),
        attempts: [],
        events: [],
      });
    });

    it('reads log pieces in order of slot, attempt and offset, filtered on request', async () => {
      const store = await fresh();
      await store.appendLog(piece(6, 'world\n'));
      await store.appendLog(piece(0, 'hello\n'));
      await store.appendLog(piece(0, 'retry\n', { podUid: 'pod-2', attempt: 2 }));
      await store.appendLog(piece(0, 'slot1\n', { podUid: 'pod-3', slot: 1 }));
      await store.appendLog(piece(0, 'another run\n', { podUid: 'pod-4', runUid: 'r2' }));
      expect(shown(await readAll(store, 'r1'))).toEqual([
        'pod-1/0/1@0:hello\n',
        'pod-1/0/1@6:world\n',
        'pod-2/0/2@0:retry\n',
        'pod-3/1/1@0:slot1\n',
      ]);
      expect(shown(await readAll(store, 'r1', { attempt: 2 }))).toEqual(['pod-2/0/2@0:retry\n']);
      expect(shown(await readAll(store, 'r1', { slot: 1 }))).toEqual(['pod-3/1/1@0:slot1\n']);
      expect(await readAll(store, 'none')).toEqual([]);
    });

    it('streams a log of many pieces whole and in order', async () => {
      const store = await fresh();
      const lines = Array.from({ length: 300 }, (_, i) => `line ${String(i).padStart(4, '0')}\n`);
      let offset = 0;
      const offsets = lines.map((l) => {
        const at = offset;
        offset += Buffer.byteLength(l);
        return at;
      });
      // Out of order, as two followers racing after a restart might write them.
      for (const i of [...lines.keys()].reverse())
        await store.appendLog(piece(offsets[i] ?? 0, lines[i] ?? ''));
      const entries = await readAll(store, 'r1');
      expect(entries.every((e) => e.kind === 'data')).toBe(true);
      expect(entries.map((e) => (e.kind === 'data' ? e.piece.data : '')).join('')).toBe(
        lines.join(''),
      );
    });

    it('keeps a piece appended twice at the same offset once', async () => {
      const store = await fresh();
      await store.appendLog(piece(0, 'one\n'));
      await store.appendLog(piece(0, 'one\n'));
      await store.appendLog(piece(4, 'two\n'));
      await store.appendLog(piece(0, 'one\n'));
      expect(shown(await readAll(store, 'r1'))).toEqual(['pod-1/0/1@0:one\n', 'pod-1/0/1@4:two\n']);
    });

    it('keeps the head and the tail of a log past its cap, with a marker of the bytes left out', async () => {
      const store = await fresh();
      const capBytes = 1000;
      const line = (i: number): string => `${String(i).padStart(99, '.')}\n`; // 100 bytes
      for (let i = 0; i < 30; i++) await store.appendLog(piece(i * 100, line(i), { capBytes }));
      const entries = await readAll(store, 'r1');
      // Head: offsets < 500; tail: the newest 500 bytes; 2000 bytes between were dropped.
      expect(shown(entries)).toEqual([
        ...[0, 1, 2, 3, 4].map((i) => `pod-1/0/1@${i * 100}:${line(i)}`),
        'pod-1/0/1@500:gap 2000',
        ...[25, 26, 27, 28, 29].map((i) => `pod-1/0/1@${i * 100}:${line(i)}`),
      ]);
      // A restart that re-reads the log from the start leaves it as it was.
      for (let i = 0; i < 30; i++) await store.appendLog(piece(i * 100, line(i), { capBytes }));
      expect(shown(await readAll(store, 'r1'))).toEqual(shown(entries));
    });

    it('keeps NUL bytes, U+FFFD and a 1 MB single line as written', async () => {
      const store = await fresh();
      const nul = 'before\u0000after\n';
      const replaced = 'bad \uFFFD\uFFFD bytes\n';
      const long = `${'x'.repeat(1024 * 1024)}\n`;
      const at1 = Buffer.byteLength(nul);
      const at2 = at1 + Buffer.byteLength(replaced);
      await store.appendLog(piece(0, nul, { capBytes: 32 * 1024 * 1024 }));
      await store.appendLog(piece(at1, replaced, { capBytes: 32 * 1024 * 1024 }));
      await store.appendLog(piece(at2, long, { capBytes: 32 * 1024 * 1024 }));
      const entries = await readAll(store, 'r1');
      expect(entries.map((e) => (e.kind === 'data' ? [e.piece.offset, e.piece.data] : e))).toEqual([
        [0, nul],
        [at1, replaced],
        [at2, long],
      ]);
      await store.putRun(run({ uid: 'r1', message: 'nul \u0000 and \uFFFD' }));
      expect((await store.getRun({ uid: 'r1' }))?.run.message).toBe('nul \u0000 and \uFFFD');
    });

    it('sums usage by namespace, Workflow and UTC day, counting failed runs', async () => {
      const store = await fresh();
      const usage = (n: number) => ({ inputTokens: n, outputTokens: 2 * n, totalTokens: 3 * n });
      for (const fields of [
        { uid: 'a', workflow: 'w1', createdAt: '2026-03-01T01:00:00Z', usage: usage(1) },
        {
          uid: 'b',
          workflow: 'w1',
          createdAt: '2026-03-01T23:00:00Z',
          usage: usage(10),
          phase: 'Failed',
        },
        // 2026-03-02T00:30 in UTC: the next day.
        { uid: 'c', workflow: 'w1', createdAt: '2026-03-01T20:30:00-04:00', usage: usage(100) },
        { uid: 'd', workflow: 'w2', createdAt: '2026-03-01T05:00:00Z', usage: usage(1000) },
        {
          uid: 'e',
          namespace: 'team-b',
          workflow: 'w1',
          createdAt: '2026-03-01T05:00:00Z',
          usage: usage(5),
          phase: 'Failed',
        },
      ]) {
        await store.putRun(run(fields));
      }
      const a = await store.getRun({ uid: 'a' });
      if (a) await store.putRun({ ...a.run, deletedAt: '2026-03-04T00:00:00Z' });
      const row = (
        namespace: string,
        workflow: string,
        day: string,
        runs: number,
        failed: number,
        n: number,
      ) => ({
        namespace,
        workflow,
        day,
        runs,
        failed,
        ...usage(n),
      });
      expect(await store.usageByDay({})).toEqual([
        row('team-a', 'w1', '2026-03-01', 2, 1, 11),
        row('team-a', 'w2', '2026-03-01', 1, 0, 1000),
        row('team-b', 'w1', '2026-03-01', 1, 1, 5),
        row('team-a', 'w1', '2026-03-02', 1, 0, 100),
      ]);
      expect(
        await store.usageByDay({
          namespaces: ['team-a'],
          workflow: 'w1',
          from: '2026-03-02',
          to: '2026-03-02',
        }),
      ).toEqual([row('team-a', 'w1', '2026-03-02', 1, 0, 100)]);
      expect(await store.usageByDay({ to: '2026-03-01', namespaces: ['team-b'] })).toEqual([
        row('team-b', 'w1', '2026-03-01', 1, 1, 5),
      ]);
      expect(await store.usageByDay({ namespaces: [] })).toEqual([]);
    });

    it('marks a run deleted, and a later write of it without a deletion time keeps the mark', async () => {
      const store = await fresh();
      await store.putRun(run({ uid: 'r1' }));
      expect(await uids(store, { includeLive: false })).toEqual([]);
      await store.putRun(run({ uid: 'r1', deletedAt: '2026-01-09T00:00:00Z' }));
      expect((await store.getRun({ uid: 'r1' }))?.run.deletedAt).toBe('2026-01-09T00:00:00.000Z');
      expect(await uids(store, { includeLive: false })).toEqual(['r1']);
      await store.putRun(run({ uid: 'r1', phase: 'Failed' }));
      const again = await store.getRun({ uid: 'r1' });
      expect([again?.run.phase, again?.run.deletedAt]).toEqual([
        'Failed',
        '2026-01-09T00:00:00.000Z',
      ]);
    });

    it('refuses malformed records with archive_record_invalid, naming what is wrong', async () => {
      const store = await fresh();
      const error = await rejectsWith(
        store.putRun(run({ uid: 'r1', createdAt: 'last week' })),
        'archive_record_invalid',
      );
      expect(error.message).toContain('run r1 createdAt "last week"');
      await rejectsWith(store.appendLog(piece(-1, 'x\n')), 'archive_record_invalid');
      await rejectsWith(
        store.appendLog(piece(0, 'x\n', { capBytes: 0 })),
        'archive_record_invalid',
      );
      await rejectsWith(
        store.putRun(run({ uid: 'r1', deletedAt: 'soon' })),
        'archive_record_invalid',
      );
      expect(await store.listRuns({})).toEqual({ runs: [] });
    });

    it('migrates twice as a no-op', async () => {
      const store = await fresh();
      await store.putRun(run({ uid: 'r1' }));
      await store.migrate();
      await store.migrate();
      expect(await uids(store, {})).toEqual(['r1']);
    });

    it('refuses a schema newer than the code knows', async () => {
      const store = await fresh();
      await fixtures.recordSchemaVersion(store, 9999);
      const error = await rejectsWith(store.migrate(), 'archive_schema_newer');
      expect(error.message).toContain('9999');
    });
  });
}
