// `lorenz logs` of an archived run: the text and JSON lines of every piece, in order, with
// the cap's marker where the archive dropped some, and written in few large writes rather
// than one per line (a 32 MiB transcript spent as long in write(2) as in rendering).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openSqliteArchive } from '../../../../src/archive/sqlite.js';
import type { ArchiveStore } from '../../../../src/archive/types.js';
import { logsCommand } from '../../../../src/cli/runs/logs.js';
import type { UserCluster } from '../../../../src/cli/runs/kube.js';
import { KubeApiError, type KubeClient } from '../../../../src/controller/runtime/client.js';
import { userCluster } from '../user-cluster.js';

/** A cluster that has no such run: the CLI goes on to the archive, as for a deleted run. */
function emptyCluster(): UserCluster {
  const client: KubeClient = {
    request: async (options) => {
      throw new KubeApiError(404, { message: 'not found' }, 'GET', options.path);
    },
    stream: async () => {},
    close() {},
  };
  return userCluster(client);
}

const record = (type: string, message: unknown) => JSON.stringify({ type, message });
const say = (text: string) =>
  record('session_notification', {
    turn: 1,
    update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } },
  });

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function archiveOf(pieces: string[], capBytes = 32 * 1024 * 1024): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'lorenz-logs-'));
  dirs.push(dir);
  const path = join(dir, 'archive.db');
  const store = await openSqliteArchive(path);
  await store.putRun({
    uid: 'uid-1',
    namespace: 'team-a',
    name: 'eng-42',
    workflow: 'board',
    issueId: 'i-42',
    issueIdentifier: 'ENG-42',
    issueTitle: 'Fix the login form',
    phase: 'Succeeded',
    attempts: 1,
    createdAt: '2026-12-03T10:00:00.000Z',
    usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
    object: {},
    deletedAt: '2026-12-03T11:00:00.000Z',
  });
  let offset = 0;
  for (const data of pieces) {
    await store.appendLog({
      runUid: 'uid-1',
      podUid: 'pod-1',
      slot: 0,
      attempt: 1,
      offset,
      data,
      capBytes,
    });
    offset += Buffer.byteLength(data);
  }
  await store.close();
  return path;
}

async function logs(path: string, output: 'text' | 'json') {
  const writes: string[] = [];
  let err = '';
  const code = await logsCommand(
    ['eng-42', '--archive-dsn', `sqlite:${path}`, '--output', output],
    (text) => void writes.push(text),
    (text) => void (err += text),
    {
      cluster: emptyCluster,
      openStore: async (dsn): Promise<ArchiveStore> =>
        openSqliteArchive(dsn.replace(/^sqlite:/, '')),
    },
  );
  return { code, err, out: writes.join(''), writes: writes.length };
}

describe('lorenz logs of an archived run', () => {
  const pieces = [
    `${record('hook_execution', { slot: 0, hookName: 'before_run', status: 'started', command: 'npm ci' })}\n` +
      `${record('hook_output', { slot: 0, hookName: 'before_run', text: 'added 12 packages' })}\n`,
    `${record('hook_output', { slot: 0, hookName: 'before_run', text: ' in 2s\n' })}\n` +
      `${record('hook_execution', { slot: 0, hookName: 'before_run', status: 'completed', exitCode: 0, durationMs: 2100 })}\n` +
      `not a record\n\n${say('Reading \u001b[2Jthe form.')}\n`,
  ];

  it.each([
    {
      output: 'text' as const,
      expected:
        '==> slot 0 attempt 1 (archived) <==\n' +
        '▶ hook before_run: npm ci\n' +
        'added 12 packages in 2s\n' +
        '■ hook before_run completed: exit 0 in 2.1s\n' +
        'not a record\n' +
        'Reading \\x1b[2Jthe form.\n',
    },
    { output: 'json' as const, expected: pieces.join('') },
  ])('prints every piece in order as $output', async ({ output, expected }) => {
    const result = await logs(await archiveOf(pieces), output);
    expect(result.err).toBe('');
    expect(result.code).toBe(0);
    expect(result.out).toBe(expected);
  });

  it.each(['text', 'json'] as const)(
    'writes a 4 MiB %s log in a few large writes, every line kept',
    async (output) => {
      const line = `${say('Reading the failing test and the login form.')}\n`;
      const piece = line.repeat(Math.floor((256 * 1024) / line.length));
      const path = await archiveOf(Array.from({ length: 16 }, () => piece));
      const result = await logs(path, output);
      expect(result.code).toBe(0);
      const lines = result.out.split('\n').filter((text) => text.includes('login form'));
      expect(lines).toHaveLength(16 * Math.floor((256 * 1024) / line.length));
      // One write per line would be about 16 000 of them.
      expect(result.writes).toBeLessThanOrEqual(100);
    },
  );

  it('shows where the cap dropped part of the log, in both outputs', async () => {
    const line = `${say('x'.repeat(200))}\n`;
    const piece = line.repeat(40);
    const path = await archiveOf(
      Array.from({ length: 8 }, () => piece),
      3 * Buffer.byteLength(piece),
    );
    const text = await logs(path, 'text');
    expect(text.out).toMatch(/… elided \d+ bytes …\n/);
    const json = await logs(path, 'json');
    const marker = json.out.split('\n').find((entry) => entry.includes('log_elided'));
    expect(JSON.parse(marker ?? '{}')).toMatchObject({
      type: 'log_elided',
      message: { slot: 0, attempt: 1, bytes: expect.any(Number) },
    });
  });
});
