// The process node binds Pods itself (there is no scheduler). A bind that fails on the way
// (an apiserver restarting) must be tried again: the Pod does not change, so no watch event
// would bring it back, and it would stay Pending forever (found by the chaos suite).
import { describe, expect, it } from 'vitest';
import type { CoreV1Api, V1Pod } from '@kubernetes/client-node';
import { bindUntilDone } from '../../../hack/process-node/pod-watcher.js';

const pod: V1Pod = { metadata: { name: 'p', namespace: 'default', uid: 'u1' } };

function core(answers: Array<'ok' | 'down' | 409>): { api: CoreV1Api; calls: () => number } {
  let calls = 0;
  const api = {
    createNamespacedPodBinding: () => {
      const answer = answers[Math.min(calls++, answers.length - 1)];
      if (answer === 'ok') return Promise.resolve({});
      if (answer === 'down') return Promise.reject(new TypeError('fetch failed'));
      return Promise.reject(Object.assign(new Error('conflict'), { code: 409 }));
    },
  };
  return { api: api as unknown as CoreV1Api, calls: () => calls };
}

describe('process node binding', () => {
  it('tries again until the apiserver takes the bind', async () => {
    const { api, calls } = core(['down', 'down', 'ok']);
    const logged: string[] = [];
    await bindUntilDone(
      api,
      pod,
      'node-1',
      (line) => logged.push(line),
      () => false,
    );
    expect(calls()).toBe(3);
    expect(logged).toEqual([
      expect.stringMatching(/bind default\/p: .*retrying/),
      expect.anything(),
    ]);
  });

  it('stops at a conflict: another node has it', async () => {
    const { api, calls } = core([409]);
    await bindUntilDone(
      api,
      pod,
      'node-1',
      () => undefined,
      () => false,
    );
    expect(calls()).toBe(1);
  });

  it('stops trying once the node stops', async () => {
    const { api, calls } = core(['down']);
    let stopped = false;
    // The node stops while the first bind fails (its log line is the moment).
    const stopOnLog = () => {
      stopped = true;
    };
    await bindUntilDone(api, pod, 'node-1', stopOnLog, () => stopped);
    expect(calls()).toBe(1);
  });
});
