import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderErrorCodes, withErrorCodes } from '../../../hack/docs/error-codes.js';
import { renderResourceFields, withResourceFields } from '../../../hack/docs/resource-fields.js';
import { Reasons } from '../../../src/api/index.js';
import { ERROR_CODE_MEANINGS } from '../../../src/workflow/errors.js';
import {
  renderWorkflowReference,
  withWorkflowReference,
} from '../../../hack/docs/workflow-reference.js';

const page = (path: string) => readFileSync(new URL(`../../../${path}`, import.meta.url), 'utf8');

describe('docs/configuration.md, the WORKFLOW.md reference', () => {
  it('lists the defaults docs/design.md promises to keep from Lorenz', () => {
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

describe('docs/cli.md, the error table', () => {
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

describe('docs/resources.md, the Workflow and IssueRun fields', () => {
  it('lists the fields users set and read, and every condition reason', () => {
    const fields = renderResourceFields();
    for (const row of [
      /^\| `spec.trackerSecretRef.key` \| string \| .+ \|$/m,
      /^\| `spec.tools.allowedStates` \| list of string \| .+ \|$/m,
      /^\| `spec.retries` \| integer \| .+ \|$/m,
      /^\| `spec.cancelRequested` \| boolean \| .+ \|$/m,
      /^\| `status.slots\[\].host` \| string \| .+ \|$/m,
      /^\| `status.dispatch.candidates` \| integer \| .+ \|$/m,
    ]) {
      expect(fields).toMatch(row);
    }
    for (const reason of Object.values(Reasons)) expect(fields).toContain(`\`${reason}\``);
  });
});

/** Each page with a generated block: its block's name, and what writes the block into it. */
const GENERATED: [path: string, name: string, regenerate: (text: string) => string][] = [
  ['docs/configuration.md', 'workflow-config', withWorkflowReference],
  ['docs/cli.md', 'error-codes', withErrorCodes],
  ['docs/resources.md', 'resource-fields', withResourceFields],
];

describe('the generated blocks', () => {
  it.each(GENERATED)('of %s are up to date (npm run docs)', (path, _name, regenerate) => {
    const text = page(path);
    expect(regenerate(text)).toBe(text);
  });

  it.each(GENERATED)(
    'of %s sit inside prettier-ignore, so formatting cannot undo them',
    (path, name) => {
      const text = page(path);
      const start = text.indexOf('<!-- prettier-ignore-start -->');
      const begin = text.indexOf(`<!-- BEGIN GENERATED: ${name} (npm run docs) -->`);
      const end = text.indexOf(`<!-- END GENERATED: ${name} -->`);
      const stop = text.indexOf('<!-- prettier-ignore-end -->');
      expect(start).toBeGreaterThanOrEqual(0);
      expect([start < begin, begin < end, end < stop]).toEqual([true, true, true]);
    },
  );

  it('are gone from the README, which links to them', () => {
    const readme = page('README.md');
    expect(readme).not.toContain('BEGIN GENERATED');
    expect(readme).toContain('](docs/configuration.md)');
    expect(readme).toContain('](docs/cli.md)');
  });
});
