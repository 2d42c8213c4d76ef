// A running slot whose agent waits for a person says so in status.slots: AwaitingApproval or
// AwaitingAnswer, with the request's title and id, and the tracker's refusal when there was one.
import { describe, expect, it } from 'vitest';
import type { InboxPending, SlotStatus } from '../../../../src/api/index.js';
import { awaitingSlots } from '../../../../src/controller/issuerun/slot-waits.js';
import { runStatus } from '../../../../src/controller/issuerun/status.js';
import { T0, permissionRequest } from '../../../support/fakes/objects.js';

const pending = (extra: Partial<InboxPending> = {}) =>
  permissionRequest({ title: 'Run git push', ...extra });

const running: SlotStatus = {
  slot: 0,
  phase: 'Running',
  reason: 'Running',
  message: 'the agent is running',
  attempt: 1,
};

describe('slots awaiting a person', () => {
  it.each<[string, SlotStatus, InboxPending[] | undefined, Partial<SlotStatus>]>([
    [
      'a permission request',
      running,
      [pending()],
      { reason: 'AwaitingApproval', message: 'Run git push (request a1-s0-1)' },
    ],
    [
      'a question',
      running,
      [pending({ kind: 'question', title: 'Which DB?' })],
      { reason: 'AwaitingAnswer', message: 'Which DB? (request a1-s0-1)' },
    ],
    [
      'a request whose comment the tracker refused',
      running,
      [pending({ commentError: 'HTTP 403' })],
      {
        reason: 'AwaitingApproval',
        message: 'Run git push (request a1-s0-1); the tracker refused the comment: HTTP 403',
      },
    ],
    [
      'the oldest of two',
      running,
      [pending(), pending({ id: 'a1-s0-2', title: 'second' })],
      { message: 'Run git push (request a1-s0-1)' },
    ],
    ['nothing pending', running, undefined, { reason: 'Running' }],
    ['a request of another slot', running, [pending({ slot: 1 })], { reason: 'Running' }],
    [
      'a request of an earlier attempt',
      { ...running, attempt: 2 },
      [pending()],
      { reason: 'Running' },
    ],
    [
      'a slot not running',
      { ...running, phase: 'Pending', reason: 'Pending' },
      [pending()],
      { reason: 'Pending' },
    ],
  ])('%s', (_name, slot, requests, expected) => {
    expect(awaitingSlots([slot], requests)[0]).toMatchObject(expected);
  });

  /** The status of a run whose one slot runs, with these requests waiting in its inbox. */
  const runningStatus = (requests: ReturnType<typeof pending>[]) =>
    runStatus({
      current: { inbox: { pending: requests } },
      generation: 1,
      attempt: 1,
      slots: [
        {
          slot: 0,
          attempt: 1,
          podName: 'eng-1-0-1',
          outcome: {
            phase: 'Running',
            reason: 'Running',
            message: 'running',
            finished: false,
            summary: null,
          },
        },
      ],
      state: { kind: 'progressing', phase: 'Running', reason: 'Running', message: 'running' },
      now: T0,
    });

  it('the run status built by the IssueRun reconciler shows it', () => {
    const status = runningStatus([pending()]);
    expect(status.slots?.[0]).toMatchObject({
      reason: 'AwaitingApproval',
      message: 'Run git push (request a1-s0-1)',
    });
    expect(status.inbox?.pending).toHaveLength(1);
    // The run's own reason (the REASON column of kubectl get issueruns) says it waits.
    expect(status).toMatchObject({
      phase: 'Running',
      reason: 'AwaitingApproval',
      message: 'slot 0: Run git push (request a1-s0-1)',
    });
  });

  it("the run reason stays the state's when nothing waits", () => {
    const status = runningStatus([]);
    expect(status).toMatchObject({ reason: 'Running', message: 'running' });
  });
});
