// The controller's tracker adapters: one per Workflow, shared by the polls and the tools
// gateway, rebuilt when settings, key or board change; a board kept in a ConfigMap.
import { describe, expect, it } from 'vitest';
import { createTrackerCache } from '../../../../src/controller/shared/trackers.js';
import { parseConfig } from '../../../../src/workflow/config.js';
import { FakeKubeClient, failWith } from '../../../support/fakes/controller.js';
import { workflow } from '../../../support/fakes/objects.js';

const local = parseConfig({ tracker: { kind: 'local' } }).config;
const memory = parseConfig({
  tracker: { kind: 'memory', issues: [{ id: '1', identifier: 'M-1', title: 'm', state: 'Todo' }] },
}).config;
const boardFile = (status: string) => `---\nstatus: ${status}\n---\n# From GitOps\n`;

describe('the controller tracker cache', () => {
  it('reads a local board from the ConfigMap spec.trackerBoardRef names', async () => {
    const client = new FakeKubeClient();
    client.answer({
      match: 'GET configmaps/board',
      answer: { body: { data: { 'BOARD-1.md': boardFile('Todo'), 'notes.txt': 'ignored' } } },
    });
    const cache = createTrackerCache(client);
    const tracker = await cache.get(workflow({ trackerBoardRef: { name: 'board' } }), local);
    expect((await tracker.fetchCandidates()).map((issue) => issue.identifier)).toEqual(['BOARD-1']);
    // A board from a ConfigMap is read-only: the agent's writes are refused, clearly.
    await expect(tracker.writer?.comment('BOARD-1', 'hi')).rejects.toThrow(/read-only/);
  });

  it('says which ConfigMap is missing', async () => {
    const client = new FakeKubeClient();
    client.answer(failWith('GET configmaps/*', 404, 'NotFound'));
    const cache = createTrackerCache(client);
    await expect(
      cache.get(workflow({ trackerBoardRef: { name: 'gone' } }), local),
    ).rejects.toMatchObject({
      code: 'invalid_tracker_config',
      message: 'ConfigMap gone (spec.trackerBoardRef) not found',
    });
  });

  it('keeps one adapter per Workflow, so the tools gateway and the poll see one board', async () => {
    const cache = createTrackerCache(new FakeKubeClient());
    const owner = workflow();
    const first = await cache.get(owner, memory);
    await first.writer?.updateState('1', 'Done');
    const again = await cache.get(owner, memory);
    expect(again).toBe(first);
    expect(await again.fetchCandidates()).toEqual([]);
    cache.forget(owner.metadata.namespace ?? '', owner.metadata.name ?? '');
    expect(await cache.get(owner, memory)).not.toBe(first);
  });

  it('builds a new adapter when the board changes', async () => {
    const client = new FakeKubeClient();
    const board = (status: string) => ({
      match: 'GET configmaps/board',
      answer: { body: { data: { 'BOARD-1.md': boardFile(status) } } },
    });
    client.answer(board('Todo'));
    const cache = createTrackerCache(client);
    const owner = workflow({ trackerBoardRef: { name: 'board' } });
    const before = await cache.get(owner, local);
    client.answer(board('Done'));
    const after = await cache.get(owner, local);
    expect(after).not.toBe(before);
    expect(await after.fetchCandidates()).toEqual([]);
  });
});
