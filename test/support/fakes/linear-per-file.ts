// One Linear stand-in for a whole test file, back to the fixture board after each test.
import { fixtureData } from './linear-data.js';
import { type LinearStandIn, linearSchema, startLinearStandIn } from './linear-server.js';
import { standInPerFile } from './stand-in-per-file.js';

/**
 * Starts a stand-in (on the fixture board, answering `apiKey`) before the file's tests and
 * hands it to `use`; after each test its board, requests, faults, pagination and rewrite are
 * back to the start, and after the last it closes.
 */
export function linearStandInPerFile(apiKey: string, use: (standIn: LinearStandIn) => void): void {
  standInPerFile(
    () => {
      linearSchema();
      return startLinearStandIn(fixtureData(), apiKey);
    },
    (standIn) => {
      standIn.data = fixtureData();
      standIn.requests = [];
      standIn.faults = [];
      standIn.pagination = 'normal';
      standIn.rewrite = null;
    },
    use,
  );
}
