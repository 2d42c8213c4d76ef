import { describe, expect, it } from 'vitest';
import type { IssueRun, Workflow } from '../../../../src/api/index.js';
import { CONFIGMAPS, type KubeClient } from '../../../../src/controller/runtime/client.js';
import {
  ISSUERUNS,
  WORKFLOWS,
  type ConfigMapObject,
} from '../../../../src/controller/shared/resources.js';
import { createWorkflowReconciler } from '../../../../src/controller/workflow/reconciler.js';
import { FakeClock, FakeInformer, FakeKubeClient } from '../../../support/fakes/controller.js';
import { NS, T0, WORKFLOW, workflow } from '../../../support/fakes/objects.js';

const BOARD = [
  '---',
  'tracker:',
  '  kind: memory',
  '  issues: [{ id: "1", identifier: "ENG-1", title: "t", state: "Todo" }]',
  'polling: { interval_ms: 30000 }',
  'agent: { kind: codex }',
  '---',
  'Work on {{ issue.identifier }}.',
].join('\n');
const KEY = `${NS}/${WORKFLOW}`;

function setup(onCreateRun?: () => void) {
  const clock = new FakeClock(T0);
  const fake = new FakeKubeClient();
  const client: KubeClient = {
    ...fake,
    request: async (options) => {
      const answer = await fake.request(options);
      if (options.method === 'POST' && options.path.endsWith('/issueruns')) onCreateRun?.();
      return answer as never;
    },
    stream: (options) => fake.stream(options),
    close: () => fake.close(),
  };
  const reconcile = createWorkflowReconciler({
    client,
    workflows: new FakeInformer<Workflow>(WORKFLOWS, [workflow({ workflow: BOARD }, null)]),
    issueRuns: new FakeInformer<IssueRun>(ISSUERUNS, []),
    configMaps: new FakeInformer<ConfigMapObject>(CONFIGMAPS, []),
    now: clock.now,
  });
  /** Polls made by the reconcile (each dispatches ENG-1 again: the fake keeps no runs). */
  const polls = async () => {
    const from = fake.actions.length;
    const result = await reconcile(KEY);
    return {
      polled: fake.actions.slice(from).some((a) => a.summary === 'POST issueruns/wf-eng-1'),
      result,
    };
  };
  return { clock, reconcile, polls };
}

describe('pollNow', () => {
  it('makes the next reconcile poll, whatever the interval says', async () => {
    const { clock, reconcile, polls } = setup();
    expect((await polls()).polled).toBe(true);
    clock.advance(1000);
    expect(await polls()).toEqual({ polled: false, result: { requeueAfter: 29_000 } });
    reconcile.pollNow(KEY);
    expect(await polls()).toEqual({ polled: true, result: { requeueAfter: 30_000 } });
    clock.advance(1000);
    expect((await polls()).polled).toBe(false);
  });

  it('a wake during a poll makes the next reconcile poll again', async () => {
    let wakeDuringPoll = false;
    const state = setup(() => {
      if (wakeDuringPoll) state.reconcile.pollNow(KEY);
    });
    expect((await state.polls()).polled).toBe(true);
    state.clock.advance(1000);
    expect((await state.polls()).polled).toBe(false);
    state.reconcile.pollNow(KEY);
    wakeDuringPoll = true;
    expect((await state.polls()).polled).toBe(true); // and woken again while it polled
    wakeDuringPoll = false;
    state.clock.advance(10);
    expect((await state.polls()).polled).toBe(true);
    state.clock.advance(10);
    expect((await state.polls()).polled).toBe(false);
  });

  it('is a no-op for a Workflow never polled (its first poll is at once anyway)', async () => {
    const { reconcile, polls } = setup();
    reconcile.pollNow('other/never');
    reconcile.pollNow(KEY);
    expect((await polls()).polled).toBe(true);
  });
});
