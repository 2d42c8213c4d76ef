// Token-paged listings (Jira's nextPageToken, Linear's endCursor): the same guards against a
// listing that never ends, whatever the tracker calls its token. Each tracker still reads its
// own pages and decides when a page is the last.
import type { FailureOf } from './http.js';

/** One page's items, and the token of the next page (null: this page is the last). */
export interface TokenPage {
  items: readonly unknown[];
  next: string | null;
}

export interface TokenPaging {
  /** Who answers and what it calls its token, for the messages (`Jira`, `nextPageToken`). */
  service: string;
  tokenName: string;
  maxPages: number;
  /** The transport's `tracker_pagination` error. */
  paginationFailure: FailureOf;
}

/**
 * The items of every page, each next page asked for by the token the last one gave (null for
 * the first). More than `maxPages` pages, or a token seen before, is `tracker_pagination`:
 * either would otherwise poll forever.
 */
export async function followTokenPages(
  paging: TokenPaging,
  pageAfter: (token: string | null, page: number) => Promise<TokenPage>,
): Promise<unknown[]> {
  const { service, tokenName, maxPages, paginationFailure } = paging;
  const items: unknown[] = [];
  const seen = new Set<string>();
  let token: string | null = null;
  for (let page = 1; ; page += 1) {
    if (page > maxPages) {
      throw paginationFailure(`${service} kept offering pages past ${maxPages}`, { maxPages });
    }
    const answer = await pageAfter(token, page);
    items.push(...answer.items);
    if (answer.next === null) return items;
    if (seen.has(answer.next)) {
      throw paginationFailure(
        `${service} gave the ${tokenName} of an earlier page again (page ${page})`,
        { page },
      );
    }
    seen.add(answer.next);
    token = answer.next;
  }
}
