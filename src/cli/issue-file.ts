import { LorenzError } from '../workflow/errors.js';
import { type Issue, normalizeIssue } from '../workflow/issue.js';
import { displayPath, readTextFile } from '../workflow/text-file.js';
import { parseUserYaml } from '../workflow/yaml.js';

/**
 * Read the ISSUE file of `lorenz run` / `prompt render` / `hook render`: YAML or JSON (JSON is
 * YAML), one issue with the snake_case keys of workflow/issue.ts. Every failure is one line
 * that starts with `issue file <path>`: `file_unreadable` when it cannot be read, `invalid_issue`
 * when it is not YAML or not an issue.
 */
export async function readIssueFile(path: string): Promise<Issue> {
  const text = await readTextFile(path, 'issue file');
  const where = `issue file ${displayPath(path)}`;
  const parsed = parseUserYaml(text);
  if (!parsed.ok) {
    const { line, column, reason, yamlCode } = parsed.problem;
    const at = line === null ? '' : ` at line ${line}, column ${column ?? 1}`;
    throw new LorenzError('invalid_issue', `${where}: invalid YAML${at}: ${reason}`, {
      path,
      line,
      column,
      yamlCode,
    });
  }
  const raw = parsed.value;
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new LorenzError('invalid_issue', `${where}: an issue must be a map of keys to values`, {
      path,
    });
  }
  return normalizeIssue(raw, where);
}
