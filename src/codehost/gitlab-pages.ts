import { nextLink } from '../tracker/github/pages.js';
import type { z } from 'zod';
import type { GitlabContext } from './gitlab-context.js';
import { parseItems } from './gitlab-schemas.js';
import { type GitlabTransport, gitlabFailure, gitlabGet } from './gitlab-transport.js';

/** GitLab's largest page. */
export const GITLAB_PAGE_SIZE = 100;
/**
 * Pages read at most for one list. A merge request with more than 1 000 discussions, or a
 * pipeline with more than 1 000 jobs, is not one the review loop can act on whole; what was
 * read is used and the cut is reported, rather than the loop stalling on it.
 */
export const GITLAB_MAX_PAGES = 10;

export interface GitlabPages {
  items: unknown[];
  /** How many pages GitLab answered 304. */
  notModified: number;
  /** True when pages were left unread at the bound. */
  cut: boolean;
}

/**
 * The next page's URL: Link rel="next" (gitlabGet makes one from `x-next-page` when GitLab
 * sent only that; keyset pagination sends only Link). Null on the last page.
 */
function nextPageUrl(url: string, link: string | null): string | null {
  const linked = nextLink(link);
  return linked === null ? null : new URL(linked, url).toString();
}

/**
 * Every page of a list, up to `maxPages`. A next URL on another origin (the token would go
 * with it) or one seen before ends the walk with `onWarning`; so does the bound. A page that
 * is not a JSON array is `codehost_response`.
 */
export async function fetchPages(
  transport: GitlabTransport,
  firstUrl: string,
  options: {
    signal?: AbortSignal | undefined;
    onWarning: (message: string) => void;
    maxPages?: number;
  },
): Promise<GitlabPages> {
  const maxPages = options.maxPages ?? GITLAB_MAX_PAGES;
  const first = new URL(firstUrl);
  if (!first.searchParams.has('per_page'))
    first.searchParams.set('per_page', String(GITLAB_PAGE_SIZE));
  const origin = first.origin;
  const seen = new Set<string>();
  const items: unknown[] = [];
  let notModified = 0;
  let url: string | null = first.toString();
  for (let page = 1; url !== null; page += 1) {
    if (page > maxPages) {
      options.onWarning(
        `GitLab offered more than ${maxPages} pages of ${first.pathname}; the rest is left unread`,
      );
      return { items, notModified, cut: true };
    }
    seen.add(url);
    const answer = await gitlabGet(transport, url, { signal: options.signal });
    if (!Array.isArray(answer.body)) {
      throw gitlabFailure(
        transport,
        'codehost_response',
        `GitLab answered page ${page} of ${first.pathname} with no list`,
        { page, path: first.pathname },
      );
    }
    if (answer.notModified) notModified += 1;
    items.push(...(answer.body as unknown[]));
    const next = nextPageUrl(url, answer.link);
    if (next === null) break;
    if (new URL(next).origin !== origin || seen.has(next)) {
      options.onWarning(`GitLab's next page of ${first.pathname} is not one to follow; stopped`);
      return { items, notModified, cut: true };
    }
    url = next;
  }
  return { items, notModified, cut: false };
}

/** The items of every page of a list that fit `schema`; each one that does not is warned about. */
export async function listItems<T>(
  context: GitlabContext,
  url: string,
  item: { schema: z.ZodType<T>; what: string },
  signal: AbortSignal | undefined,
): Promise<T[]> {
  const pages = await fetchPages(context.transport, url, { signal, onWarning: context.onWarning });
  return parseItems(item.schema, pages.items, item.what, context.onWarning);
}
