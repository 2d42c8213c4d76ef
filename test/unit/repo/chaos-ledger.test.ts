// The chaos suite's bookkeeping must be able to see what it is there to see: a second Pod
// for one attempt, a hook Event written twice, a run lost or unfinished, a write by a
// replica that did not lead. Fed made-up clusters and audit logs here.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { KubeClient } from '../../../src/controller/runtime/client.js';
import {
  brokenPromises,
  takeLedger,
  writesOutsideTerms,
  type AuditedWrite,
} from '../../chaos/ledger.js';

const dir = await mkdtemp(join(tmpdir(), 'chaos-ledger-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

const finishedRun = (name: string, phase = 'Succeeded', attempt = 1) => ({
  metadata: { name },
  status: {
    phase,
    attempt,
    reason: phase,
    conditions: [{ type: 'Finished', status: 'True', lastTransitionTime: '2026-11-30T10:00:05Z' }],
  },
});
const hookEvents = (run: string, attempt = 1) =>
  ['after_create', 'before_run', 'after_run', 'before_remove'].flatMap((hook, index) =>
    ['HookStarted', 'HookSucceeded'].map((reason, half) => ({
      metadata: { name: `${run}.0-${attempt}-${index * 2 + half}` },
      reason,
      note: `${hook} …`,
      regarding: { name: run },
    })),
  );
const podCreate = (name: string, code = 201) =>
  JSON.stringify({
    stage: 'ResponseComplete',
    verb: 'create',
    user: { username: 'lorenz-chaos-a' },
    objectRef: { resource: 'pods', namespace: 'default', name },
    responseStatus: { code },
    requestReceivedTimestamp: '2026-11-30T10:00:01.000000Z',
  });

function fakeCluster(runs: object[], events: object[]): KubeClient {
  const request = (options: { path: string }) =>
    Promise.resolve({ items: options.path.includes('/events') ? events : runs });
  return { request } as unknown as KubeClient;
}

describe('the chaos ledger', () => {
  it('finds nothing wrong in a clean load', async () => {
    const audit = join(dir, 'clean.log');
    await writeFile(audit, [podCreate('r-1-0-1'), podCreate('r-2-0-1')].join('\n'));
    const ledger = await takeLedger(
      fakeCluster(
        [finishedRun('r-1'), finishedRun('r-2')],
        [...hookEvents('r-1'), ...hookEvents('r-2')],
      ),
      audit,
      ['r-1', 'r-2'],
    );
    expect(brokenPromises(ledger)).toEqual([]);
    expect(ledger.lastFinishedAt).toBe(Date.parse('2026-11-30T10:00:05Z'));
  });

  it('counts a lost run, an unfinished one, a doubled Pod, a doubled and a missing hook Event', async () => {
    const audit = join(dir, 'broken.log');
    // r-1-0-1 created twice (the second time after a deletion by someone), a 409 does not count.
    await writeFile(
      audit,
      [podCreate('r-1-0-1'), podCreate('r-1-0-1', 409), podCreate('r-1-0-1')].join('\n'),
    );
    const events = [
      ...hookEvents('r-1'),
      { ...hookEvents('r-1')[3], metadata: { name: 'r-1.0-1-99' } },
      ...hookEvents('r-4').slice(1),
    ];
    const ledger = await takeLedger(
      fakeCluster(
        [
          finishedRun('r-1'),
          { metadata: { name: 'r-3' }, status: { phase: 'Running' } },
          finishedRun('r-4'),
          finishedRun('r-5', 'Succeeded', 2),
        ],
        [...events, ...hookEvents('r-5', 2)],
      ),
      audit,
      ['r-1', 'r-2', 'r-3', 'r-4', 'r-5'],
    );
    expect(ledger).toMatchObject({
      lost: 1,
      unfinished: 1,
      duplicatePods: 1,
      duplicateHookEvents: 1,
      missingHookEvents: 1,
      extraAttempts: 1,
    });
    // Six broken promises, the runs behind them named for the logs, and where r-3 stood.
    expect(brokenPromises(ledger)).toHaveLength(8);
    expect(ledger.stuck).toEqual(['r-3: Running']);
    expect(ledger.examples).toEqual({
      lost: ['r-2'],
      unfinished: ['r-3'],
      'duplicate hook Events': ['r-1'],
      'missing hook Events': ['r-4'],
      'duplicate Pods': ['r-1-0-1'],
    });
  });

  it.each<[string, Partial<AuditedWrite>, boolean]>([
    ['a write of the leader in its term', { user: 'a', at: 1_500 }, false],
    ['a write of the other replica before it led', { user: 'b', at: 1_500 }, true],
    [
      'a request of the killed leader received just after the kill',
      { user: 'a', at: 2_500 },
      false,
    ],
    ['a write of the killed leader well after the kill', { user: 'a', at: 3_200 }, true],
    ['a write of the new leader in its term', { user: 'b', at: 5_000 }, false],
    [
      'a Lease write of the standby (campaigning)',
      { user: 'b', at: 1_500, resource: 'leases' },
      false,
    ],
  ])('%s: outside the terms %s', (_case, write, outside) => {
    const terms = [
      { identity: 'a-1', user: 'a', from: 1_000, to: 2_000 },
      { identity: 'b-1', user: 'b', from: 4_000, to: 9_000 },
    ];
    const full: AuditedWrite = {
      verb: 'patch',
      resource: 'issueruns',
      name: 'x',
      code: 200,
      user: '',
      at: 0,
      ...write,
    };
    expect(writesOutsideTerms([full], terms)).toHaveLength(outside ? 1 : 0);
  });
});
