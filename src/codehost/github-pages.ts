// Link-header pagination for the code host, bounded: a pull request with more than ten pages
// of comments is read as far as ten pages and the rest is said in a warning, because the
// review loop must go on (a round on what it has) rather than fail the run.
import { nextLink, resolveNextLink } from '../tracker/github/pages.js';
import { type GithubTransport, githubFailure, githubGet } from '../tracker/github/transport.js';

/** GitHub's largest page. */
export const CODEHOST_PAGE_SIZE = 100;
/** Pages read of one list at most. */
export const CODEHOST_MAX_PAGES = 10;

export interface PageOptions {
  signal?: AbortSignal | undefined;
  maxPages?: number;
  onWarning?: ((message: string) => void) | undefined;
  /** What the list is, for messages: `review comments of #12`. */
  what: string;
  /** The items of a page whose list is inside an object (check runs, statuses); default the page. */
  itemsOf?: (body: unknown) => unknown[] | null;
}

const asList = (body: unknown): unknown[] | null => (Array.isArray(body) ? body : null);

/**
 * Every item of a list, following rel="next" up to the bound. A page that is not a list and a
 * next link that leaves the API's origin (the token would go with it) or comes back to an
 * earlier page are `codehost_response`.
 */
export async function codehostPages(
  transport: GithubTransport,
  firstUrl: string,
  options: PageOptions,
): Promise<unknown[]> {
  const maxPages = options.maxPages ?? CODEHOST_MAX_PAGES;
  const itemsOf = options.itemsOf ?? asList;
  const origin = new URL(firstUrl).origin;
  const seen = new Set<string>();
  const items: unknown[] = [];
  let url: string | null = firstUrl;
  for (let page = 1; url !== null; page += 1) {
    if (page > maxPages) {
      options.onWarning?.(
        `GitHub has more than ${maxPages} pages of ${options.what}; only the first ${maxPages} were read`,
      );
      break;
    }
    seen.add(url);
    const answer = await githubGet(transport, url, { signal: options.signal });
    const list = itemsOf(answer.body);
    if (list === null) {
      throw githubFailure(
        transport,
        'codehost_response',
        `GitHub answered ${options.what} with no list`,
      );
    }
    items.push(...list);
    url = followed(transport, nextLink(answer.link), url, origin, seen, options.what);
  }
  return items;
}

/** The next page's URL, or null on the last page; a link not to follow is `codehost_response`. */
function followed(
  transport: GithubTransport,
  next: string | null,
  current: string,
  origin: string,
  seen: ReadonlySet<string>,
  what: string,
): string | null {
  if (next === null) return null;
  const resolved = resolveNextLink(next, current, origin, seen);
  if ('url' in resolved) return resolved.url;
  throw githubFailure(
    transport,
    'codehost_response',
    `GitHub's next link of ${what} ${resolved.problem}`,
  );
}
