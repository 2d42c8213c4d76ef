// `lorenz describe run` shows the commits each attempt pushed: from the archive (a real
// SQLite store, AttemptRecord.git.pushedCommits) and from a live Pod's `push` git record; and
// what the workspace started from (status.workspaceSource, kept in the archived object).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteArchive } from '../../../../src/archive/sqlite.js';
import type { ArchiveStore } from '../../../../src/archive/types.js';
import { storeReader } from '../../../../src/cli/runs/archive-reader.js';
import { archivedView, formatRunView, pushedInLine } from '../../../../src/cli/runs/describe.js';
import { workspaceStartText } from '../../../../src/api/workspace-source.js';
import { eachCase, eachNamedCase } from '../../../support/cases.js';

const ZERO = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const C = 'c'.repeat(40);

let dir: string;
let store: ArchiveStore;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lorenz-describe-pushed-'));
  store = await openSqliteArchive(join(dir, 'archive.db'));
});
afterAll(async () => {
  await store?.close();
  await rm(dir, { recursive: true, force: true });
});

async function archive(
  uid: string,
  name: string,
  branch: string | undefined,
  pushed: string[][],
  object: Record<string, unknown> = {},
) {
  await store.putRun({
    uid,
    namespace: 'team-a',
    name,
    workflow: 'board',
    issueId: 'i1',
    issueIdentifier: 'ENG-42',
    issueTitle: 'Fix login',
    phase: 'Succeeded',
    attempts: pushed.length,
    createdAt: '2026-12-01T10:00:00Z',
    ...(branch ? { branch } : {}),
    usage: ZERO,
    object,
  });
  for (const [index, commits] of pushed.entries()) {
    await store.putAttempt({
      runUid: uid,
      slot: 0,
      attempt: index + 1,
      podName: `${name}-${index + 1}`,
      podUid: `${uid}-pod-${index + 1}`,
      phase: 'Succeeded',
      turns: 1,
      usage: ZERO,
      hooks: [],
      ...(branch ? { git: { branch, ...(commits.length ? { pushedCommits: commits } : {}) } } : {}),
    });
  }
}

const section = (text: string) => {
  const start = text.indexOf('Pushed commits:\n');
  if (start < 0) return null;
  const rest = text.slice(start + 'Pushed commits:\n'.length);
  return rest.slice(0, rest.search(/^\S/m)).trimEnd();
};

describe('lorenz describe run: pushed commits', () => {
  it.each([
    {
      name: 'two attempts, each its own',
      branch: 'lorenz/eng-42',
      pushed: [[`${B} Fix the form`, `${A} Add a test`], [`${C} Address review`]],
      shown: [
        'SLOT   ATTEMPT   COMMIT         SUBJECT',
        `0      1         ${B.slice(0, 12)}   Fix the form`,
        `0      1         ${A.slice(0, 12)}   Add a test`,
        `0      2         ${C.slice(0, 12)}   Address review`,
      ],
    },
    {
      name: 'a git run that pushed nothing',
      branch: 'lorenz/eng-42',
      pushed: [[]],
      shown: ['<none>'],
    },
    { name: 'no git workspace: no section', branch: undefined, pushed: [[]], shown: null },
  ])('$name', async ({ name, branch, pushed, shown }) => {
    const runName = name.replace(/[^a-z]+/g, '-');
    await archive(`uid-${runName}`, runName, branch, pushed);
    const reader = storeReader(store);
    const found = await reader.getRun('team-a', runName);
    expect(found).toBeDefined();
    const text = formatRunView(
      await archivedView(reader, found!),
      Date.parse('2026-12-02T00:00:00Z'),
    );
    const got = section(text);
    expect(got === null ? null : got.split('\n').map((line) => line.trim())).toEqual(shown);
  });

  eachCase('reads a live Pod log line %#', pushedInLine, [
    [
      JSON.stringify({
        type: 'git_workspace',
        message: { step: 'push', status: 'completed', commits: [{ sha: A, subject: 'x' }] },
      }),
      [{ sha: A, subject: 'x' }],
    ],
    [
      JSON.stringify({ type: 'git_workspace', message: { step: 'clone', status: 'completed' } }),
      [],
    ],
    [JSON.stringify({ type: 'stderr', message: '"git_workspace" "push"' }), []],
    ['{"git_workspace" "push" not json', []],
  ]);
});

describe('lorenz describe run: what the workspace started from', () => {
  eachNamedCase('%s', workspaceStartText, [
    ['clean', { type: 'Clean' }, 'clean'],
    [
      'a snapshot named by hand',
      {
        type: 'VolumeSnapshot',
        volumeSnapshot: 'web-prepared',
        digest: 'sha256:dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd',
      },
      'VolumeSnapshot web-prepared (sha256:dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd)',
    ],
    [
      'a warm snapshot, with its commit',
      {
        type: 'VolumeSnapshot',
        volumeSnapshot: 'board-warm-3',
        digest: 'sha256:dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd',
        commit: C,
      },
      `VolumeSnapshot board-warm-3 (sha256:dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd, commit ${C})`,
    ],
    ['not started: nothing recorded', undefined, undefined],
    ['not a record', 'clean', undefined],
  ]);

  it("shows the archived run's start in a Workspace line", async () => {
    const source = {
      type: 'VolumeSnapshot',
      volumeSnapshot: 'board-warm-3',
      digest: 'sha256:dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd',
      commit: C,
    };
    await archive('uid-warm', 'warm', undefined, [[]], { status: { workspaceSource: source } });
    const reader = storeReader(store);
    const found = await reader.getRun('team-a', 'warm');
    const text = formatRunView(
      await archivedView(reader, found!),
      Date.parse('2026-12-02T00:00:00Z'),
    );
    expect(text).toContain(
      `Workspace:    VolumeSnapshot board-warm-3 (sha256:dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd, commit ${C})\n`,
    );
  });
});
