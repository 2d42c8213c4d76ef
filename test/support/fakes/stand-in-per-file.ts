// One tracker stand-in for a whole test file: what the Jira and Linear helpers share.
import { afterAll, afterEach, beforeAll } from 'vitest';

/**
 * Starts a stand-in (`start`) before the file's tests and hands it to `use`; after each test
 * `reset` puts its state back to the start, and after the last test it closes.
 */
export function standInPerFile<StandIn extends { close(): Promise<void> }>(
  start: () => Promise<StandIn>,
  reset: (standIn: StandIn) => void,
  use: (standIn: StandIn) => void,
): void {
  let standIn: StandIn | undefined;
  beforeAll(async () => {
    standIn = await start();
    use(standIn);
  });
  afterAll(() => standIn?.close());
  afterEach(() => {
    if (standIn !== undefined) reset(standIn);
  });
}
