import { type GithubTransport, githubFailure, githubGet } from './transport.js';

/** GitHub's largest page. */
export const GITHUB_PAGE_SIZE = 100;
/**
 * More pages than this is a loop, not a repository: 100 pages of 100 are 10 000 issues, far
 * beyond any set a poll should carry.
 */
export const GITHUB_MAX_PAGES = 100;

/**
 * The `rel="next"` target of a Link header (RFC 8288), or null. Entries are split on commas
 * outside the angle brackets, since a URL may hold a comma.
 */
export function nextLink(header: string | null): string | null {
  if (header === null) return null;
  const entry = /<([^>]*)>\s*((?:;\s*[^;,]*)*)/g;
  for (const match of header.matchAll(entry)) {
    const params = match[2] ?? '';
    const rel = /;\s*rel\s*=\s*"?([^";]*)"?/i.exec(params)?.[1] ?? '';
    if (rel.split(/\s+/).includes('next')) return match[1] ?? null;
  }
  return null;
}

/**
 * A next link resolved against the page that gave it, or why it may not be followed: it is not
 * a URL, it leaves the first page's origin (the token would go with it), or it comes back to a
 * page already read (a loop). The tracker and the code host walk GitHub's lists alike; each
 * reports the problem under its own error code.
 */
export function resolveNextLink(
  next: string,
  current: string,
  origin: string,
  seen: ReadonlySet<string>,
): { url: string } | { problem: string } {
  const resolved = URL.parse(next, current);
  if (resolved === null) return { problem: 'is not a URL' };
  if (resolved.origin !== origin) return { problem: `leaves ${origin}; not followed` };
  const url = resolved.toString();
  if (seen.has(url)) return { problem: 'points at an earlier page' };
  return { url };
}

export interface PagesResult {
  items: unknown[];
  /** How many pages GitHub answered 304 (cost no rate limit). */
  notModified: number;
  pages: number;
}

/**
 * Every page of a list, following Link rel="next" as GitHub gives it. A next URL seen before,
 * one on another origin (the token would go with it), or more than `maxPages` pages is
 * `tracker_pagination`; a page that is not a JSON array is `tracker_response`.
 */
export async function fetchAllPages(
  transport: GithubTransport,
  firstUrl: string,
  maxPages: number,
  signal: AbortSignal | undefined,
): Promise<PagesResult> {
  const origin = new URL(firstUrl).origin;
  const seen = new Set<string>();
  const items: unknown[] = [];
  let notModified = 0;
  let url: string | null = firstUrl;
  let page = 0;
  while (url !== null) {
    page += 1;
    if (page > maxPages) {
      throw githubFailure(
        transport,
        'tracker_pagination',
        `GitHub kept offering pages past ${maxPages}`,
        { maxPages },
      );
    }
    seen.add(url);
    const answer = await githubGet(transport, url, { signal });
    if (!Array.isArray(answer.body)) {
      throw githubFailure(
        transport,
        'tracker_response',
        `GitHub answered page ${page} with no list`,
        {
          page,
        },
      );
    }
    if (answer.notModified) notModified += 1;
    items.push(...(answer.body as unknown[]));
    const next = nextLink(answer.link);
    if (next === null) break;
    const followed = resolveNextLink(next, url, origin, seen);
    if ('problem' in followed) {
      throw githubFailure(
        transport,
        'tracker_pagination',
        `GitHub's next link on page ${page} ${followed.problem}`,
        { page },
      );
    }
    url = followed.url;
  }
  return { items, notModified, pages: page };
}
