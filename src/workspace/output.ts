/**
 * Hook output and error texts are capped at this many characters in events and status. The
 * one constant: the IssueRun status schema's limit (api/issuerun.ts) is derived from it.
 */
export const OUTPUT_LIMIT = 4096;

/**
 * Room for the truncation marker (`\n[truncated N chars]`) after the kept characters: the
 * marker for the largest count a number holds exactly (Number.MAX_SAFE_INTEGER, 16 digits)
 * is 35 characters, so this leaves headroom, and it keeps the CRD's published 4200.
 */
export const TRUNCATION_MARKER_ROOM = 104;

/** The longest text truncateOutput returns for the default limit, marker included. */
export const TRUNCATED_OUTPUT_MAX_LENGTH = OUTPUT_LIMIT + TRUNCATION_MARKER_ROOM;

/** The marker appended after a cut that dropped `dropped` characters. */
export const truncationMarker = (dropped: number): string => `\n[truncated ${dropped} chars]`;

export interface Truncated {
  text: string;
  truncated: boolean;
}

/**
 * Keep the first `limit` (OUTPUT_LIMIT) characters and append `\n[truncated N chars]`, N being what was
 * dropped. Characters are code points, so a cut never splits a surrogate pair.
 */
export function truncateOutput(text: string, limit = OUTPUT_LIMIT): Truncated {
  // Fast path: fewer UTF-16 units than the limit means fewer code points too.
  if (text.length <= limit) return { text, truncated: false };
  const points = Array.from(text);
  if (points.length <= limit) return { text, truncated: false };
  const dropped = points.length - limit;
  return {
    text: `${points.slice(0, limit).join('')}${truncationMarker(dropped)}`,
    truncated: true,
  };
}

/**
 * truncateOutput for text captured with a limit: `dropped` characters were counted but not
 * kept, and the marker counts them too, so the result is what truncating the whole text
 * would have given.
 */
export function truncateCaptured(text: string, dropped: number, limit = OUTPUT_LIMIT): Truncated {
  if (dropped === 0) return truncateOutput(text, limit);
  const points = Array.from(text);
  const over = Math.max(points.length - limit, 0);
  return {
    text: `${points.slice(0, limit).join('')}${truncationMarker(over + dropped)}`,
    truncated: true,
  };
}
