import type { AgentInbox } from '../agent/inbox.js';
import type { WorkflowConfig } from '../workflow/config.js';
import type { LorenzEvent } from '../workflow/events.js';
import { createInboxClient } from './inbox-client.js';
import { createRunnerInbox } from './inbox.js';
import type { RunnerTools } from './tools.js';

/**
 * The slot's inbox, when the Workflow has agent.approvals: over the agent-tools gateway with
 * the attempt's token, or (no gateway: a run without tools) one that decides every ask by
 * on_timeout and says why on stderr. Without agent.approvals: none, and the session behaves
 * as it always did.
 */
export function runnerInbox(options: {
  config: WorkflowConfig;
  tools: RunnerTools | undefined;
  token: string | undefined;
  slot: number;
  attempt: number | null;
  emit: (event: LorenzEvent) => void;
}): AgentInbox | undefined {
  const approvals = options.config.agent.approvals;
  if (!approvals) return undefined;
  const { slot } = options;
  const log = (line: string): void => options.emit({ type: 'stderr', message: line, slot });
  const client =
    options.tools && options.token
      ? createInboxClient({ url: options.tools.url, token: options.token, log })
      : undefined;
  return createRunnerInbox({
    config: approvals,
    slot,
    attempt: options.attempt ?? 1,
    client,
    emit: (type, message) => options.emit({ type, message, slot }),
    log,
  });
}
