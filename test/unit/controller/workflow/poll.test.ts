// The tracker side of the Workflow reconciler: what one poll creates, cancels, moves and
// removes, from what the tracker says and which runs the Workflow holds.
import { describe, expect, it } from 'vitest';
import type { IssueRun, Workflow } from '../../../../src/api/index.js';
import { dispatchedRun, pollWorkflow } from '../../../../src/controller/workflow/poll.js';
import { createTrackerCache } from '../../../../src/controller/shared/trackers.js';
import { ISSUERUNS } from '../../../../src/controller/shared/resources.js';
import { createMemoryTracker } from '../../../../src/tracker/memory.js';
import type { TrackerAdapter } from '../../../../src/tracker/types.js';
import { parseConfig } from '../../../../src/workflow/config.js';
import { LorenzError } from '../../../../src/workflow/errors.js';
import {
  FakeClock,
  FakeInformer,
  FakeKubeClient,
  conflict,
  failWith,
  type AnswerRule,
} from '../../../support/fakes/controller.js';
import { T0, finishedStatus, startedStatus, workflow } from '../../../support/fakes/objects.js';
import { todoIssue } from '../../../support/fakes/issues.js';

const config = parseConfig({
  tracker: { kind: 'memory' },
  agent: { max_concurrent_agents: 2 },
  polling: { interval_ms: 5000 },
}).config;
const issue = todoIssue;
const owner = workflow();

/** A run the Workflow dispatched for the issue, with a status. */
function held(identifier: string, state: string, status = startedStatus(1, 'Running')): IssueRun {
  return { ...dispatchedRun(owner, issue(identifier, { state })), status };
}

async function poll(
  board: ReturnType<typeof issue>[] | TrackerAdapter,
  runs: IssueRun[] = [],
  options: {
    workflow?: Workflow;
    answers?: AnswerRule[];
    startup?: boolean;
    runFinalizers?: string[];
    config?: typeof config;
  } = {},
) {
  const client = new FakeKubeClient();
  client.answer(...(options.answers ?? []));
  const tracker = Array.isArray(board) ? createMemoryTracker(board, config.tracker) : board;
  const keys: Array<string | undefined> = [];
  // The controller's cache, over a factory that records the key it was handed.
  const trackers = createTrackerCache(client, (_config, made) => {
    keys.push(made.apiKey);
    return tracker;
  });
  const result = await pollWorkflow(
    options.workflow ?? owner,
    options.config ?? config,
    undefined,
    {
      client,
      issueRuns: new FakeInformer<IssueRun>(ISSUERUNS, runs),
      now: new FakeClock(T0).now,
      trackerFor: (workflow, config) => trackers.get(workflow, config),
      ...(options.runFinalizers ? { runFinalizers: options.runFinalizers } : {}),
    },
    options.startup,
  );
  return { actions: client.summaries(0), result, client, keys };
}

describe('one poll of the tracker', () => {
  it('creates one IssueRun per dispatchable issue, owned by the Workflow, up to the cap', async () => {
    const { actions, result, client } = await poll([
      issue('ENG-1', { priority: 1 }),
      issue('ENG-2', { priority: 2 }),
      issue('ENG-3', { priority: 3 }),
      issue('ENG-4', { state: 'Done' }),
      issue('ENG-5', { blocked_by: [{ identifier: 'ENG-1', state: 'Todo' }] }),
    ]);
    expect(actions).toEqual(['POST issueruns/wf-eng-1', 'POST issueruns/wf-eng-2']);
    const created = client.actions[0]?.body as IssueRun;
    expect(created.spec).toMatchObject({
      workflowRef: { name: 'wf' },
      continueWhileActive: true,
      issue: { identifier: 'ENG-1', state: 'Todo' },
    });
    expect(created.metadata.ownerReferences?.[0]).toMatchObject({
      kind: 'Workflow',
      uid: owner.metadata.uid,
    });
    expect(result.dispatch).toMatchObject({
      candidates: 4,
      dispatched: 2,
      overCap: 1,
      blocked: [{ identifier: 'ENG-5', by: ['ENG-1'] }],
    });
    expect(result.reachable).toEqual({ ok: true });
    expect(result.requeueAfterMs).toBe(5000);
  });

  it.each([
    { archive: 'on', runFinalizers: ['lorenz.dev/archive'], expected: ['lorenz.dev/archive'] },
    { archive: 'off', runFinalizers: undefined, expected: undefined },
  ])(
    "creates runs with the archive's finalizer in the create itself while the archive is $archive",
    async ({ runFinalizers, expected }) => {
      const { actions, client } = await poll([issue('ENG-1')], [], {
        ...(runFinalizers ? { runFinalizers } : {}),
      });
      // One write per run: no patch adds the finalizer afterwards.
      expect(actions).toEqual(['POST issueruns/wf-eng-1']);
      expect((client.actions[0]?.body as IssueRun).metadata.finalizers).toEqual(expected);
    },
  );

  it('cancels a run whose issue turned terminal, left the active states or the tracker, saying where it went; moves the state of one still active', async () => {
    const { actions, client } = await poll(
      [
        issue('ENG-1', { state: 'Done' }),
        issue('ENG-2', { state: 'In Progress' }),
        issue('ENG-4', { state: 'Backlog' }),
      ],
      [held('ENG-1', 'Todo'), held('ENG-2', 'Todo'), held('ENG-3', 'Todo'), held('ENG-4', 'Todo')],
    );
    expect(actions).toEqual([
      'PATCH issueruns/wf-eng-1',
      'PATCH issueruns/wf-eng-2',
      'PATCH issueruns/wf-eng-3',
      'PATCH issueruns/wf-eng-4',
    ]);
    const stopped = (note: string, state?: string) => ({
      metadata: { annotations: { 'lorenz.dev/stop-note': note } },
      spec: { cancelRequested: true, ...(state ? { issue: { state } } : {}) },
    });
    // One write each: the run's end reads the state and the note together.
    expect(client.actions.map((action) => action.body)).toEqual([
      stopped(
        'ENG-1 moved to Done (a terminal state) while the run worked on it; the memory tracker does not say who moved it',
        'Done',
      ),
      { spec: { issue: { state: 'In Progress' } } },
      stopped("ENG-3 is gone from the memory tracker (deleted, or out of the Workflow's scope)"),
      stopped(
        'ENG-4 moved to Backlog (out of the active states) while the run worked on it; the memory tracker does not say who moved it',
        'Backlog',
      ),
    ]);
  });

  it('under review: keeps a run whose issue left the active states, stops one gone terminal; a run awaiting review takes no slot', async () => {
    const reviewing = parseConfig({
      tracker: { kind: 'memory' },
      agent: { max_concurrent_agents: 2 },
      workspace: { git: { repo: 'https://git.example.com/acme/app.git' } },
      review: {},
    }).config;
    const awaiting = {
      ...startedStatus(1, 'Pending'),
      slots: [{ slot: 0, attempt: 1, phase: 'Pending' as const, reason: 'AwaitingReview' }],
    };
    const { actions, client } = await poll(
      [
        issue('ENG-1', { state: 'In Review' }),
        issue('ENG-2', { state: 'In Review' }),
        issue('ENG-3', { state: 'Done' }),
        issue('ENG-4'),
        issue('ENG-5'),
      ],
      [held('ENG-1', 'Todo', awaiting), held('ENG-2', 'Todo'), held('ENG-3', 'Todo', awaiting)],
      { config: reviewing },
    );
    // ENG-2's attempt runs on; with ENG-1 and ENG-3 waiting (no slot), one of the two candidates fits.
    expect(actions).toEqual([
      'PATCH issueruns/wf-eng-1',
      'PATCH issueruns/wf-eng-2',
      'PATCH issueruns/wf-eng-3',
      'POST issueruns/wf-eng-4',
    ]);
    expect(client.actions.slice(0, 2).map((action) => action.body)).toEqual([
      { spec: { issue: { state: 'In Review' } } },
      { spec: { issue: { state: 'In Review' } } },
    ]);
    expect(client.actions[2]?.body).toMatchObject({ spec: { cancelRequested: true } });
  });

  it('replaces a finished run whose issue is a candidate again, removes one ended terminal, keeps others', async () => {
    const { actions } = await poll(
      [issue('ENG-1')],
      [
        held('ENG-1', 'In Review', finishedStatus(1000)),
        held('ENG-2', 'Done', finishedStatus(1000)),
        held('ENG-3', 'In Review', finishedStatus(1000)),
      ],
    );
    expect(actions).toEqual([
      'DELETE issueruns/wf-eng-1',
      'DELETE issueruns/wf-eng-2',
      'POST issueruns/wf-eng-1',
    ]);
  });

  it.each([
    ['the run it replaces is still being removed: polls again within a second', 'removed', 1000],
    ['a run of that name that is not going away: waits the interval', 'kept', 5000],
  ])('a dispatch refused with 409 because %s', async (_name, kind, requeue) => {
    const finishedRun = held('ENG-1', 'In Review', finishedStatus(1000));
    // kept: a run of that name the Workflow does not own (made by hand), so not its to remove.
    const runs = kind === 'removed' ? [finishedRun] : [];
    const { actions, result, client } = await poll([issue('ENG-1')], runs, {
      answers: [conflict('POST issueruns/*')],
    });
    expect(actions).toEqual([
      ...(kind === 'removed' ? ['DELETE issueruns/wf-eng-1'] : []),
      'POST issueruns/wf-eng-1',
    ]);
    if (kind === 'removed') {
      // Its objects go before its name does: the next run never meets them.
      expect(client.actions[0]?.body).toEqual({ propagationPolicy: 'Foreground' });
    }
    expect(result.dispatch.dispatched).toBe(0);
    expect(result.requeueAfterMs).toBe(requeue);
    expect(Date.parse(result.dispatch.nextPollTime ?? '')).toBe(T0.getTime() + requeue);
  });

  it('at start-up, removes finished runs whose issue has since ended terminal', async () => {
    const board = [issue('ENG-1', { state: 'Done' }), issue('ENG-2', { state: 'In Review' })];
    const finishedRuns = [
      held('ENG-1', 'In Review', finishedStatus(1000)),
      held('ENG-2', 'In Review', finishedStatus(1000)),
    ];
    expect((await poll(board, finishedRuns)).actions).toEqual([]);
    expect((await poll(board, finishedRuns, { startup: true })).actions).toEqual([
      'DELETE issueruns/wf-eng-1',
    ]);
  });

  it('leaves every run alone when the tracker fails, and says why', async () => {
    const down: TrackerAdapter = {
      kind: 'linear',
      fetchCandidates: () =>
        Promise.reject(new LorenzError('tracker_status', 'linear answered 503')),
      fetchByIds: () => Promise.reject(new LorenzError('tracker_status', 'linear answered 503')),
      fetchByStates: () => Promise.resolve([]),
    };
    const { actions, result } = await poll(down, [held('ENG-1', 'Todo')]);
    expect(actions).toEqual([]);
    expect(result.reachable).toEqual({
      ok: false,
      reason: 'tracker_status',
      message: 'linear answered 503',
    });
    expect(result.dispatch.lastError).toContain('503');
  });

  describe('the tracker key from spec.trackerSecretRef', () => {
    const withSecret = workflow({ trackerSecretRef: { name: 'linear', key: 'token' } });
    it('is read from the Secret and handed to the adapter only', async () => {
      const { actions, keys } = await poll([], [], {
        workflow: withSecret,
        answers: [
          {
            match: 'GET secrets/linear',
            answer: {
              body: { data: { token: Buffer.from('lin_api_s3cret\n').toString('base64') } },
            },
          },
        ],
      });
      expect(actions).toEqual(['GET secrets/linear']);
      expect(keys).toEqual(['lin_api_s3cret']);
    });

    it.each<[string, AnswerRule, string]>([
      [
        'a missing Secret',
        failWith('GET secrets/*', 404, 'NotFound'),
        'Secret linear (spec.trackerSecretRef) not found',
      ],
      [
        'a Secret without the key',
        { match: 'GET secrets/linear', answer: { body: { data: {} } } },
        'Secret linear (spec.trackerSecretRef) has no key token',
      ],
    ])('%s is missing_tracker_secret, and nothing is polled', async (_name, answer, message) => {
      const { result, keys } = await poll([issue('ENG-1')], [], {
        workflow: withSecret,
        answers: [answer],
      });
      expect(keys).toEqual([]);
      expect(result.reachable).toEqual({ ok: false, reason: 'missing_tracker_secret', message });
    });
  });
});
