import { endpointUrl } from '../http.js';
import { resolveTrackerKey } from '../credentials.js';
import type { HttpTrackerConfig } from '../adapter-options.js';
import { LorenzError } from '../../workflow/errors.js';

/** GitHub.com's REST API; GitHub Enterprise Server is `https://<host>/api/v3`. */
export const GITHUB_DEFAULT_ENDPOINT = 'https://api.github.com';
/** The variable read when tracker.api_key is not set. */
export const GITHUB_TOKEN_VARIABLE = 'GITHUB_TOKEN';
/** The REST API version the adapter is written against (sent as X-GitHub-Api-Version). */
export const GITHUB_API_VERSION = '2022-11-28';

/** The tracker keys the GitHub adapter reads. */
export type GithubTrackerConfig = HttpTrackerConfig<'repository' | 'stateLabelPrefix' | 'assignee'>;

export interface GithubSettings {
  /** The API root without a trailing slash. */
  endpoint: string;
  token: string;
  owner: string;
  repo: string;
  labelPrefix: string;
  /** GitHub's `assignee` filter (a login, `none` or `*`); null: everyone. */
  assignee: string | null;
  activeStates: string[];
  terminalStates: string[];
}

// GitHub's own rules: owners are letters, digits and hyphens; repository names add `.` and `_`.
const REPOSITORY = /^([A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)\/([A-Za-z0-9._-]+)$/;

function invalid(message: string, keys: readonly string[]): LorenzError {
  return new LorenzError('invalid_tracker_config', message, { keys: [...keys] });
}

function cleanList(values: readonly string[]): string[] {
  return values.map((value) => value.trim()).filter((value) => value !== '');
}

export function parseRepository(repository: string | null): { owner: string; repo: string } {
  const value = repository?.trim() ?? '';
  if (value === '') {
    throw invalid('github tracker: set tracker.repository to owner/name', ['tracker.repository']);
  }
  const match = REPOSITORY.exec(value);
  if (match === null || match[2] === '.' || match[2] === '..') {
    throw invalid(`github tracker: tracker.repository ${JSON.stringify(value)} is not owner/name`, [
      'tracker.repository',
    ]);
  }
  return { owner: match[1] as string, repo: match[2] as string };
}

/**
 * The token: tracker.api_key (a whole-value `$VAR` is read from `env`), else GITHUB_TOKEN.
 * Messages say where the token was looked for, never what it is.
 */
export function resolveGithubToken(apiKey: string | null, env: NodeJS.ProcessEnv): string {
  return resolveTrackerKey(apiKey, env, {
    variable: GITHUB_TOKEN_VARIABLE,
    what: 'github tracker: no token',
  });
}

function endpointOf(endpoint: string | null): string {
  const url = endpointUrl(endpoint);
  if (url === null) return GITHUB_DEFAULT_ENDPOINT;
  if (url.search !== '') {
    throw invalid('tracker.endpoint: must be an http(s) URL without a query', ['tracker.endpoint']);
  }
  // Paths are appended to it: `https://ghe.example.com/api/v3` + `/repos/…`.
  return url.toString().replace(/\/+$/, '');
}

/**
 * `me` is Linear's word; GitHub's filter takes a login (or `none`, `*`), and guessing the
 * token's login would cost a request per adapter for little gain.
 */
function assigneeOf(assignee: string | null): string | null {
  const value = assignee?.trim() ?? '';
  if (value === '') return null;
  if (value.toLowerCase() === 'me') {
    throw invalid('github tracker: tracker.assignee takes a login (or none, *), not me', [
      'tracker.assignee',
    ]);
  }
  return value;
}

/**
 * Everything the adapter needs, checked when it is built so that a bad WORKFLOW.md fails
 * before the first request. `apiKey`, when given, wins: the controller reads it from the
 * Workflow's Secret.
 */
export function githubSettings(
  config: GithubTrackerConfig,
  options: { apiKey?: string | undefined; env?: NodeJS.ProcessEnv | undefined } = {},
): GithubSettings {
  const { owner, repo } = parseRepository(config.repository);
  const labelPrefix = config.stateLabelPrefix.trim();
  if (labelPrefix === '') {
    throw invalid('tracker.state_label_prefix: must not be empty', ['tracker.state_label_prefix']);
  }
  const endpoint = endpointOf(config.endpoint);
  const assignee = assigneeOf(config.assignee);
  const explicit = options.apiKey?.trim() ?? '';
  return {
    endpoint,
    token: explicit !== '' ? explicit : resolveGithubToken(config.apiKey, options.env ?? {}),
    owner,
    repo,
    labelPrefix: labelPrefix.toLowerCase(),
    assignee,
    activeStates: cleanList(config.activeStates),
    terminalStates: cleanList(config.terminalStates),
  };
}
