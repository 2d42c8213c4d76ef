import type { Issue } from '../../workflow/issue.js';
import type { FetchOptions, TrackerAdapter } from '../types.js';
import { type HttpTrackerOptions, tokenSources } from '../adapter-options.js';
import { transportReach } from '../http.js';
import { EtagCache, SHARED_ETAG_CACHE } from './cache.js';
import { type StateContext, normalizeGithubIssue } from './normalize.js';
import { GITHUB_MAX_PAGES, GITHUB_PAGE_SIZE, fetchAllPages } from './pages.js';
import { type GithubSettings, type GithubTrackerConfig, githubSettings } from './settings.js';
import { GITHUB_REQUEST_TIMEOUT_MS, type GithubTransport, githubGet } from './transport.js';
import { createGithubWriter } from './writer.js';

export interface GithubTrackerOptions extends HttpTrackerOptions<GithubTrackerConfig> {
  /** Remembered answers for If-None-Match; default one cache shared in the process. */
  cache?: EtagCache;
}

const key = (state: string | null): string => (state ?? '').trim().toLowerCase();

/** `42`, `#42` or `owner/name#42` (this repository) → 42; anything else names no issue here. */
export function issueNumberOf(id: string, settings: GithubSettings): number | null {
  const match = /^(?:(.+?)#|#)?(\d+)$/.exec(id.trim());
  if (match === null) return null;
  const repository = match[1];
  if (repository !== undefined && key(repository) !== key(`${settings.owner}/${settings.repo}`)) {
    return null;
  }
  const number = Number(match[2]);
  return Number.isSafeInteger(number) && number > 0 ? number : null;
}

/**
 * Build the `github` adapter (GitHub Issues over REST). Settings are checked here, so a
 * WORKFLOW.md without a repository or a token fails before any request is made.
 */
// eslint-disable-next-line max-lines-per-function -- a factory: the closures it returns share the state it keeps
export function createGithubTracker(options: GithubTrackerOptions): TrackerAdapter {
  const settings = githubSettings(options.config, tokenSources(options));
  const transport: GithubTransport = {
    token: settings.token,
    ...transportReach(options, GITHUB_REQUEST_TIMEOUT_MS),
    cache: options.cache ?? SHARED_ETAG_CACHE,
  };
  const maxPages = options.maxPages ?? GITHUB_MAX_PAGES;
  const context: StateContext = {
    repository: `${settings.owner}/${settings.repo}`,
    labelPrefix: settings.labelPrefix,
    activeStates: settings.activeStates,
    terminalStates: settings.terminalStates,
    assignee: settings.assignee,
  };
  const repoPath = `${settings.endpoint}/repos/${encodeURIComponent(settings.owner)}/${encodeURIComponent(settings.repo)}`;

  function listUrl(state: 'open' | 'all'): string {
    // Oldest first and fixed, so pages do not reshuffle between polls and ETags stay valid.
    const query = new URLSearchParams({
      state,
      sort: 'created',
      direction: 'asc',
      per_page: String(GITHUB_PAGE_SIZE),
    });
    if (settings.assignee !== null) query.set('assignee', settings.assignee);
    return `${repoPath}/issues?${query.toString()}`;
  }

  async function inStates(states: readonly string[], fetchOptions: FetchOptions = {}) {
    const wanted = new Set(states.map(key).filter((state) => state !== ''));
    if (wanted.size === 0) return [];
    // A closed issue is always terminal, so asking only for non-terminal states needs open
    // issues alone; a terminal state may also be an open issue's label.
    const terminal = new Set(settings.terminalStates.map(key));
    const needsClosed = [...wanted].some((state) => terminal.has(state));
    const { items } = await fetchAllPages(
      transport,
      listUrl(needsClosed ? 'all' : 'open'),
      maxPages,
      fetchOptions.signal,
    );
    const issues: Issue[] = [];
    const seen = new Set<string>();
    for (const item of items) {
      const issue = normalizeGithubIssue(item, context);
      // An issue edited mid-poll can move between pages and come back twice.
      if (issue === null || seen.has(issue.identifier) || !wanted.has(key(issue.state))) continue;
      seen.add(issue.identifier);
      issues.push(issue);
    }
    return issues;
  }

  const writer = createGithubWriter({
    settings,
    transport,
    context,
    repoPath,
    maxPages,
    issueNumberOf: (id) => issueNumberOf(id, settings),
  });

  return {
    kind: 'github',
    writer,
    fetchCandidates: (fetchOptions) => inStates(activeOnly(settings), fetchOptions),
    fetchByStates: (states, fetchOptions) => inStates(states, fetchOptions),
    async fetchByIds(ids, fetchOptions = {}) {
      const numbers = [
        ...new Set(
          ids
            .map((id) => issueNumberOf(id, settings))
            .filter((number): number is number => number !== null),
        ),
      ];
      const issues: Issue[] = [];
      // One by one: a poll holds at most max_concurrent_agents issues, and an unchanged one
      // is a free 304.
      for (const number of numbers) {
        const answer = await githubGet(transport, `${repoPath}/issues/${number}`, {
          signal: fetchOptions.signal,
          // Deleted (404) or transferred or deleted with a tombstone (410): gone.
          allow: [404, 410],
        });
        if (answer.status === 404 || answer.status === 410) continue;
        const issue = normalizeGithubIssue(answer.body, context);
        if (issue !== null) issues.push(issue);
      }
      return issues;
    },
  };
}

/** The active states that are not also terminal (candidates are never terminal). */
function activeOnly(settings: GithubSettings): string[] {
  const terminal = new Set(settings.terminalStates.map(key));
  return settings.activeStates.filter((state) => !terminal.has(key(state)));
}
