import { type Issue, normalizeIssue } from '../workflow/issue.js';

/**
 * The issues that normalize, each once by id: an issue edited mid-poll can move to a later
 * page and come back twice. One that does not normalize, or has no id, is left out.
 */
export function normalizedOnce<T>(
  items: readonly T[],
  normalize: (item: T) => Issue | null,
): Issue[] {
  const seen = new Set<string>();
  const issues: Issue[] = [];
  for (const item of items) {
    const issue = normalize(item);
    if (issue === null || issue.id === null || seen.has(issue.id)) continue;
    seen.add(issue.id);
    issues.push(issue);
  }
  return issues;
}

/** A tracker's issue normalized, or null when it does not normalize (a poll leaves it out). */
export function normalizedOrNull(input: unknown, where: string): Issue | null {
  try {
    return normalizeIssue(input, where);
  } catch {
    return null;
  }
}

/** `items` in slices of at most `size`, in order: for the trackers' by-id lookups. */
export function chunksOf<T>(items: readonly T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let start = 0; start < items.length; start += size)
    chunks.push(items.slice(start, start + size));
  return chunks;
}
