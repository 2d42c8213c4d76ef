import type { TrackerComment } from '../../tracker/types.js';
import { isInboxComment } from './commands.js';

/**
 * The tracker user Lorenz writes as. The agents write as it too (the tracker tools of the
 * gateway), so a comment by it is never a person's answer: without this an agent could
 * approve its own request, or one slot another's, with a `/approve` comment. Lorenz's user is
 * known from the comments it wrote (marked, or posted by this controller). A person who
 * comments with that same account answers with `lorenz approve` instead.
 */

/** Who wrote a comment, as one key: the tracker's stable user id, else the name. */
export function authorKey(comment: TrackerComment): string | null {
  const id = comment.author_id?.trim();
  if (id) return `id:${id}`;
  const name = comment.author?.trim().toLowerCase();
  return name ? `name:${name}` : null;
}

/** The keys of Lorenz's tracker user: those known, and the authors of its marked comments. */
export function selfAuthors(
  comments: readonly TrackerComment[],
  known: readonly string[] = [],
): Set<string> {
  const keys = new Set(known);
  for (const comment of comments) {
    const key = isInboxComment(comment.body) ? authorKey(comment) : null;
    if (key) keys.add(key);
  }
  return keys;
}
