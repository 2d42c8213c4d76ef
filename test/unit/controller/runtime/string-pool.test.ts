// The informer's string pool: cached objects keep their values, and repeated ones once.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { shareCachedStrings } from '../../../../src/controller/runtime/informer.js';
import {
  createStringPool,
  MAX_SHARED_LENGTH,
  shareStrings,
} from '../../../../src/controller/runtime/string-pool.js';

/** A parked run as the apiserver sends it: its conditions repeat one reason and message. */
const parkedRun = (index: number) =>
  JSON.parse(
    JSON.stringify({
      metadata: { name: `run-${index}`, uid: `uid-${index}`, labels: { app: 'lorenz' } },
      spec: { workflowRef: { name: 'parked' }, issue: { identifier: `X-${index}`, state: 'Todo' } },
      status: {
        phase: 'Pending',
        message: 'the Workflow is suspended',
        conditions: ['Succeeded', 'Finished', 'Reconciling', 'Stalled'].map((type) => ({
          type,
          status: 'False',
          reason: 'WorkflowSuspended',
          message: 'the Workflow is suspended',
          lastTransitionTime: '2026-12-06T07:37:44Z',
        })),
      },
    }),
  ) as Parameters<typeof shareCachedStrings>[0];

/** A full collection, so that what stays is what the objects hold. */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

describe('string pool', () => {
  it('leaves every value as it was, arrays and nesting included', () => {
    const pool = createStringPool();
    const long = 'x'.repeat(MAX_SHARED_LENGTH + 1);
    const object = { a: 'one', b: ['two', { c: 'three', d: 4, e: null }], f: long, g: true };
    const before = structuredClone(object);
    shareStrings(object, pool);
    shareStrings(undefined, pool);
    expect(object).toEqual(before);
    expect(pool('one')).toBe('one');
  });

  it('starts afresh past its limit, values unchanged', () => {
    const pool = createStringPool(2);
    expect(['a', 'b', 'c', 'a'].map(pool)).toEqual(['a', 'b', 'c', 'a']);
  });

  it('keeps 5000 cached runs in less memory than their parsed copies', () => {
    const heapOf = (share: boolean) => {
      const pool = createStringPool();
      collectGarbage();
      const before = process.memoryUsage().heapUsed;
      const kept = Array.from({ length: 5000 }, (_, index) => {
        const run = parkedRun(index);
        if (share) shareCachedStrings(run, pool);
        return run;
      });
      collectGarbage();
      const used = process.memoryUsage().heapUsed - before;
      expect(kept).toHaveLength(5000);
      return used;
    };
    const plain = heapOf(false);
    const shared = heapOf(true);
    expect(shared).toBeLessThan(plain * 0.8);
  });
});
