/**
 * Runs `work` over `items` with at most `workers` calls in flight, results in the items' order.
 * Each call is told which worker runs it, so a worker can own a resource (a read buffer) that
 * its calls reuse instead of allocating one each.
 */
export async function mapConcurrently<T, R>(
  items: readonly T[],
  workers: number,
  work: (item: T, worker: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (index: number): Promise<void> => {
    // Single-threaded: taking `next` and moving it on happen with no await between them.
    while (next < items.length) {
      const at = next++;
      results[at] = await work(items[at] as T, index);
    }
  };
  const count = Math.max(1, Math.min(workers, items.length));
  await Promise.all(Array.from({ length: count }, (_, index) => worker(index)));
  return results;
}
