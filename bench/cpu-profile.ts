// BENCH_PROFILE's summary: where a V8 CPU profile's time went, by function and by source file,
// and where the sampled allocations were made (the garbage behind the collector's share).
// The controller runs from an esbuild bundle; its linked source map turns bundle positions
// back into src/ files and lines, so the summary names the code a change would touch.
import { readFileSync } from 'node:fs';
import { SourceMap, type SourceMapPayload } from 'node:module';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { repo } from './reconcile-env.js';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** V8's own entries: not code of ours, but still where the time went. */
const V8_ENTRIES = new Set(['(idle)', '(garbage collector)', '(program)', '(root)']);

function sourceMapOf(url: string, maps: Map<string, SourceMap | undefined>) {
  if (!maps.has(url)) {
    let map: SourceMap | undefined;
    try {
      if (url.startsWith('file://'))
        map = new SourceMap(
          JSON.parse(readFileSync(`${fileURLToPath(url)}.map`, 'utf8')) as SourceMapPayload,
        );
    } catch {
      map = undefined; // no map beside it: the bundle's own positions are named instead
    }
    maps.set(url, map);
  }
  return maps.get(url);
}

/** Where one profile node's code came from: "name src/file.ts:line", and the file alone. */
function place(frame: CallFrame, maps: Map<string, SourceMap | undefined>) {
  const name = frame.functionName || '(anonymous)';
  if (V8_ENTRIES.has(name)) return { label: name, file: name };
  const map = sourceMapOf(frame.url, maps);
  const entry = map?.findEntry(frame.lineNumber, frame.columnNumber);
  const source = entry && 'originalSource' in entry ? entry.originalSource : undefined;
  if (!source || !entry || !('originalLine' in entry)) {
    const file = frame.url.replace(/^node:/, 'node:') || '(native)';
    return { label: `${name} ${file}:${frame.lineNumber + 1}`, file };
  }
  const path = source.startsWith('file://') ? fileURLToPath(source) : source;
  const local = relative(repo, path.replace(/^.*?\/\.\.\//, '/'));
  // Dependencies by package, our own code by file.
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(local)?.[1];
  const file = pkg ? `npm:${pkg}` : local;
  return { label: `${name} ${pkg ? file : local}:${entry.originalLine + 1}`, file };
}

function top(totals: Map<string, number>, count: number, busyUs: number): string[] {
  return [...totals]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(
      ([key, us]) =>
        `${(us / 1000).toFixed(0).padStart(7)} ms ${((100 * us) / busyUs).toFixed(1).padStart(5)} %  ${key}`,
    );
}

/** Lines to print: the top `count` functions and files by self time, idle left out. */
export function summarizeCpuProfile(json: string, count: number): string[] {
  const profile = JSON.parse(json) as CpuProfile;
  const maps = new Map<string, SourceMap | undefined>();
  const places = new Map(profile.nodes.map((node) => [node.id, place(node.callFrame, maps)]));
  const parents = new Map<number, number>();
  for (const node of profile.nodes)
    for (const child of node.children ?? []) parents.set(child, node.id);
  const byFunction = new Map<string, number>();
  const byFile = new Map<string, number>();
  const ownInclusive = new Map<string, number>();
  let busyUs = 0;
  profile.samples.forEach((id, index) => {
    const where = places.get(id);
    const us = profile.timeDeltas[index] ?? 0;
    if (!where || where.label === '(idle)') return;
    busyUs += us;
    byFunction.set(where.label, (byFunction.get(where.label) ?? 0) + us);
    byFile.set(where.file, (byFile.get(where.file) ?? 0) + us);
    // Inclusive time of our own functions: each once per sample, however deep it recurses.
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parents.get(at)) {
      const frame = places.get(at);
      if (!frame?.file.startsWith('src/') || seen.has(frame.label)) continue;
      seen.add(frame.label);
      ownInclusive.set(frame.label, (ownInclusive.get(frame.label) ?? 0) + us);
    }
  });
  return [
    `CPU profile: ${(busyUs / 1000).toFixed(0)} ms busy (idle left out)`,
    '  self time by function:',
    ...top(byFunction, count, busyUs).map((line) => `  ${line}`),
    '  self time by file (dependencies by package):',
    ...top(byFile, count, busyUs).map((line) => `  ${line}`),
    "  inclusive time of src/'s functions (what they and all they call took):",
    ...top(ownInclusive, count, busyUs).map((line) => `  ${line}`),
  ];
}

interface AllocationNode {
  callFrame: CallFrame;
  selfSize: number;
  children?: AllocationNode[];
}

/**
 * Lines to print: the top `count` functions and files by bytes allocated (V8's sampling heap
 * profiler, every allocation site weighted by what it sampled), and the inclusive bytes of
 * src/'s functions, as for the CPU.
 */
export function summarizeAllocations(json: string, count: number): string[] {
  if (!json) return [];
  const { head } = JSON.parse(json) as { head: AllocationNode };
  const maps = new Map<string, SourceMap | undefined>();
  const byFunction = new Map<string, number>();
  const byFile = new Map<string, number>();
  const ownInclusive = new Map<string, number>();
  let total = 0;
  const walk = (node: AllocationNode, stack: { label: string; file: string }[]) => {
    const where = place(node.callFrame, maps);
    const path = [...stack, where];
    if (node.selfSize > 0) {
      total += node.selfSize;
      byFunction.set(where.label, (byFunction.get(where.label) ?? 0) + node.selfSize);
      byFile.set(where.file, (byFile.get(where.file) ?? 0) + node.selfSize);
      for (const label of new Set(
        path.filter((f) => f.file.startsWith('src/')).map((f) => f.label),
      ))
        ownInclusive.set(label, (ownInclusive.get(label) ?? 0) + node.selfSize);
    }
    for (const child of node.children ?? []) walk(child, path);
  };
  walk(head, []);
  const lines = (totals: Map<string, number>) =>
    [...totals]
      .sort((a, b) => b[1] - a[1])
      .slice(0, count)
      .map(
        ([key, bytes]) =>
          `  ${(bytes / 2 ** 20).toFixed(1).padStart(7)} MiB ${((100 * bytes) / total).toFixed(1).padStart(5)} %  ${key}`,
      );
  return [
    `allocations sampled: ${(total / 2 ** 20).toFixed(0)} MiB (still live at the end or not)`,
    '  by function:',
    ...lines(byFunction),
    '  by file (dependencies by package):',
    ...lines(byFile),
    "  inclusive, src/'s functions:",
    ...lines(ownInclusive),
  ];
}
