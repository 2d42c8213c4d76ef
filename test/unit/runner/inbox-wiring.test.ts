import { afterEach, describe, expect, it } from 'vitest';
import { INBOX_PATHS } from '../../../src/api/inbox.js';
import { runnerInbox } from '../../../src/runner/inbox-wiring.js';
import type { WorkflowConfig } from '../../../src/workflow/config.js';
import type { LorenzEvent } from '../../../src/workflow/events.js';
import { approvals } from '../agent/inbox-support.js';
import { fakeGateway, type FakeGateway } from './inbox-gateway.js';

/** Only agent.approvals is read; the rest of the config does not matter here. */
const configWith = (value: WorkflowConfig['agent']['approvals']): WorkflowConfig =>
  ({ agent: { approvals: value } }) as unknown as WorkflowConfig;

const permission = {
  kind: 'permission' as const,
  turn: 1,
  facts: { toolKind: 'execute', title: 'x', command: 'x', paths: [] },
  options: [],
  verdict: { action: 'ask' as const, rule: null, reason: null },
};

let gateway: FakeGateway | undefined;
afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
});

describe('runnerInbox', () => {
  it('is absent without agent.approvals', () => {
    const inbox = runnerInbox({
      config: configWith(null),
      tools: undefined,
      token: undefined,
      slot: 0,
      attempt: 1,
      emit: () => undefined,
    });
    expect(inbox).toBeUndefined();
  });

  it('without a gateway says why on stderr, as an event of the slot', async () => {
    const events: LorenzEvent[] = [];
    const inbox = runnerInbox({
      config: configWith(approvals()),
      tools: undefined,
      token: undefined,
      slot: 2,
      attempt: null,
      emit: (event) => events.push(event),
    });
    expect(await inbox?.ask(permission, new AbortController().signal)).toMatchObject({
      requestId: 'a1-s2-1',
      via: 'unavailable',
    });
    expect(events).toEqual([
      { type: 'stderr', slot: 2, message: expect.stringMatching(/no agent-tools gateway/) },
    ]);
  });

  it('asks the tools gateway with the tools token', async () => {
    gateway = await fakeGateway((call) =>
      call.path === INBOX_PATHS.steers ? { status: 200, body: { steers: [] } } : { status: 404 },
    );
    const inbox = runnerInbox({
      config: configWith(approvals()),
      tools: { url: gateway.url, tokenFile: '/unused', serverName: 'lorenz' },
      token: 'secret-token',
      slot: 1,
      attempt: 4,
      emit: () => undefined,
    });
    expect(await inbox?.takeSteers()).toEqual([]);
    expect(gateway.calls).toMatchObject([
      { path: INBOX_PATHS.steers, body: { slot: 1 }, authorization: 'Bearer secret-token' },
    ]);
  });
});
