// `hack/run-ts.sh hack/check-links.ts` (part of `npm run lint`): every relative link and
// #anchor in the repository's own Markdown must resolve, offline. Links with a scheme
// (https:, mailto:) are not fetched: the check is about the files this repository holds.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';

export interface BrokenLink {
  /** The Markdown file, relative to the root. */
  file: string;
  line: number;
  target: string;
  reason: string;
}

/** Markdown with fenced code blocks blanked out (line numbers kept): what is in them is text. */
function withoutFences(text: string): string[] {
  let fence: string | null = null;
  return text.split('\n').map((line) => {
    const opening = /^\s*(`{3,}|~{3,})/.exec(line);
    if (fence === null && opening) {
      fence = opening[1]!;
      return '';
    }
    if (fence !== null) {
      if (line.trim().startsWith(fence)) fence = null;
      return '';
    }
    return line;
  });
}

/** GitHub's anchor for a heading's text: lower case, punctuation dropped, each space a dash. */
export function slug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/[`*]/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors a Markdown file offers: its headings (numbered when repeated) and `<a id>`s. */
export function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of withoutFences(text)) {
    for (const match of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(match[1]!);
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = slug(heading[1]!);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** `[text](target)`, `![alt](target)` and `[label]: target`, each with its line. */
function linksOf(text: string): { line: number; target: string }[] {
  const links: { line: number; target: string }[] = [];
  // Inline code spans hold no links either.
  withoutFences(text).forEach((raw, index) => {
    const line = raw.replace(/`[^`]*`/g, '');
    for (const match of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      links.push({ line: index + 1, target: match[1]! });
    }
    const definition = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/.exec(line);
    if (definition) links.push({ line: index + 1, target: definition[1]! });
  });
  return links;
}

/** Check the links of `files` (paths relative to `root`); returns what does not resolve. */
export function checkLinks(root: string, files: string[]): BrokenLink[] {
  const anchorCache = new Map<string, Set<string>>();
  const anchorsIn = (path: string): Set<string> => {
    let anchors = anchorCache.get(path);
    if (!anchors) {
      anchors = anchorsOf(readFileSync(path, 'utf8'));
      anchorCache.set(path, anchors);
    }
    return anchors;
  };
  const broken: BrokenLink[] = [];
  for (const file of files) {
    const source = join(root, file);
    for (const { line, target } of linksOf(readFileSync(source, 'utf8'))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      const hash = target.indexOf('#');
      const pathPart = decodeURIComponent(hash < 0 ? target : target.slice(0, hash));
      const anchor = hash < 0 ? null : decodeURIComponent(target.slice(hash + 1));
      const resolved =
        pathPart === ''
          ? source
          : pathPart.startsWith('/')
            ? join(root, pathPart)
            : normalize(join(dirname(source), pathPart));
      const report = (reason: string) => broken.push({ file, line, target, reason });
      if (relative(root, resolved).startsWith('..')) {
        report('points outside the repository');
        continue;
      }
      if (!existsSync(resolved)) {
        report(`no such file: ${relative(root, resolved)}`);
        continue;
      }
      if (anchor === null || anchor === '' || !resolved.endsWith('.md')) continue;
      if (statSync(resolved).isDirectory()) continue;
      if (!anchorsIn(resolved).has(anchor)) {
        report(`no heading #${anchor} in ${relative(root, resolved)}`);
      }
    }
  }
  return broken;
}

/** The repository's Markdown files: tracked or new, never ignored (node_modules, dist). */
function markdownFiles(root: string): string[] {
  const out = execFileSync(
    'git',
    ['ls-files', '--cached', '--others', '--exclude-standard', '-z', '--', '*.md'],
    { cwd: root, encoding: 'utf8' },
  );
  return out
    .split('\0')
    .filter((path) => path !== '' && existsSync(join(root, path)))
    .sort();
}

if (process.argv[1] && /check-links(\.\d+)?(\.run)?\.(ts|mjs)$/.test(process.argv[1])) {
  const root = join(import.meta.dirname, '..');
  const files = markdownFiles(root);
  const broken = checkLinks(root, files);
  for (const link of broken) {
    process.stderr.write(`${link.file}:${link.line}: ${link.target}: ${link.reason}\n`);
  }
  if (broken.length > 0) {
    process.stderr.write(`check-links: ${broken.length} broken link(s) in ${files.length} files\n`);
    process.exit(1);
  }
  process.stdout.write(`check-links: ${files.length} Markdown files, every link resolves\n`);
}
