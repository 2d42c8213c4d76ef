// The decision both `lorenz approve` and the web view write (api/inbox-decisions.ts): which
// request, what entry, what patch. The commands' own tests cover their output and errors.
import { describe, expect, it } from 'vitest';
import {
  InboxDecisionError,
  boundedDecisions,
  pendingRequests,
  planDecision,
} from '../../../src/api/inbox-decisions.js';

const pending = (id: string, askedAt: string, kind = 'permission') => ({
  id,
  kind,
  slot: 0,
  attempt: 1,
  turn: 1,
  title: 't',
  options: [],
  askedAt,
  deadline: '2026-12-02T18:00:00Z',
});

describe('the decision of a waiting request', () => {
  it('reads pending requests oldest first, skipping what breaks the schema', () => {
    const run = {
      status: {
        inbox: {
          pending: [
            pending('a1-s0-2', '2026-12-02T17:05:00Z'),
            { id: 'a1-s0-9', kind: 'permission' },
            pending('a1-s0-1', '2026-12-02T17:00:00Z'),
            'nonsense',
          ],
        },
      },
    };
    expect(pendingRequests(run).map((each) => each.id)).toEqual(['a1-s0-1', 'a1-s0-2']);
    expect(pendingRequests({})).toEqual([]);
  });

  it('writes no resourceVersion it did not read, and keeps other entries as they are', () => {
    const other = { requestId: 'a0-s0-1', verdict: 'deny', by: 'bob' };
    const plan = planDecision(
      {
        spec: { decisions: [other] },
        status: { inbox: { pending: [pending('a1-s0-1', '2026-12-02T17:00:00Z')] } },
      },
      { verdict: 'deny', reason: 'no', by: 'alice' },
    );
    expect(plan.patch).toEqual({
      spec: {
        decisions: [other, { requestId: 'a1-s0-1', verdict: 'deny', reason: 'no', by: 'alice' }],
      },
    });
  });

  it('drops a reason from anything but a denial, and bounds the list', () => {
    const plan = planDecision(
      { status: { inbox: { pending: [pending('a1-s0-1', '2026-12-02T17:00:00Z')] } } },
      { verdict: 'approve', reason: 'ignored' },
    );
    expect(plan.entry).toEqual({ requestId: 'a1-s0-1', verdict: 'approve' });
    const many = Array.from({ length: 40 }, (_, i) => ({ requestId: `a0-s0-${i}` }));
    expect(boundedDecisions(many, plan.entry)).toHaveLength(32);
  });

  it.each([
    ['no_pending_request', {}, {}],
    ['already_decided', { spec: { decisions: [{ requestId: 'a1-s0-1' }] } }, {}],
    ['request_not_found', {}, { requestId: 'a1-s0-7' }],
  ])('%s', (code, extra, input) => {
    const run = {
      ...extra,
      status: {
        inbox: {
          pending:
            code === 'no_pending_request' ? [] : [pending('a1-s0-1', '2026-12-02T17:00:00Z')],
        },
      },
    };
    let thrown: unknown;
    try {
      planDecision(run, { verdict: 'approve', ...input });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(InboxDecisionError);
    expect((thrown as InboxDecisionError).code).toBe(code);
  });
});
