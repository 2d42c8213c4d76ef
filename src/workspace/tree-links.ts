import { LorenzError } from '../workflow/errors.js';
import type { TreeEntry } from './tree-walk.js';

/**
 * Symlink containment inside a listed tree (docs/snapshots.md#the-workspace-digest). The
 * checks of containment.ts ask the filesystem (realpath) about one path at a time; here every
 * link of the tree is checked, dangling ones too (realpath cannot resolve those), against the
 * listing itself, so the answer does not depend on where the volume is mounted.
 */

/** Linux's MAXSYMLINKS: a chain longer than this is a loop to the kernel too. */
const MAX_HOPS = 40;

// Paths as latin1 strings: one character a byte, so a name that is not UTF-8 keeps its bytes
// and `/` is still `/`.
const key = (bytes: Buffer): string => bytes.toString('latin1');

type Verdict = 'contained' | 'absolute' | 'climbs out' | 'loops';

/**
 * Follows `target` from the link's directory the way the kernel would, one component at a
 * time, links included. A name the tree lacks (or a file used as a directory) would stop the
 * kernel; the rest of the target is still followed as written, so a dangling link may not name
 * a place above the top either (a later hook could create what it names).
 */
function follow(link: string, target: string, links: ReadonlyMap<string, string>): Verdict {
  if (target.startsWith('/')) return 'absolute';
  const at = link.split('/').slice(0, -1);
  let pending = target.split('/');
  let hops = 0;
  while (pending.length > 0) {
    const [part = '', ...rest] = pending;
    pending = rest;
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (at.length === 0) return 'climbs out';
      at.pop();
      continue;
    }
    const next = links.get([...at, part].join('/'));
    if (next === undefined) {
      at.push(part);
      continue;
    }
    if (++hops > MAX_HOPS) return 'loops';
    // Through another link: it is absolute (out, whatever it names), or read from its own
    // directory, which is where `at` stands.
    if (next.startsWith('/')) return 'absolute';
    pending = [...next.split('/'), ...pending];
  }
  return 'contained';
}

const WHY: Record<Exclude<Verdict, 'contained'>, string> = {
  absolute: 'an absolute target, or a link on its way to one, leads outside the workspace',
  'climbs out': 'its target climbs above the top of the workspace',
  loops: `its target does not resolve within ${MAX_HOPS} links (a loop)`,
};

/** Throws workspace_tree_symlink_escapes for the first link (in `entries`' order) that escapes. */
export function assertLinksContained(root: string, entries: readonly TreeEntry[]): void {
  const links = new Map<string, string>();
  for (const entry of entries) {
    if (entry.kind === 'symlink') links.set(key(entry.path), key(entry.target));
  }
  for (const [link, target] of links) {
    const verdict = follow(link, target, links);
    if (verdict === 'contained') continue;
    const path = `${root}/${Buffer.from(link, 'latin1').toString()}`;
    const shownTarget = Buffer.from(target, 'latin1').toString();
    throw new LorenzError(
      'workspace_tree_symlink_escapes',
      `workspace_tree_symlink_escapes: ${path} -> ${shownTarget}: ${WHY[verdict]}`,
      { path, target: shownTarget },
    );
  }
}
