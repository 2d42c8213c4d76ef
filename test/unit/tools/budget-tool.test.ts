// budget_status on the tools gateway (docs/budgets.md): offered when the controller gives a
// source, answered for the verified run only, recorded like every other call.
import { describe, expect, it } from 'vitest';
import type { VerifiedRun } from '../../../src/tools/types.js';
import { call, connect, start, useToolsHarness } from '../../support/fakes/tools-gateway.js';

useToolsHarness();

describe('budget_status', () => {
  it('is not offered without a source', async () => {
    const h = await start();
    const { tools } = await (await connect(h)).listTools();
    expect(tools.some((tool) => tool.name === 'budget_status')).toBe(false);
  });

  it("answers the verified run's budget and is recorded", async () => {
    const asked: VerifiedRun[] = [];
    const h = await start(
      {},
      {},
      {
        budget: async (run) => {
          asked.push(run);
          return { scopes: { run: { left: { tokens: 40 } } } };
        },
      },
    );
    const client = await connect(h);
    const { tools } = await client.listTools();
    expect(tools.some((tool) => tool.name === 'budget_status')).toBe(true);
    const result = await call(client, 'budget_status');
    expect(result.isError).toBe(false);
    expect(JSON.parse(result.text)).toEqual({ scopes: { run: { left: { tokens: 40 } } } });
    expect(asked.map((run) => `${run.namespace}/${run.run}/${run.attempt}`)).toEqual([
      'team-a/app-eng-42/1',
    ]);
    expect(h.records).toEqual([expect.objectContaining({ tool: 'budget_status', ok: true })]);
  });

  it('a source that fails is a tool error naming why', async () => {
    const h = await start(
      {},
      {},
      {
        budget: async () => {
          throw new Error('informer not synced');
        },
      },
    );
    const result = await call(await connect(h), 'budget_status');
    expect(result).toEqual({
      isError: true,
      text: expect.stringContaining('the budget cannot be read: informer not synced') as unknown,
    });
  });
});
