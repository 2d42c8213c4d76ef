/**
 * A lane: at most `width` tasks at once, the rest waiting their turn in order. What a burst
 * can wait for goes through one, so that it never takes the apiserver from what cannot
 * wait (a start's status write, behind the Pod creates of the starts after it).
 */
export type Lane = <T>(task: () => Promise<T>) => Promise<T>;

export function createLane(width: number): Lane {
  let running = 0;
  const waiting: (() => void)[] = [];
  const release = () => {
    running -= 1;
    waiting.shift()?.();
  };
  return async <T>(task: () => Promise<T>): Promise<T> => {
    if (running >= width) await new Promise<void>((resolve) => waiting.push(resolve));
    running += 1;
    try {
      return await task();
    } finally {
      release();
    }
  };
}
