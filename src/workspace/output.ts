/** Hook output and error texts are capped at this many characters in events and status. */
export const OUTPUT_LIMIT = 4096;

export interface Truncated {
  text: string;
  truncated: boolean;
}

/**
 * Keep the first 4096 characters and append `\n[truncated N chars]`, N being what was
 * dropped. Characters are code points, so a cut never splits a surrogate pair.
 */
export function truncateOutput(text: string, limit = OUTPUT_LIMIT): Truncated {
  // Fast path: fewer UTF-16 units than the limit means fewer code points too.
  if (text.length <= limit) return { text, truncated: false };
  const points = Array.from(text);
  if (points.length <= limit) return { text, truncated: false };
  const dropped = points.length - limit;
  return {
    text: `${points.slice(0, limit).join('')}\n[truncated ${dropped} chars]`,
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
    text: `${points.slice(0, limit).join('')}\n[truncated ${over + dropped} chars]`,
    truncated: true,
  };
}
