// The folder layout is the architecture: each folder of src/ is a layer and imports only from
// layers below it (docs/architecture.md#the-layers). Inside src/controller the same holds for its
// parts: runtime < shared < events < the per-kind controllers (issuerun, workflow: never each
// other) < main.ts. This test reads every import of src/ and fails on an edge that runs sideways or
// up.
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '../../../src');

/** Bottom to top. A layer may import from strictly lower ranks only. */
const LAYERS: Record<string, number> = {
  workflow: 0,
  template: 1,
  executor: 2,
  workspace: 3,
  agent: 4,
  tracker: 5,
  // The run archive's store sits beside the trackers: neither imports the other.
  archive: 5,
  dispatch: 6,
  // Code hosts (the review loop's pull requests) reuse the GitHub tracker's transport.
  codehost: 6,
  // The CRD types and the run-Pod contract: the runner reads the contract, so api is below it;
  // the gateway serves the inbox endpoints of api/inbox.ts, so api is below tools too.
  api: 7,
  tools: 8,
  runner: 9,
  'controller/runtime': 10,
  'controller/shared': 11,
  'controller/events': 12,
  'controller/issuerun': 13,
  'controller/workflow': 13,
  'controller/tools': 13,
  'controller/archive': 13,
  'controller/review': 13,
  'controller/webhooks': 13,
  // The inbox controller: approvals, questions and steers read from the comments.
  'controller/inbox': 13,
  // The warm controller: a Workflow's warm workspace (docs/snapshots.md#warm-workspaces).
  'controller/warm': 13,
  controller: 14,
  // The archive's read API: the controller's runtime (its KubeClient) and lower layers.
  server: 14,
  cli: 15,
};

/** The layer of a file under src/ (a path relative to src/). */
function layerOf(file: string): string {
  const parts = file.split('/');
  if (parts.length === 1) return file === 'cli.ts' ? 'cli' : `(root file ${file})`;
  if (parts[0] === 'controller' && parts.length > 2) return `controller/${parts[1]}`;
  return parts[0] ?? file;
}

interface Edge {
  from: string;
  to: string;
}

/** The edges that break the layering: unknown layers, sideways and upward imports. */
function violations(edges: readonly Edge[]): string[] {
  const problems: string[] = [];
  for (const { from, to } of edges) {
    const a = layerOf(from);
    const b = layerOf(to);
    if (a === b) continue;
    const rankA = LAYERS[a];
    const rankB = LAYERS[b];
    if (rankA === undefined || rankB === undefined) {
      problems.push(`${from} -> ${to}: layer ${rankA === undefined ? a : b} is not in LAYERS`);
    } else if (rankB >= rankA) {
      problems.push(`${from} (${a}) imports ${to} (${b}): not a lower layer`);
    }
  }
  return problems;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"](\.{1,2}\/[^'"]+)['"]/gm;

function importEdges(): Edge[] {
  const edges: Edge[] = [];
  for (const file of sourceFiles(SRC)) {
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(IMPORT)) {
      const target = resolve(dirname(file), (match[1] ?? '').replace(/\.js$/, '.ts'));
      edges.push({ from: relative(SRC, file), to: relative(SRC, target) });
    }
  }
  return edges;
}

describe('the import graph of src/', () => {
  it('finds the imports (the scan itself works)', () => {
    const edges = importEdges();
    expect(edges.length).toBeGreaterThan(200);
    expect(edges).toContainEqual({ from: 'runner/main.ts', to: 'api/run-pod.ts' });
    expect(edges).toContainEqual({
      from: 'controller/main.ts',
      to: 'controller/issuerun/setup.ts',
    });
  });

  it('has no edge that runs sideways or up a layer', () => {
    expect(violations(importEdges())).toEqual([]);
  });

  it.each([
    ['workflow/load.ts', 'template/prompt.ts', /not a lower layer/],
    ['controller/workflow/reconciler.ts', 'controller/issuerun/status.ts', /not a lower layer/],
    ['controller/events/recorder.ts', 'controller/issuerun/retry.ts', /not a lower layer/],
    ['runner/main.ts', 'controller/shared/constants.ts', /not a lower layer/],
    ['workflow/x.ts', 'mystery/y.ts', /layer mystery is not in LAYERS/],
  ])('refuses %s -> %s', (from, to, problem) => {
    expect(violations([{ from, to }])).toEqual([expect.stringMatching(problem)]);
  });

  it.each([
    ['template/load-workflow.ts', 'workflow/config.ts'],
    ['controller/issuerun/reconciler.ts', 'controller/shared/object-names.ts'],
    ['runner/inputs.ts', 'api/run-pod.ts'],
    ['cli.ts', 'cli/usage.ts'],
  ])('allows %s -> %s', (from, to) => {
    expect(violations([{ from, to }])).toEqual([]);
  });
});

/** The layers top to bottom, one line per rank, as docs/architecture.md draws them. */
function layerPicture(layers: Record<string, number>): string {
  const ranks = [...new Set(Object.values(layers))].sort((a, b) => b - a);
  return ranks
    .map((rank) => {
      const names = Object.keys(layers).filter((name) => layers[name] === rank);
      return `${String(rank).padStart(2)}  ${names.join(', ')}`;
    })
    .join('\n');
}

describe('docs/architecture.md', () => {
  const doc = readFileSync(resolve(import.meta.dirname, '../../../docs/architecture.md'), 'utf8');

  it('draws the layers this test enforces, rank by rank', () => {
    expect(doc).toContain(`\`\`\`\n${layerPicture(LAYERS)}\n\`\`\``);
  });

  it('describes every folder of src/ in its table', () => {
    const folders = readdirSync(SRC, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
    expect(folders.length).toBeGreaterThan(10);
    for (const folder of folders) expect(doc, `src/${folder}`).toContain(`| \`src/${folder}\``);
  });

  it('draws a picture from the ranks (the renderer itself)', () => {
    expect(layerPicture({ a: 0, b: 1, c: 1 })).toBe(' 1  b, c\n 0  a');
  });
});
