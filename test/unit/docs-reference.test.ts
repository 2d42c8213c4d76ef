import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderErrorCodes, withErrorCodes } from '../../hack/docs/error-codes.js';
import { ERROR_CODE_MEANINGS } from '../../src/workflow/errors.js';
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

describe('README error table', () => {
  it('is generated from the codes and up to date (npm run docs)', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    expect(withErrorCodes(readme)).toBe(readme);
  });

  it('lists every code, its exit code, its reason and what it means', () => {
    const table = renderErrorCodes();
    for (const code of Object.keys(ERROR_CODE_MEANINGS)) {
      expect(table).toMatch(
        new RegExp(`^\\| \`${code}\` \\| [12] \\| \`[A-Za-z]+\` \\| .+ \\|$`, 'm'),
      );
    }
    expect(table).toContain('| `invalid_issue` | 2 | ');
    expect(table).toContain('| `input_digest_mismatch` | 1 | `InputsInvalid` |');
    expect(table).toContain('| `hook_killed` | 1 | `HookKilled` |');
  });
});
