import { createHash } from 'node:crypto';
import { type HttpService, timedExchange } from '../http.js';

/** What a 304 stands for: the body and the Link header of the answer that carried the ETag. */
export interface CachedAnswer {
  etag: string;
  body: string;
  link: string | null;
}

/**
 * Answers remembered by URL so that the next poll can ask `If-None-Match`: GitHub answers an
 * unchanged resource with 304, which does not count against the rate limit. The controller
 * builds a new adapter for every poll, so the default cache is shared by every adapter in the
 * process. Entries are keyed by a digest of the token too: two tokens may see different
 * issues, and one must never be served what only the other may read.
 */
export class EtagCache {
  private readonly entries = new Map<string, CachedAnswer>();
  private bytes = 0;

  /**
   * Bounded by bytes as well as entries: a page of 100 issues with long bodies can weigh
   * hundreds of kB, and the controller's memory budget is shared with every IssueRun it caches.
   */
  constructor(
    private readonly maxEntries = 512,
    private readonly maxBytes = 32 * 1024 * 1024,
  ) {}

  private static key(token: string, url: string): string {
    const digest = createHash('sha256').update(token).digest('hex').slice(0, 16);
    return `${digest} ${url}`;
  }

  get(token: string, url: string): CachedAnswer | undefined {
    const key = EtagCache.key(token, url);
    const found = this.entries.get(key);
    if (found !== undefined) {
      // Re-inserted, so the Map's order is least recently used first.
      this.entries.delete(key);
      this.entries.set(key, found);
    }
    return found;
  }

  set(token: string, url: string, answer: CachedAnswer): void {
    const key = EtagCache.key(token, url);
    this.remove(key);
    // An answer larger than the whole budget is not kept: it would evict everything else.
    if (answer.body.length > this.maxBytes) return;
    this.entries.set(key, answer);
    this.bytes += answer.body.length;
    while (this.entries.size > this.maxEntries || this.bytes > this.maxBytes) {
      const oldest = this.entries.keys().next();
      if (oldest.done === true) break;
      this.remove(oldest.value);
    }
  }

  /** An issue that is gone leaves nothing behind. */
  delete(token: string, url: string): void {
    this.remove(EtagCache.key(token, url));
  }

  private remove(key: string): void {
    const found = this.entries.get(key);
    if (found === undefined) return;
    this.bytes -= found.body.length;
    this.entries.delete(key);
  }

  get size(): number {
    return this.entries.size;
  }
}

/** The cache adapters share unless they are given their own (tests do). */
export const SHARED_ETAG_CACHE = new EtagCache();

/**
 * A GET that sends the remembered ETag as If-None-Match. The remembered answer comes back
 * beside the fresh one, for the caller to serve when the server says 304.
 */
export async function conditionalGet(
  service: HttpService,
  cache: EtagCache,
  token: string,
  url: string,
  headers: Record<string, string>,
  signal: AbortSignal | undefined,
): Promise<{ response: Response; text: string; cached: CachedAnswer | undefined }> {
  const cached = cache.get(token, url);
  const { response, text } = await timedExchange(
    service,
    url,
    {
      method: 'GET',
      headers: { ...headers, ...(cached === undefined ? {} : { 'if-none-match': cached.etag }) },
    },
    signal,
  );
  return { response, text, cached };
}

/** Remembers an answer for the next conditionalGet, if it carries an ETag. */
export function rememberAnswer(
  cache: EtagCache,
  token: string,
  url: string,
  answer: { headers: Headers; text: string; link: string | null },
): void {
  const etag = answer.headers.get('etag');
  if (etag !== null && etag !== '')
    cache.set(token, url, { etag, body: answer.text, link: answer.link });
}
