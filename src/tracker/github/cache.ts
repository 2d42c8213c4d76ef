import { createHash } from 'node:crypto';

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

  constructor(private readonly maxEntries = 512) {}

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
    this.entries.delete(key);
    this.entries.set(key, answer);
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done === true) break;
      this.entries.delete(oldest.value);
    }
  }

  /** An issue that is gone leaves nothing behind. */
  delete(token: string, url: string): void {
    this.entries.delete(EtagCache.key(token, url));
  }

  get size(): number {
    return this.entries.size;
  }
}

/** The cache adapters share unless they are given their own (tests do). */
export const SHARED_ETAG_CACHE = new EtagCache();
