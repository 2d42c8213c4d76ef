// A Pod's log follow stream that stays open after the Pod ended (a connection cut without a
// reset, through an apiserver that went away) must not hold the run for ever: past
// FOLLOW_AFTER_END_MS it is cut, and a plain read takes the whole log.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { RequestOptions } from '../../../../src/controller/runtime/client.js';
import {
  FOLLOW_AFTER_END_MS,
  createLogFollowers,
} from '../../../../src/controller/issuerun/log-follower.js';
import { FakeKubeClient } from '../../../support/fakes/controller.js';

const TARGET = {
  namespace: 'ns',
  podName: 'run-0-1',
  podUid: 'pod-uid',
  runKey: 'ns/run',
  runUid: 'run-uid',
  slot: 0,
  attempt: 1,
};
const LOG = [
  {
    type: 'hook_execution',
    message: { status: 'started', hookName: 'before_run', command: 'true', cwd: '/w', slot: 0 },
  },
  { type: 'run_completed', message: { slots: [] } },
].map((record) => JSON.stringify(record));

/** Follow reads hang until aborted, as a half-open connection does; plain reads give LOG. */
class HangingFollowClient extends FakeKubeClient {
  readonly reads: boolean[] = [];

  override stream(options: RequestOptions & { onLine: (line: string) => void }): Promise<void> {
    const follow = options.query?.['follow'] === true;
    this.reads.push(follow);
    if (!follow) {
      for (const line of LOG) options.onLine(line);
      return Promise.resolve();
    }
    return new Promise((_resolve, reject) => {
      options.signal?.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
    });
  }
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('a follow stream still open after its Pod ended', () => {
  beforeEach(() => vi.useFakeTimers({ toFake: ['Date'], now: Date.parse('2026-03-01T10:00:00Z') }));
  afterEach(() => vi.useRealTimers());

  it('is cut after FOLLOW_AFTER_END_MS, and a plain read takes the whole log', async () => {
    const client = new HangingFollowClient();
    const hooks: string[] = [];
    const followers = createLogFollowers({
      client,
      onHook: async (_state, record) => void hooks.push(record.message.hookName),
      onProgress: () => {},
    });
    followers.ensure(TARGET, true);
    // The Pod ended: the reconciler asks for the rest of the log, while the follow hangs.
    const first = followers.ensure(TARGET, false);
    await settle();
    expect(first.streaming).toBe(true);
    vi.setSystemTime(Date.now() + FOLLOW_AFTER_END_MS - 1);
    followers.ensure(TARGET, false);
    await settle();
    expect(client.reads).toEqual([true]);

    vi.setSystemTime(Date.now() + 1);
    followers.ensure(TARGET, false);
    await settle();
    const state = followers.ensure(TARGET, false);
    await settle();
    expect(client.reads).toEqual([true, false]);
    expect(state).toMatchObject({ completed: true, drained: true, failures: 0, streaming: false });
    expect(state.lastError).toBeUndefined();
    expect(hooks).toEqual(['before_run']);
  });
});
