import { isMap, isScalar, isSeq, type LineCounter, type Node } from 'yaml';

/**
 * From a field's path to the line of a YAML file it is on, so that every error of `lorenz
 * workflow validate` names a line. Paths come as the messages spell them:
 * `spec.podTemplate.spec.containers[0]`, `tracker.issues[2].title`, and, from the
 * controller's pod template check, list entries by name: `containers[agent]`.
 */

/** A key of a map, an index of a list, or the entry of a list whose `name` is this. */
export type PathSegment = string | number | { name: string };

/** `podTemplate.spec.containers[agent].image` → segments (an index when all digits). */
export function parsePath(path: string): PathSegment[] {
  const segments: PathSegment[] = [];
  for (const match of path.matchAll(/([^.[\]]+)|\[([^\]]*)\]/g)) {
    const [, key, bracket] = match;
    if (key !== undefined) segments.push(key);
    else if (bracket !== undefined) {
      segments.push(/^\d+$/.test(bracket) ? Number(bracket) : { name: bracket });
    }
  }
  return segments;
}

/** Segments as a path for messages: `spec.workflowFrom.configMapKeyRef`, `containers[0]`. */
export function formatPath(segments: readonly PathSegment[]): string {
  return segments.reduce<string>((text, segment) => {
    if (typeof segment === 'number') return `${text}[${segment}]`;
    if (typeof segment === 'object') return `${text}[${segment.name}]`;
    return text === '' ? segment : `${text}.${segment}`;
  }, '');
}

function keyMatches(key: unknown, segment: string | number): boolean {
  return isScalar(key) && String(key.value) === String(segment);
}

/** The entry a segment selects in a collection, and the offset to report for it. */
function step(node: unknown, segment: PathSegment): { node: unknown; offset: number } | null {
  if (isMap(node)) {
    if (typeof segment === 'object') return null;
    const pair = node.items.find((item) => keyMatches(item.key, segment));
    const key = pair?.key as Node | undefined;
    if (!pair || !key?.range) return null;
    return { node: pair.value, offset: key.range[0] };
  }
  if (isSeq(node)) {
    const item =
      typeof segment === 'number'
        ? node.items[segment]
        : typeof segment === 'object'
          ? node.items.find(
              (entry) => isMap(entry) && keyMatches(entry.get('name', true), segment.name),
            )
          : undefined;
    const range = (item as Node | undefined)?.range;
    if (!item || !range) return null;
    return { node: item, offset: range[0] };
  }
  return null;
}

/**
 * The line of the deepest part of `segments` that `root` has: a field that is missing is
 * reported on the line of its parent, which is where it goes.
 */
export function lineOf(
  root: unknown,
  segments: readonly PathSegment[],
  lines: LineCounter,
): number {
  let node = root;
  let offset = (root as Node | null)?.range?.[0] ?? 0;
  for (const segment of segments) {
    const next = step(node, segment);
    if (!next) break;
    ({ node, offset } = next);
  }
  return lines.linePos(offset).line;
}

/** The node at `segments`, when each of them is there. */
export function nodeAt(root: unknown, segments: readonly PathSegment[]): unknown {
  let node = root;
  for (const segment of segments) {
    const next = step(node, segment);
    if (!next) return undefined;
    node = next.node;
  }
  return node;
}

/**
 * Where the text of a string field begins in the file, when its lines are the file's lines
 * one for one: a literal block scalar (`workflow: |`), whose text starts on the line after
 * the `|`. Other styles (quoted, folded) fold or escape lines: null, and the field's own
 * line is reported instead.
 */
export function blockTextLine(node: unknown, lines: LineCounter): number | null {
  if (!isScalar(node) || node.type !== 'BLOCK_LITERAL' || !node.range) return null;
  return lines.linePos(node.range[0]).line + 1;
}
