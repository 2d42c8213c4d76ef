// Two writers of one IssueRun status in one process (the IssueRun reconciler and the review
// controller) share the status store: its updates run one after another per key, and a status
// the reconciler built keeps the review loop's fields from the freshest status known.
import { describe, expect, it } from 'vitest';
import type { IssueRun, IssueRunStatus } from '../../../../src/api/index.js';
import {
  carryInbox,
  carryReview,
  createRunStatusStore,
} from '../../../../src/controller/issuerun/status-store.js';
import { ISSUERUNS } from '../../../../src/controller/shared/resources.js';
import { FakeInformer, FakeKubeClient } from '../../../support/fakes/controller.js';
import { NS, RUN, T0, issueRun, writtenStatus } from '../../../support/fakes/objects.js';
import { eachNamedCase } from '../../../support/cases.js';

const KEY = `${NS}/${RUN}`;
const pullRequest = { number: 7, url: 'https://h/o/r/pull/7', state: 'open' as const };

function setUp(status: IssueRunStatus = { phase: 'Pending', git: { branch: 'b' } }) {
  const client = new FakeKubeClient();
  const run = issueRun({ status });
  const issueRuns = new FakeInformer<IssueRun>(ISSUERUNS, [run]);
  const store = createRunStatusStore({ client, issueRuns, now: () => T0, progressIntervalMs: 0 });
  return { client, run, store };
}

const statusWrites = (client: FakeKubeClient) =>
  client.actions.filter((a) => a.method === 'PATCH' && a.subresource === 'status').length;

describe('the status store update', () => {
  it('runs concurrent updates of one key one after another: none wipes the other', async () => {
    const { client, run, store } = setUp();
    await Promise.all([
      store.update(KEY, run, (s) => ({ ...s, review: { ...s.review, round: 1 } })),
      store.update(KEY, run, (s) => ({ ...s, review: { ...s.review, linkCommented: true } })),
      store.update(KEY, run, (s) => ({ ...s, git: { branch: 'b', pullRequest } })),
    ]);
    expect(statusWrites(client)).toBe(3);
    expect(writtenStatus<IssueRunStatus>(client)).toEqual({
      phase: 'Pending',
      git: { branch: 'b', pullRequest },
      review: { round: 1, linkCommented: true },
    });
    expect(store.fresh(KEY, run).status?.review).toEqual({ round: 1, linkCommented: true });
  });

  it('writes nothing when the change is none or null', async () => {
    const { client, run, store } = setUp();
    const same = await store.update(KEY, run, (s) => ({ ...s }));
    await store.update(KEY, run, () => null);
    expect(statusWrites(client)).toBe(0);
    expect(same.status).toEqual(run.status);
  });

  it('keeps the review fields in a status the reconciler built from an older one', async () => {
    const { client, run, store } = setUp();
    await store.update(KEY, run, (s) => ({
      ...s,
      git: { branch: 'b', pullRequest },
      review: { phase: 'RoundScheduled', requestedRound: 1 },
    }));
    // Built from the run as it was before the review controller wrote.
    await store.patch(KEY, run, { phase: 'Running', git: { branch: 'b' } }, true);
    expect(writtenStatus<IssueRunStatus>(client)).toEqual({
      phase: 'Running',
      git: { branch: 'b', pullRequest },
      review: { phase: 'RoundScheduled', requestedRound: 1 },
    });
  });

  it('a patch and an update issued together both land', async () => {
    const { client, run, store } = setUp();
    await Promise.all([
      store.patch(KEY, run, { phase: 'Running', git: { branch: 'b' } }, true),
      store.update(KEY, run, (s) => ({ ...s, review: { phase: 'Open' } })),
    ]);
    expect(writtenStatus<IssueRunStatus>(client)).toEqual({
      phase: 'Running',
      git: { branch: 'b' },
      review: { phase: 'Open' },
    });
  });
});

describe('carrying the review fields over', () => {
  eachNamedCase('%s', carryReview, [
    ['nothing to carry', { phase: 'Running' }, undefined, { phase: 'Running' }],
    [
      'the latest review and pull request win',
      { phase: 'Running', git: { branch: 'b' }, review: { round: 0 } },
      { git: { branch: 'b', pullRequest }, review: { round: 1 } },
      { phase: 'Running', git: { branch: 'b', pullRequest }, review: { round: 1 } },
    ],
    [
      'a review the latest status lacks is not invented',
      { phase: 'Running', review: { round: 3 } },
      { phase: 'Pending' },
      { phase: 'Running' },
    ],
  ]);
});

describe('carrying the inbox over', () => {
  const inbox = { pending: [], steerSeq: 2, handledComments: ['9'] };

  eachNamedCase('%s', carryInbox, [
    ['nothing to carry', { phase: 'Running' }, undefined, { phase: 'Running' }],
    [
      'the latest inbox wins',
      { phase: 'Running', inbox: { steerSeq: 1 } },
      { inbox },
      { phase: 'Running', inbox },
    ],
    [
      'an inbox the latest status lacks is not invented',
      { phase: 'Running', inbox },
      {},
      { phase: 'Running' },
    ],
  ]);

  it('a status the reconciler built from an older one keeps the inbox the inbox controller wrote', async () => {
    const { client, run, store } = setUp();
    await store.update(KEY, run, (s) => ({ ...s, inbox }));
    await store.patch(KEY, run, { phase: 'Running', git: { branch: 'b' } }, true);
    expect(writtenStatus<IssueRunStatus>(client)).toEqual({
      phase: 'Running',
      git: { branch: 'b' },
      inbox,
    });
  });
});
