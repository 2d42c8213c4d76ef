import { LorenzError } from '../workflow/errors.js';
import { expandPath } from '../workspace/paths.js';

/**
 * A tracker's key from its configuration: tracker.api_key (a whole-value `$VAR` is read from
 * `env`), else the tracker's own variable (LINEAR_API_KEY, GITHUB_TOKEN, JIRA_API_TOKEN).
 * Messages say where the key was looked for, never what it is.
 */
export function resolveTrackerKey(
  apiKey: string | null,
  env: NodeJS.ProcessEnv,
  fallback: { variable: string; what: string },
): string {
  const written = apiKey?.trim() ?? '';
  if (written !== '') {
    // Only `$…` goes through expandPath: its `~` expansion means nothing for a key.
    const value = written.startsWith('$') ? expandPath(written, env) : written;
    if (value === null || value.trim() === '') {
      throw new LorenzError(
        'missing_tracker_secret',
        `tracker.api_key names ${written}, which is not set or empty`,
        { key: 'tracker.api_key' },
      );
    }
    return value.trim();
  }
  const fromEnv = env[fallback.variable]?.trim() ?? '';
  if (fromEnv === '') {
    throw new LorenzError(
      'missing_tracker_secret',
      `${fallback.what}: set tracker.api_key or ${fallback.variable}`,
      { key: 'tracker.api_key' },
    );
  }
  return fromEnv;
}
