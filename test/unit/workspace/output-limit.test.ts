// One constant caps hook output: OUTPUT_LIMIT in src/workspace/output.ts. The IssueRun CRD's
// limit on status.hooks[].output/error is derived from it, with room for the marker.
import { describe, expect, it } from 'vitest';
import { buildCrds } from '../../../src/api/crd.js';
import { HOOK_OUTPUT_MAX_LENGTH } from '../../../src/api/issuerun.js';
import {
  OUTPUT_LIMIT,
  TRUNCATED_OUTPUT_MAX_LENGTH,
  truncateCaptured,
  truncateOutput,
  truncationMarker,
} from '../../../src/workspace/output.js';

interface Schema {
  properties?: Record<string, Schema>;
  items?: Schema;
  maxLength?: number;
  description?: string;
}

function hookFields(): Record<string, Schema> {
  const crd = buildCrds().find((entry) => entry.spec.names.kind === 'IssueRun');
  const root = crd?.spec.versions[0]?.schema.openAPIV3Schema as Schema | undefined;
  return root?.properties?.status?.properties?.hooks?.items?.properties ?? {};
}

describe('the hook output limit', () => {
  it('the status limit is OUTPUT_LIMIT plus the marker room', () => {
    expect(HOOK_OUTPUT_MAX_LENGTH).toBe(TRUNCATED_OUTPUT_MAX_LENGTH);
    expect(TRUNCATED_OUTPUT_MAX_LENGTH).toBeGreaterThan(OUTPUT_LIMIT);
  });

  it.each(['output', 'error'])('the CRD caps status.hooks[].%s from it and says so', (field) => {
    const schema = hookFields()[field];
    expect(schema?.maxLength).toBe(TRUNCATED_OUTPUT_MAX_LENGTH);
    expect(schema?.description).toContain(`truncated to ${OUTPUT_LIMIT} characters`);
  });

  it.each([
    ['one character over', 'x'.repeat(OUTPUT_LIMIT + 1)],
    ['a megabyte', 'x'.repeat(1_000_000)],
  ])('a truncated text fits the status field: %s', (_name, text) => {
    const result = truncateOutput(text);
    expect(result.truncated).toBe(true);
    expect(result.text.length).toBeLessThanOrEqual(HOOK_OUTPUT_MAX_LENGTH);
  });

  it('the marker for the largest exact count still fits', () => {
    const result = truncateCaptured('x'.repeat(OUTPUT_LIMIT), Number.MAX_SAFE_INTEGER);
    expect(result.text.endsWith(truncationMarker(Number.MAX_SAFE_INTEGER))).toBe(true);
    expect(result.text.length).toBeLessThanOrEqual(TRUNCATED_OUTPUT_MAX_LENGTH);
  });
});
