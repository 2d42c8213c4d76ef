import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  renderWorkflowReference,
  withWorkflowReference,
} from '../../hack/docs/workflow-reference.js';

describe('README WORKFLOW.md reference', () => {
  it('is generated from the config schema and up to date (npm run docs)', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    expect(withWorkflowReference(readme)).toBe(readme);
  });

  it('lists the reference defaults for keys the reference names', () => {
    const table = renderWorkflowReference();
    for (const row of [
      /\| `hooks.timeout_ms` \| integer[^|]*\| `60000` \|/,
      /\| `agent.max_concurrent_agents` \| integer[^|]*\| `10` \|/,
      /\| `agent.max_turns` \| integer[^|]*\| `20` \|/,
      /\| `agent.max_retry_backoff_ms` \| integer[^|]*\| `300000` \|/,
      /\| `agents.turn_timeout_ms` \| integer[^|]*\| `3600000` \|/,
      /\| `agents.stall_timeout_ms` \| integer[^|]*\| `300000` \|/,
      /\| `worker.ssh_timeout_ms` \| integer[^|]*\| `60000` \|/,
      /\| `polling.interval_ms` \| integer[^|]*\| `30000` \|/,
      /\| `workspace.isolation` \| `per-agent` \\\| `none` \| `"per-agent"` \|/,
    ]) {
      expect(table).toMatch(row);
    }
  });
});
