import { isHttpUrl } from '../http.js';
import { resolveTrackerKey } from '../credentials.js';
import type { HttpTrackerConfig } from '../adapter-options.js';
import { LorenzError } from '../../workflow/errors.js';
import { expandPath } from '../../workspace/paths.js';

/** The variable read when tracker.api_key is not set. */
export const JIRA_API_TOKEN_VARIABLE = 'JIRA_API_TOKEN';
/** Jira's rule for project keys: a letter, then letters, digits or underscores. */
const PROJECT_KEY = /^[A-Za-z][A-Za-z0-9_]*$/;

/** The tracker keys the Jira adapter reads. */
export type JiraTrackerConfig = HttpTrackerConfig<'email' | 'projectKey' | 'jql'>;

export interface JiraSettings {
  /** The site, `https://<site>.atlassian.net`, without a trailing slash. */
  site: string;
  email: string;
  token: string;
  projectKey: string;
  /** An extra clause ANDed to the project scope, or null. */
  jql: string | null;
  activeStates: string[];
  terminalStates: string[];
}

function invalid(message: string, key: string): LorenzError {
  return new LorenzError('invalid_tracker_config', `jira tracker: ${message}`, { key });
}

function cleanList(values: readonly string[]): string[] {
  return values.map((value) => value.trim()).filter((value) => value !== '');
}

/** A whole-value `$VAR` is read from `env`, as workspace.root is; anything else is literal. */
function expandVariable(written: string, env: NodeJS.ProcessEnv): string | null {
  const value = written.startsWith('$') ? expandPath(written, env) : written;
  return value === null || value.trim() === '' ? null : value.trim();
}

function siteOf(endpoint: string | null): string {
  const value = endpoint?.trim() ?? '';
  if (value === '') {
    throw invalid(
      'set tracker.endpoint to the site, https://<site>.atlassian.net',
      'tracker.endpoint',
    );
  }
  const url = URL.parse(value);
  if (url === null || !isHttpUrl(url)) {
    throw invalid('tracker.endpoint must be an http(s) URL', 'tracker.endpoint');
  }
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') {
    // Credentials in the URL would end up in messages; the token goes in tracker.api_key.
    throw invalid(
      'tracker.endpoint must be the site URL alone (no credentials, query)',
      'tracker.endpoint',
    );
  }
  // A path is kept (a proxy in front of the site may need one); the API paths follow it.
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/**
 * The API token: tracker.api_key (`$VAR` expanded), else JIRA_API_TOKEN. Messages say where
 * the token was looked for, never what it is.
 */
export function resolveJiraToken(apiKey: string | null, env: NodeJS.ProcessEnv): string {
  return resolveTrackerKey(apiKey, env, {
    variable: JIRA_API_TOKEN_VARIABLE,
    what: 'jira tracker: no API token',
  });
}

/**
 * Everything the adapter needs, checked once when it is built, so a WORKFLOW.md without a
 * site, an email, a project key or a token fails before the first poll. `apiKey`, when
 * given, wins: the controller reads it from the Workflow's Secret.
 */
export function jiraSettings(
  config: JiraTrackerConfig,
  options: { apiKey?: string | undefined; env?: NodeJS.ProcessEnv | undefined } = {},
): JiraSettings {
  const env = options.env ?? {};
  const site = siteOf(config.endpoint);
  const writtenEmail = config.email?.trim() ?? '';
  const email = writtenEmail === '' ? null : expandVariable(writtenEmail, env);
  if (email === null) throw invalid('set tracker.email (the API token owner)', 'tracker.email');
  const projectKey = config.projectKey?.trim() ?? '';
  if (!PROJECT_KEY.test(projectKey)) {
    throw invalid('set tracker.project_key to a Jira project key (ENG)', 'tracker.project_key');
  }
  const jql = config.jql?.trim() ?? '';
  if (/\border\s+by\b/i.test(jql)) {
    // The clause is ANDed into a larger query; an ORDER BY there would not parse.
    throw invalid('tracker.jql is a filter clause and may not have ORDER BY', 'tracker.jql');
  }
  const explicit = options.apiKey?.trim() ?? '';
  return {
    site,
    email,
    token: explicit !== '' ? explicit : resolveJiraToken(config.apiKey, env),
    projectKey: projectKey.toUpperCase(),
    jql: jql === '' ? null : jql,
    activeStates: cleanList(config.activeStates),
    terminalStates: cleanList(config.terminalStates),
  };
}
