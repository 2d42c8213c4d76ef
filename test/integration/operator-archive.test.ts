// The run archive against the real apiserver: every IssueRun carries the archive's
// finalizer, and its deletion (by the poller once its issue is Done, or by a user) waits
// until the archive holds the run, its attempts, its Events and its Pods' whole logs. A
// store that is down holds deletions back (never runs), a disk full says so on the run,
// the give-up releases with an Event and a metric, and a restart writes every record once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { delegatingArchive } from '../../src/archive/delegate.js';
import { describeRunCommand } from '../../src/cli/runs/describe.js';
import { getRunsCommand } from '../../src/cli/runs/get-runs.js';
import { logsCommand } from '../../src/cli/runs/logs.js';
import { realArchiveStores } from '../support/archive-stores.js';
import type { IssueRun } from '../../src/api/index.js';
import { ArchiveError, type ArchiveStore, type ArchivedRun } from '../../src/archive/types.js';
import type { ControllerRunOptions } from '../../src/controller/main.js';
import { archivedLogText, faultyArchive, type FaultyArchive } from '../support/archive-faults.js';
import {
  NAMESPACE,
  agentPodTemplate,
  path,
  until,
  useOperatorEnv,
  type EventView,
} from './operator-harness.js';

const FINALIZER = 'lorenz.dev/archive';
const SECRET_VALUE = 'arc-secret-value-0123456789';
// The real stores: a SQLite file on disk, and PostgreSQL started on loopback for this file.
const stores = realArchiveStores('lorenz-archive-it-');

const down = () => new ArchiveError('archive_unavailable', 'connection refused (test)');
const diskFull = () => new ArchiveError('archive_disk_full', 'database or disk is full (test)');

describe.each(stores)('the run archive on $name', ({ open: openStore }) => {
  const env = useOperatorEnv();
  let inner: ArchiveStore;
  let store: FaultyArchive;
  beforeAll(async () => {
    inner = await openStore();
    store = faultyArchive(inner);
    await restart();
  });
  afterAll(async () => {
    await env.controller?.stop();
    await inner.close();
  });

  async function restart(extra: Partial<ControllerRunOptions> = {}) {
    await env.controller?.stop();
    await env.startController({
      archive: store,
      archiveRetry: { baseMs: 200, maxMs: 1000 },
      ...extra,
    });
  }
  const exists = async (name: string) =>
    env.admin.request<IssueRun>({ path: path.issueRuns(name) }).then(
      (run) => run,
      () => undefined,
    );
  const gone = (name: string, ms = 90_000) =>
    until(`IssueRun ${name} gone`, async () => ((await exists(name)) ? undefined : true), ms);
  const archived = async (name: string): Promise<ArchivedRun> => {
    const found = await inner.getRun({ namespace: NAMESPACE, name });
    if (!found) throw new Error(`run ${name} is not in the archive`);
    return found;
  };
  const eventsOf = async (uid: string | undefined): Promise<EventView[]> =>
    (await env.admin.request<{ items: EventView[] }>({ path: path.events })).items.filter(
      (event) => event.regarding.uid === uid,
    );
  const metric = async (name: string): Promise<number> => {
    const text = (await env.controller?.manager.metrics.registry.metrics()) ?? '';
    const line = text.split('\n').find((entry) => entry.startsWith(`${name} `));
    return Number(line?.split(' ')[1] ?? 0);
  };
  const del = (name: string) =>
    env.admin.request({
      method: 'DELETE',
      path: path.issueRuns(name),
      body: { propagationPolicy: 'Foreground' },
    });
  /** Each piece of each Pod's log once, in order, no gaps, no overlaps. */
  async function expectLogOnce(uid: string) {
    const next = new Map<string, number>();
    for await (const entry of inner.readLog(uid)) {
      expect(entry.kind).toBe('data');
      if (entry.kind !== 'data') continue;
      const { podUid, offset, data } = entry.piece;
      expect(offset).toBe(next.get(podUid) ?? 0);
      next.set(podUid, offset + Buffer.byteLength(data));
    }
    expect(next.size).toBeGreaterThan(0);
  }

  /** A run command as a user types it, with the admin's kubeconfig and this file's store. */
  const cli = async (command: typeof getRunsCommand, args: string[]) => {
    let stdout = '';
    let stderr = '';
    const code = await command(
      [
        ...args,
        '-n',
        NAMESPACE,
        '--kubeconfig',
        env.cp.kubeconfigPath,
        '--archive-dsn',
        'sqlite:the-store-of-this-file',
      ],
      (text) => (stdout += text),
      (text) => (stderr += text),
      { openStore: async () => delegatingArchive(() => inner) },
    );
    return { code, stdout, stderr };
  };

  it('a tracker-driven run whose issue is Done is removed only once the archive holds it whole', async () => {
    const board = (state: string) =>
      `  issues:\n    - { id: "a1", identifier: "ARC-1", title: "Archive me", state: "${state}" }`;
    const text = (state: string) =>
      env.workflowText({
        tracker: board(state),
        pollingMs: 500,
        prompt: '@say hello-from-the-agent\n@write done.txt ok',
        hooks: { before_run: 'echo hook-said-hello' },
      });
    await env.createWorkflow('arc', text('Todo'));
    const first = await until('the run of ARC-1', () => exists('arc-arc-1'));
    // In the poller's create: no write of its own.
    expect(first.metadata.finalizers).toContain(FINALIZER);
    await until('an attempt of ARC-1 to succeed', async () => {
      const run = await exists('arc-arc-1');
      return (run?.status?.attempt ?? 0) >= 2 ? run : undefined;
    });
    await env.mergePatch(path.workflows('arc'), { spec: { workflow: text('Done') } });
    await gone('arc-arc-1');
    const found = await archived('arc-arc-1');
    expect(found.run).toMatchObject({
      uid: first.metadata.uid,
      workflow: 'arc',
      issueIdentifier: 'ARC-1',
      issueState: 'Done',
      phase: 'Succeeded',
    });
    expect(found.run.deletedAt).toBeDefined();
    expect(found.attempts.length).toBeGreaterThanOrEqual(1);
    const firstAttempt = found.attempts.find((attempt) => attempt.attempt === 1);
    expect(firstAttempt).toMatchObject({ slot: 0, phase: 'Succeeded', image: expect.any(String) });
    expect(firstAttempt?.podUid).not.toBe('');
    expect(firstAttempt?.hooks).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ hookName: 'before_run', status: 'completed' }),
      ]),
    );
    expect(found.events.map((event) => event.reason)).toEqual(
      expect.arrayContaining(['HookSucceeded', 'AttemptStarted']),
    );
    const log = await archivedLogText(inner, found.run.uid);
    expect(log).toContain('hook_execution');
    expect(log).toContain('hook-said-hello');
    expect(log).toContain('session_notification');
    expect(log).toContain('hello-from-the-agent');
    await expectLogOnce(found.run.uid);

    // What a user sees once it is gone: the CLI, through the kubeconfig and the archive.
    const table = await cli(getRunsCommand, ['--all']);
    expect(table.stdout).toMatch(/^arc-arc-1\s+arc\s+ARC-1\s+Succeeded\s.*Archived$/m);
    const transcript = await cli(logsCommand, ['arc-arc-1']);
    expect(transcript.code, transcript.stderr).toBe(0);
    expect(transcript.stdout).toContain('hook-said-hello');
    expect(transcript.stdout).toContain('hello-from-the-agent');
    const described = await cli(describeRunCommand, ['arc-arc-1']);
    expect(described.code, described.stderr).toBe(0);
    expect(described.stdout).toContain('ARC-1');
    expect(described.stdout).toContain('before_run');
  });

  it('a retried run keeps both attempts, and a restart mid-run writes every record once', async () => {
    await env.createWorkflow('arc-retry', {
      tracker: '  issues: []',
      prompt: '{% if attempt == 2 %}@write done.txt ok{% else %}@exit 3{% endif %}',
      maxRetryBackoffMs: 1000,
      hooks: { before_run: 'echo before-run-said-hi; sleep 2' },
    });
    await env.createIssueRun(
      'arc-r',
      'arc-retry',
      { identifier: 'R-1', title: 'Retry' },
      { retries: 1 },
    );
    // Made by a user without the finalizer: the archiver adds it (one patch).
    await until('the finalizer on a hand-made run', async () =>
      (await exists('arc-r'))?.metadata.finalizers?.includes(FINALIZER) ? true : undefined,
    );
    await until('attempt 1 running', async () => {
      const run = await exists('arc-r');
      return run?.status?.phase === 'Running' ? true : undefined;
    });
    await restart();
    const run = await env.finished('arc-r', 120_000);
    expect(run.status?.phase).toBe('Succeeded');
    await del('arc-r');
    await gone('arc-r');
    const found = await archived('arc-r');
    expect(found.attempts.map((attempt) => [attempt.attempt, attempt.phase])).toEqual([
      [1, 'Failed'],
      [2, 'Succeeded'],
    ]);
    for (const attempt of found.attempts) {
      expect(attempt.hooks.some((hook) => hook.hookName === 'before_run')).toBe(true);
    }
    const uids = found.events.map((event) => event.uid);
    expect(new Set(uids).size).toBe(uids.length);
    await expectLogOnce(found.run.uid);
    expect(await archivedLogText(inner, found.run.uid)).toContain('before-run-said-hi');
  });

  it("a user's delete of a running run waits for a store that is down, and goes once it is back", async () => {
    // A Secret the run Pod takes a variable from: its value must be nowhere in the archive,
    // neither in the log (the runner masks it) nor in the run object (the archiver masks
    // it there: here in the issue's title).
    await env.createSecret('arc-secret', { token: SECRET_VALUE });
    await env.createWorkflow(
      'arc-slow',
      {
        tracker: '  issues: []',
        hooks: { before_run: 'echo working "$ARC_TOKEN"; sleep 600' },
      },
      {
        podTemplate: agentPodTemplate({
          env: [
            {
              name: 'ARC_TOKEN',
              valueFrom: { secretKeyRef: { name: 'arc-secret', key: 'token' } },
            },
          ],
        }),
      },
    );
    await env.createIssueRun('arc-s', 'arc-slow', {
      identifier: 'S-1',
      title: `Slow, with ${SECRET_VALUE} in its title`,
    });
    await until('the slow run running', async () => {
      const run = await exists('arc-s');
      return run?.status?.phase === 'Running' && run.metadata.finalizers?.includes(FINALIZER)
        ? true
        : undefined;
    });
    // Its hook's first line read, and archived.
    await until('the running log in the archive', async () =>
      (await archivedLogText(inner, (await env.getRun('arc-s')).metadata.uid ?? '')).includes(
        'working',
      )
        ? true
        : undefined,
    );
    store.fail = down();
    try {
      await del('arc-s');
      await new Promise((resolve) => setTimeout(resolve, 4000));
      const held = await exists('arc-s');
      expect(held?.metadata.deletionTimestamp).toBeDefined();
      expect(held?.metadata.finalizers).toContain(FINALIZER);
      expect(await metric('lorenz_archive_pending_runs')).toBeGreaterThanOrEqual(1);
    } finally {
      store.fail = undefined;
    }
    await gone('arc-s');
    const found = await archived('arc-s');
    expect(found.run.deletedAt).toBeDefined();
    const log = await archivedLogText(inner, found.run.uid);
    // (The process node here does not resolve secretKeyRef variables: the hook prints none.)
    expect(log).toContain('working');
    expect(found.run.issueTitle).toBe('Slow, with [redacted] in its title');
    expect(JSON.stringify({ ...found, log })).not.toContain(SECRET_VALUE);
  });

  it('a disk full says so on the run (Event, condition); the run still finishes, its deletion waits', async () => {
    await env.createWorkflow('arc-full', {
      tracker: '  issues: []',
      hooks: { before_run: 'echo full' },
    });
    store.fail = diskFull();
    try {
      await env.createIssueRun('arc-f', 'arc-full', { identifier: 'F-1', title: 'Full' });
      const run = await env.finished('arc-f', 120_000);
      expect(run.status?.phase).toBe('Succeeded');
      const flagged = await until('the Archived=False condition', async () => {
        const seen = await exists('arc-f');
        const condition = seen?.status?.conditions?.find((entry) => entry.type === 'Archived');
        return condition?.status === 'False' ? condition : undefined;
      });
      expect(flagged.reason).toBe('ArchiveDiskFull');
      const events = await eventsOf(run.metadata.uid);
      expect(events.find((event) => event.reason === 'ArchiveFailed')?.note).toContain(
        'archive_disk_full',
      );
      await del('arc-f');
      await new Promise((resolve) => setTimeout(resolve, 2000));
      expect((await exists('arc-f'))?.metadata.deletionTimestamp).toBeDefined();
    } finally {
      store.fail = undefined;
    }
    await gone('arc-f');
    expect((await archived('arc-f')).run.phase).toBe('Succeeded');
  });

  it('gives up after --archive-give-up-after: released with an ArchiveAbandoned Event and a metric', async () => {
    await restart({ archiveGiveUpAfterMs: 3000 });
    await env.createWorkflow('arc-give', {
      tracker: '  issues: []',
      hooks: { before_run: 'echo give' },
    });
    await env.createIssueRun('arc-g', 'arc-give', { identifier: 'G-1', title: 'Give up' });
    const run = await env.finished('arc-g', 120_000);
    store.fail = down();
    try {
      await del('arc-g');
      await gone('arc-g', 30_000);
      const events = await eventsOf(run.metadata.uid);
      expect(events.map((event) => event.reason)).toContain('ArchiveAbandoned');
      expect(await metric('lorenz_archive_abandoned_total')).toBe(1);
      expect(
        await metric('lorenz_archive_failures_total{code="archive_unavailable"}'),
      ).toBeGreaterThan(0);
    } finally {
      store.fail = undefined;
    }
    await restart();
  });
});
