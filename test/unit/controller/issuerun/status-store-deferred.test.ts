// A start's status written after its worker moved on (patchLater): the freshest status at
// once, written through a narrow lane, ordered before every later write of its key, skipped
// once the replica stops leading, and a failure handed back so the key is reconciled again.
import { describe, expect, it } from 'vitest';
import type { IssueRun, IssueRunStatus } from '../../../../src/api/index.js';
import { createRunStatusStore } from '../../../../src/controller/issuerun/status-store.js';
import { ISSUERUNS } from '../../../../src/controller/shared/resources.js';
import { FakeInformer, FakeKubeClient, failWith } from '../../../support/fakes/controller.js';
import { NS, RUN, T0, issueRun, writtenStatus } from '../../../support/fakes/objects.js';

const KEY = `${NS}/${RUN}`;
const started: IssueRunStatus = { phase: 'Pending', inputsConfigMap: 'inputs', slots: [] };

function setUp() {
  const client = new FakeKubeClient();
  const run = issueRun({});
  const issueRuns = new FakeInformer<IssueRun>(ISSUERUNS, [run]);
  const failed: string[] = [];
  const store = createRunStatusStore({
    client,
    issueRuns,
    now: () => T0,
    progressIntervalMs: 0,
    onDeferredFailed: (key) => failed.push(key),
  });
  return { client, run, store, failed };
}

const statusWrites = (client: FakeKubeClient) =>
  client.summaries().filter((summary) => summary === `PATCH issueruns/${RUN}/status`);

describe('a start status written later', () => {
  it('is the freshest status before it is written, and is written', async () => {
    const { client, run, store } = setUp();
    store.patchLater(KEY, run, started);
    expect(statusWrites(client)).toEqual([]);
    expect(store.fresh(KEY, run).status).toEqual(started);
    expect(store.freshRuns(NS)[0]?.status).toEqual(started);
    await store.settled();
    expect(writtenStatus<IssueRunStatus>(client)).toEqual(started);
    expect(store.fresh(KEY, run).status).toEqual(started);
    // Only to the run it was built for: by then the name may hold another.
    const [precondition] = client.actions.at(-1)?.body as object[];
    expect(precondition).toEqual({ op: 'test', path: '/metadata/uid', value: run.metadata.uid });
  });

  it('goes before a later write of its key, which builds on it', async () => {
    const { client, run, store } = setUp();
    store.patchLater(KEY, run, started);
    const running: IssueRunStatus = { ...started, phase: 'Running' };
    await store.patch(KEY, store.fresh(KEY, run), running, true);
    expect(statusWrites(client)).toHaveLength(2);
    expect(writtenStatus<IssueRunStatus>(client)).toEqual(running);
  });

  it('writes nothing once the signal is aborted (the replica stopped leading)', async () => {
    const { client, run, store, failed } = setUp();
    const leading = new AbortController();
    store.patchLater(KEY, run, started, leading.signal);
    leading.abort();
    await store.settled();
    expect(statusWrites(client)).toEqual([]);
    expect(store.fresh(KEY, run).status).toEqual(run.status);
    expect(failed).toEqual([]);
  });

  it('that fails is forgotten and handed back for the key to be reconciled again', async () => {
    const { client, run, store, failed } = setUp();
    client.answer(failWith(`PATCH issueruns/${RUN}/status`, 503));
    store.patchLater(KEY, run, started);
    await store.settled();
    expect(statusWrites(client)).toHaveLength(1);
    expect(failed).toEqual([KEY]);
    expect(store.fresh(KEY, run).status).toEqual(run.status);
  });

  it('writes at most eight at once: a burst trails behind the writes that cannot wait', async () => {
    const { client, store } = setUp();
    const runs = Array.from({ length: 20 }, (_, index) => issueRun({ name: `run-${index}` }));
    let inFlight = 0;
    let most = 0;
    const request = client.request.bind(client);
    client.request = async <T>(options: Parameters<FakeKubeClient['request']>[0]) => {
      inFlight += 1;
      most = Math.max(most, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 5));
      try {
        return await request<T>(options);
      } finally {
        inFlight -= 1;
      }
    };
    for (const each of runs) store.patchLater(`${NS}/${each.metadata.name}`, each, started);
    await store.settled();
    expect(client.actions.filter((action) => action.subresource === 'status')).toHaveLength(20);
    expect(most).toBe(8);
  });
});
