import { endpointUrl } from '../http.js';
import { resolveTrackerKey } from '../credentials.js';
import type { HttpTrackerConfig } from '../adapter-options.js';
import { LorenzError } from '../../workflow/errors.js';

/** Linear's public GraphQL endpoint, used when tracker.endpoint is not set. */
export const LINEAR_DEFAULT_ENDPOINT = 'https://api.linear.app/graphql';
/** The variable read when tracker.api_key is not set (docs/design.md#trackers). */
export const LINEAR_API_KEY_VARIABLE = 'LINEAR_API_KEY';

/** The tracker keys the Linear adapter reads. */
export type LinearTrackerConfig = HttpTrackerConfig<
  'projectSlug' | 'projectSlugs' | 'projectLabels' | 'assignee'
>;

/** Which projects are polled: by slug ID, or every project carrying one of some labels. */
export type ProjectScope =
  { kind: 'slugs'; slugs: string[] } | { kind: 'labels'; labels: string[] };

/** Whose issues: everyone's, the API key's own user (resolved through `viewer`), or one id. */
export type AssigneeScope = { kind: 'everyone' } | { kind: 'me' } | { kind: 'id'; id: string };

export interface LinearSettings {
  endpoint: string;
  apiKey: string;
  project: ProjectScope;
  assignee: AssigneeScope;
  activeStates: string[];
  terminalStates: string[];
}

function invalid(message: string, keys: readonly string[]): LorenzError {
  return new LorenzError('invalid_tracker_config', message, { keys: [...keys] });
}

function cleanList(values: readonly string[]): string[] {
  return values.map((value) => value.trim()).filter((value) => value !== '');
}

/**
 * Exactly one selector (docs/design.md#trackers): two would leave it unclear which projects are
 * meant, and none would poll a whole workspace, which is never what a WORKFLOW.md means.
 */
export function projectScope(config: LinearTrackerConfig): ProjectScope {
  const slug = config.projectSlug?.trim() ?? '';
  const slugs = cleanList(config.projectSlugs);
  const labels = cleanList(config.projectLabels);
  const given = [
    ...(slugs.length > 0 ? ['tracker.project_slugs'] : []),
    ...(labels.length > 0 ? ['tracker.project_labels'] : []),
    ...(slug !== '' ? ['tracker.project_slug'] : []),
  ];
  const all = ['tracker.project_slugs', 'tracker.project_labels', 'tracker.project_slug'];
  if (given.length === 0) {
    throw invalid(`linear tracker: set one project selector: ${all.join(', ')}`, all);
  }
  if (given.length > 1) {
    throw invalid(
      `linear tracker: set only one project selector, not ${given.join(' and ')}`,
      given,
    );
  }
  if (labels.length > 0) return { kind: 'labels', labels };
  return { kind: 'slugs', slugs: slugs.length > 0 ? slugs : [slug] };
}

export function assigneeScope(assignee: string | null): AssigneeScope {
  const value = assignee?.trim() ?? '';
  if (value === '') return { kind: 'everyone' };
  if (value.toLowerCase() === 'me') return { kind: 'me' };
  return { kind: 'id', id: value };
}

/**
 * The API key: tracker.api_key (a whole-value `$VAR` is read from `env`, as workspace.root
 * is), else LINEAR_API_KEY. Messages name where the key was looked for, never a value.
 */
export function resolveLinearApiKey(apiKey: string | null, env: NodeJS.ProcessEnv): string {
  return resolveTrackerKey(apiKey, env, {
    variable: LINEAR_API_KEY_VARIABLE,
    what: 'linear tracker: no API key',
  });
}

function endpointOf(endpoint: string | null): string {
  return endpointUrl(endpoint)?.toString() ?? LINEAR_DEFAULT_ENDPOINT;
}

/**
 * Everything the adapter needs, checked once when it is built, so a bad WORKFLOW.md is
 * reported before the first poll. `apiKey`, when given, wins: the controller reads it from
 * the Workflow's Secret.
 */
export function linearSettings(
  config: LinearTrackerConfig,
  options: { apiKey?: string | undefined; env?: NodeJS.ProcessEnv | undefined } = {},
): LinearSettings {
  const project = projectScope(config);
  const explicit = options.apiKey?.trim() ?? '';
  return {
    endpoint: endpointOf(config.endpoint),
    apiKey: explicit !== '' ? explicit : resolveLinearApiKey(config.apiKey, options.env ?? {}),
    project,
    assignee: assigneeScope(config.assignee),
    activeStates: cleanList(config.activeStates),
    terminalStates: cleanList(config.terminalStates),
  };
}
