// WORKFLOW.md for the tiers that run the scripted agent in a run Pod (integration, chaos,
// the real node): one template, each tier naming how its Pods start the agent.

export interface WorkflowOptions {
  hooks?: Record<string, string | number>;
  prompt?: string;
  /** agent.max_turns (1 unless given). */
  maxTurns?: number;
  /** agent.max_retry_backoff_ms (the default unless given). */
  maxRetryBackoffMs?: number;
  /** tracker.kind (memory unless given). */
  trackerKind?: string;
  /** More YAML lines of the tracker section (indented two spaces), e.g. inline issues. */
  tracker?: string;
  /** More YAML lines of the agent section (indented two spaces). */
  agent?: string;
  /** polling.interval_ms (the default unless given). */
  pollingMs?: number;
}

/** A WORKFLOW.md whose agent is the scripted one, started by `bridgeCommand` in the run Pod. */
export function scriptedWorkflowText(bridgeCommand: string, options: WorkflowOptions = {}): string {
  const hooks = Object.entries(options.hooks ?? {})
    .map(([key, value]) => `  ${key}: ${JSON.stringify(value)}`)
    .join('\n');
  return `---
tracker:
  kind: ${options.trackerKind ?? 'memory'}${options.tracker ? `\n${options.tracker}` : ''}
agent:
  kind: scripted
  max_turns: ${options.maxTurns ?? 1}${options.maxRetryBackoffMs === undefined ? '' : `\n  max_retry_backoff_ms: ${options.maxRetryBackoffMs}`}${options.agent ? `\n${options.agent}` : ''}${options.pollingMs === undefined ? '' : `\npolling:\n  interval_ms: ${options.pollingMs}`}
agents:
  scripted:
    bridge_command: ${bridgeCommand}
hooks:
${hooks || '  timeout_ms: 60000'}
---
${options.prompt ?? 'Work on {{ issue.identifier }}.\n@write done.txt ok'}`;
}
