// The problems parseConfig lists for a front matter it refuses, shared by the section tests.
import { expect } from 'vitest';
import { type ConfigProblem, configProblems, parseConfig } from '../../../src/workflow/config.js';
import { LorenzError } from '../../../src/workflow/errors.js';

/** The problems of a front matter that must fail with invalid_workflow_config. */
export function problemsOf(frontMatter: Record<string, unknown>): ConfigProblem[] {
  try {
    parseConfig(frontMatter);
  } catch (error) {
    if (error instanceof LorenzError) {
      expect(error.code).toBe('invalid_workflow_config');
      return configProblems(error);
    }
    throw error;
  }
  throw new Error('expected parseConfig to fail');
}
