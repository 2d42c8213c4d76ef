import type { Issue } from '../../workflow/issue.js';
import type { FetchOptions, TrackerAdapter } from '../types.js';
import { type HttpTrackerOptions, tokenSources } from '../adapter-options.js';
import { transportReach } from '../http.js';
import { chunksOf, normalizedOnce } from '../issue-list.js';
import { followTokenPages } from '../paging.js';
import { statesJql } from './jql.js';
import { JIRA_FIELDS, normalizeJiraIssue } from './normalize.js';
import { type JiraTrackerConfig, jiraSettings } from './settings.js';
import {
  JIRA_REQUEST_TIMEOUT_MS,
  type JiraTransport,
  isJsonMap,
  jiraFailure,
  jiraGet,
  jiraPost,
} from './transport.js';
import { createJiraWriter } from './writer.js';

/** The enhanced JQL search (token-paginated), which replaced /rest/api/3/search. */
export const JIRA_SEARCH_PATH = '/rest/api/3/search/jql';
/** Issues by id or key; ids Jira no longer has are simply not returned. */
export const JIRA_BULK_FETCH_PATH = '/rest/api/3/issue/bulkfetch';
/** Issues per search page: Jira may return fewer, never more, when fields are requested. */
export const JIRA_PAGE_SIZE = 100;
/** Ids per bulk fetch: the most Jira serves in one request when fields are named. */
export const JIRA_BULK_FETCH_SIZE = 100;
/** 200 pages of 100 are 20 000 issues: past that, the pages loop rather than end. */
export const JIRA_MAX_PAGES = 200;
/** Every status of the site, for the names a JQL `status in (…)` may use. */
export const JIRA_STATUS_PATH = '/rest/api/3/status';
/** How long the site's status names are trusted: statuses change rarely, polls often. */
export const JIRA_STATUS_CACHE_MS = 10 * 60_000;

export type JiraTrackerOptions = HttpTrackerOptions<JiraTrackerConfig>;

const stateKey = (state: string | null): string => (state ?? '').trim().toLowerCase();

/**
 * Build the `jira` adapter (Jira Cloud REST v3, Basic auth with an API token). Settings are
 * checked here, so a missing site, email, project key or token fails before any request.
 */
export function createJiraTracker(options: JiraTrackerOptions): TrackerAdapter {
  const settings = jiraSettings(options.config, tokenSources(options));
  const transport: JiraTransport = {
    site: settings.site,
    email: settings.email,
    token: settings.token,
    ...transportReach(options, JIRA_REQUEST_TIMEOUT_MS),
  };
  const maxPages = options.maxPages ?? JIRA_MAX_PAGES;
  const siteStatuses = statusCache(transport);

  /** Normalized issues, each once: an issue edited mid-poll can show up on two pages. */
  const normalized = (beans: readonly unknown[]): Issue[] =>
    normalizedOnce(beans, (bean) => normalizeJiraIssue(bean, settings.site));

  async function inStates(states: readonly string[], fetchOptions: FetchOptions = {}) {
    const wanted = new Set(states.map(stateKey).filter((state) => state !== ''));
    if (wanted.size === 0) return [];
    // JQL refuses a status the site does not have (HTTP 400), and the default terminal
    // states name several that a site seldom has all of: only the site's own are asked for.
    const known = await siteStatuses(fetchOptions.signal);
    const names = known.filter((name) => wanted.has(stateKey(name)));
    if (names.length === 0) return [];
    const jql = statesJql(settings.projectKey, names, settings.jql);
    const beans = await searchAll(transport, jql, maxPages, fetchOptions.signal);
    // Jira matched status names case-insensitively; stray spaces are matched here.
    return normalized(beans).filter((issue) => wanted.has(stateKey(issue.state)));
  }

  return {
    kind: 'jira',
    writer: createJiraWriter(transport, settings, maxPages),
    fetchCandidates(fetchOptions) {
      // Candidates are never terminal, even when a state is listed as both.
      const terminal = new Set(settings.terminalStates.map(stateKey));
      const active = settings.activeStates.filter((state) => !terminal.has(stateKey(state)));
      return inStates(active, fetchOptions);
    },
    fetchByStates: (states, fetchOptions) => inStates(states, fetchOptions),
    async fetchByIds(ids, fetchOptions = {}) {
      const unique = [...new Set(ids.map((id) => id.trim()).filter((id) => id !== ''))];
      const beans: unknown[] = [];
      // No project scope here: a running issue moved to another project must still be seen.
      for (const chunk of chunksOf(unique, JIRA_BULK_FETCH_SIZE)) {
        beans.push(...(await bulkFetch(transport, chunk, fetchOptions.signal)));
      }
      return normalized(beans);
    },
  };
}

/**
 * The site's status names (GET /rest/api/3/status, a bare list of statuses), each once,
 * kept for JIRA_STATUS_CACHE_MS; a failed lookup is asked again next time.
 */
function statusCache(transport: JiraTransport) {
  let known: { names: string[]; at: number } | null = null;
  return async (signal: AbortSignal | undefined): Promise<string[]> => {
    if (known !== null && transport.now() - known.at < JIRA_STATUS_CACHE_MS) return known.names;
    const answer = await jiraGet(transport, JIRA_STATUS_PATH, signal);
    if (!Array.isArray(answer)) {
      throw jiraFailure(transport, 'tracker_response', 'Jira answered statuses with no list');
    }
    const names = answer
      .map((status: unknown) => (isJsonMap(status) ? status.name : undefined))
      .filter((name): name is string => typeof name === 'string' && name.trim() !== '');
    known = { names: [...new Set(names)], at: transport.now() };
    return known.names;
  };
}

async function bulkFetch(
  transport: JiraTransport,
  ids: readonly string[],
  signal: AbortSignal | undefined,
): Promise<unknown[]> {
  const body = await jiraPost(
    transport,
    JIRA_BULK_FETCH_PATH,
    { issueIdsOrKeys: ids, fields: JIRA_FIELDS },
    signal,
  );
  if (!Array.isArray(body.issues)) {
    throw jiraFailure(transport, 'tracker_response', 'Jira answered bulkfetch without issues');
  }
  // Missing issues are left out silently; issueErrors are issues Jira could not serve this
  // time. Reporting those as gone would stop their runs, so the whole refresh fails instead.
  const errors = Array.isArray(body.issueErrors) ? body.issueErrors : [];
  if (errors.length > 0) {
    throw jiraFailure(
      transport,
      'tracker_status',
      `Jira could not return ${errors.length} of the issues asked for; try again`,
      { issueErrors: errors.length },
    );
  }
  return body.issues as unknown[];
}

/**
 * Every page of a JQL search, following nextPageToken. A page that says it is not the last
 * but gives no token is `tracker_pagination`, as are the loops followTokenPages guards against.
 */
function searchAll(
  transport: JiraTransport,
  jql: string,
  maxPages: number,
  signal: AbortSignal | undefined,
): Promise<unknown[]> {
  const paging = {
    service: 'Jira',
    tokenName: 'nextPageToken',
    maxPages,
    paginationFailure: (message: string, detail?: Record<string, unknown>) =>
      jiraFailure(transport, 'tracker_pagination', message, detail),
  };
  return followTokenPages(paging, async (nextPageToken, page) => {
    const body = await jiraPost(
      transport,
      JIRA_SEARCH_PATH,
      {
        jql,
        fields: JIRA_FIELDS,
        maxResults: JIRA_PAGE_SIZE,
        ...(nextPageToken === null ? {} : { nextPageToken }),
      },
      signal,
    );
    const isLast = body.isLast ?? null;
    if (!Array.isArray(body.issues) || (isLast !== null && typeof isLast !== 'boolean')) {
      throw jiraFailure(transport, 'tracker_response', 'Jira answered a search without issues');
    }
    const items = body.issues as unknown[];
    const token = body.nextPageToken;
    if (token !== undefined && token !== null && typeof token !== 'string') {
      throw jiraFailure(
        transport,
        'tracker_response',
        'Jira answered a nextPageToken that is not text',
      );
    }
    if (isLast === true || token === undefined || token === null || token === '') {
      if (isLast === false) {
        throw jiraFailure(
          transport,
          'tracker_pagination',
          `Jira said page ${page} is not the last but gave no nextPageToken`,
          { page },
        );
      }
      return { items, next: null };
    }
    return { items, next: token };
  });
}
