import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { LorenzError } from '../workflow/errors.js';
import { type Issue, normalizeIssue } from '../workflow/issue.js';

/**
 * Read the ISSUE file of `lorenz run` / `prompt render` / `hook render`: YAML or JSON (JSON is
 * YAML), one issue with the reference's snake_case keys.
 */
export async function readIssueFile(path: string): Promise<Issue> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new LorenzError(
      'invalid_issue',
      `cannot read issue file ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
    );
  }
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (error) {
    throw new LorenzError(
      'invalid_issue',
      `${path}: not valid YAML or JSON: ${(error as Error).message}`,
    );
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new LorenzError('invalid_issue', `${path}: an issue must be a map of keys to values`);
  }
  return normalizeIssue(raw, path);
}
