import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { BUDGET_STATUS_TOOL } from '../api/budget.js';
import { errorMessage } from '../workflow/errors.js';
import type { RateVerdict } from './limiter.js';
import { toolError, toolResult } from './tools.js';
import type { VerifiedRun } from './types.js';

/**
 * The agent's view of its budget (docs/budgets.md): `budget_status` answers the limits in
 * force and what each scope has spent, as the controller last saw it. The attempt in
 * progress is counted as far as its Pod's log has reported; the runner enforces from its
 * own, more recent count.
 */
export type BudgetStatusSource = (run: VerifiedRun) => Promise<object | null>;

export function registerBudgetTool(
  server: McpServer,
  run: VerifiedRun,
  source: BudgetStatusSource,
  admission: (requestId: string | number) => RateVerdict,
): void {
  server.registerTool(
    BUDGET_STATUS_TOOL,
    {
      description:
        "This run's spend limits (per attempt, run, issue and day) and what each has spent so far; when a limit is reached the agent is stopped.",
      inputSchema: {},
    },
    async (_args, extra) => {
      const verdict = admission(extra.requestId);
      if (!verdict.ok) return toolError(`rate limited: retry after ${verdict.retryAfterSeconds} s`);
      try {
        const answer = await source(run);
        return answer ? toolResult(answer) : toolError('the run is gone');
      } catch (error) {
        return toolError(`the budget cannot be read: ${errorMessage(error)}`);
      }
    },
  );
}
