// A lane runs at most its width of tasks at once and the rest in the order they came.
import { describe, expect, it } from 'vitest';
import { createLane } from '../../../../src/controller/runtime/lane.js';

/** A task that starts when the lane lets it and ends when the test says. */
function heldTask(started: string[], name: string) {
  let finish: () => void = () => {};
  const ended = new Promise<void>((resolve) => (finish = resolve));
  return {
    run: async () => {
      started.push(name);
      await ended;
      return name;
    },
    finish: () => finish(),
  };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('a lane', () => {
  it('starts no more than its width at once, and the next in order as one ends', async () => {
    const lane = createLane(2);
    const started: string[] = [];
    const tasks = ['a', 'b', 'c', 'd'].map((name) => heldTask(started, name));
    const results = tasks.map((task) => lane(task.run));
    await turn();
    expect(started).toEqual(['a', 'b']);
    tasks[1]?.finish();
    await turn();
    expect(started).toEqual(['a', 'b', 'c']);
    for (const task of tasks) task.finish();
    expect(await Promise.all(results)).toEqual(['a', 'b', 'c', 'd']);
    expect(started).toEqual(['a', 'b', 'c', 'd']);
  });

  it('frees the place of a task that failed, and passes its error on', async () => {
    const lane = createLane(1);
    const failed = lane(() => Promise.reject(new Error('refused')));
    const next = lane(() => Promise.resolve('after'));
    await expect(failed).rejects.toThrow('refused');
    expect(await next).toBe('after');
  });
});
