import type { Issue } from '../../workflow/issue.js';
import type { FetchOptions, TrackerAdapter } from '../types.js';
import { type HttpTrackerOptions, tokenSources } from '../adapter-options.js';
import { transportReach } from '../http.js';
import { chunksOf, normalizedOnce } from '../issue-list.js';
import { followTokenPages } from '../paging.js';
import { normalizeLinearIssue } from './normalize.js';
import {
  ISSUES_QUERY,
  LINEAR_PAGE_SIZE,
  VIEWER_QUERY,
  assigneeIdOf,
  idsFilter,
  scopeFilter,
  stateFilter,
} from './queries.js';
import { type LinearSettings, type LinearTrackerConfig, linearSettings } from './settings.js';
import {
  LINEAR_REQUEST_TIMEOUT_MS,
  type LinearTransport,
  isJsonMap,
  linearRequest,
  trackerFailure,
} from './transport.js';
import { createLinearWriter } from './writer.js';

/**
 * More pages than this is a loop, not a project: 200 pages of 50 are 10 000 issues, far
 * beyond any active set a poll should carry.
 */
export const LINEAR_MAX_PAGES = 200;

export type LinearTrackerOptions = HttpTrackerOptions<LinearTrackerConfig>;

const normalizedKey = (state: string): string => state.trim().toLowerCase();

/**
 * Build the `linear` adapter. Settings are checked here, so a WORKFLOW.md without exactly
 * one project selector, or without a key, fails (`invalid_tracker_config`,
 * `missing_tracker_secret`) before any request is made.
 */
export function createLinearTracker(options: LinearTrackerOptions): TrackerAdapter {
  const settings = linearSettings(options.config, tokenSources(options));
  const transport: LinearTransport = {
    endpoint: settings.endpoint,
    apiKey: settings.apiKey,
    ...transportReach(options, LINEAR_REQUEST_TIMEOUT_MS),
  };
  const maxPages = options.maxPages ?? LINEAR_MAX_PAGES;
  const viewer = viewerCache(transport);

  async function assigneeId(signal: AbortSignal | undefined): Promise<string | null> {
    const viewerId = settings.assignee.kind === 'me' ? await viewer(signal) : null;
    return assigneeIdOf(settings.assignee, viewerId);
  }

  async function issuesWhere(
    filter: Record<string, unknown>,
    assignee: string | null,
    signal: AbortSignal | undefined,
  ): Promise<Issue[]> {
    const nodes = await fetchAllPages(transport, filter, maxPages, signal);
    return normalizedOnce(nodes, (node) => normalizeLinearIssue(node, assignee));
  }

  async function inStates(states: readonly string[], options: FetchOptions = {}) {
    const wanted = new Set(states.map(normalizedKey).filter((state) => state !== ''));
    if (wanted.size === 0) return [];
    const names = states.map((state) => state.trim()).filter((state) => state !== '');
    const assignee = await assigneeId(options.signal);
    const filter = { ...scopeFilter(settings.project, assignee), state: stateFilter(names) };
    const issues = await issuesWhere(filter, assignee, options.signal);
    // Linear matched case-insensitively; names with stray spaces are matched here.
    return issues.filter((issue) => wanted.has(normalizedKey(issue.state ?? '')));
  }

  async function fetchByIds(ids: readonly string[], options: FetchOptions = {}) {
    const unique = [...new Set(ids.filter((id) => id.trim() !== ''))];
    if (unique.length === 0) return [];
    const assignee = await assigneeId(options.signal);
    const issues: Issue[] = [];
    // No scope here: a running issue moved out of it must still be seen, to stop its run.
    for (const chunk of chunksOf(unique, LINEAR_PAGE_SIZE)) {
      issues.push(...(await issuesWhere(idsFilter(chunk), assignee, options.signal)));
    }
    return issues;
  }

  return {
    kind: 'linear',
    fetchCandidates: (options) => inStates(activeOnly(settings), options),
    fetchByStates: (states, options) => inStates(states, options),
    fetchByIds,
    writer: createLinearWriter({
      transport,
      project: settings.project,
      maxPages,
      fetchByIds,
      assigneeId,
    }),
  };
}

/** The active states that are not also terminal (candidates never are: docs/design.md). */
function activeOnly(settings: LinearSettings): string[] {
  const terminal = new Set(settings.terminalStates.map(normalizedKey));
  return settings.activeStates.filter((state) => !terminal.has(normalizedKey(state)));
}

/** `viewer { id }` once per adapter; a failed lookup is asked again next time. */
function viewerCache(transport: LinearTransport) {
  let known: string | null = null;
  return async (signal: AbortSignal | undefined): Promise<string> => {
    if (known !== null) return known;
    const data = await linearRequest(transport, VIEWER_QUERY, {}, signal);
    const id = isJsonMap(data.viewer) ? data.viewer.id : undefined;
    if (typeof id !== 'string' || id === '') {
      throw trackerFailure(transport, 'tracker_response', 'Linear answered viewer without an id');
    }
    known = id;
    return id;
  };
}

/**
 * Every page of `issues(filter)`, following pageInfo.endCursor. A page that says there is
 * more but gives no cursor is `tracker_pagination`, as are the loops followTokenPages guards
 * against.
 */
function fetchAllPages(
  transport: LinearTransport,
  filter: Record<string, unknown>,
  maxPages: number,
  signal: AbortSignal | undefined,
): Promise<unknown[]> {
  const paging = {
    service: 'Linear',
    tokenName: 'cursor',
    maxPages,
    paginationFailure: (message: string, detail?: Record<string, unknown>) =>
      trackerFailure(transport, 'tracker_pagination', message, detail),
  };
  return followTokenPages(paging, async (after, page) => {
    const data = await linearRequest(
      transport,
      ISSUES_QUERY,
      { filter, first: LINEAR_PAGE_SIZE, after },
      signal,
    );
    const connection = data.issues;
    const pageInfo = isJsonMap(connection) ? connection.pageInfo : undefined;
    if (
      !isJsonMap(connection) ||
      !Array.isArray(connection.nodes) ||
      !isJsonMap(pageInfo) ||
      typeof pageInfo.hasNextPage !== 'boolean'
    ) {
      throw trackerFailure(transport, 'tracker_response', 'Linear answered issues without a page');
    }
    const items = connection.nodes as unknown[];
    if (!pageInfo.hasNextPage) return { items, next: null };
    const cursor = pageInfo.endCursor;
    if (typeof cursor !== 'string' || cursor === '') {
      throw trackerFailure(
        transport,
        'tracker_pagination',
        `Linear said page ${page} has a next page but gave no cursor`,
        { page },
      );
    }
    return { items, next: cursor };
  });
}
