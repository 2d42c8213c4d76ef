// Every make target must work from a fresh clone, in any order: a target whose recipe runs
// something that needs node_modules (esbuild, the project's Node 24, npm scripts) or dist/
// (the built CLI and runner) must depend on deps or build, directly or through another
// target. `make e2e-local` had no prerequisite and failed at once on a fresh clone
// (`esbuild: command not found`). What a recipe needs is read from the recipe and the hack
// scripts it runs (and the ones those source or run), with their comments left out.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '../../..');

interface Target {
  prerequisites: string[];
  recipe: string[];
}

/** The rules of a Makefile: `name: prerequisites ## help` and their tab-indented recipes. */
function parseMakefile(text: string): Map<string, Target> {
  const targets = new Map<string, Target>();
  let current: Target | undefined;
  for (const line of text.split('\n')) {
    if (line.startsWith('\t')) {
      current?.recipe.push(line.slice(1));
      continue;
    }
    current = undefined;
    const rule = /^([A-Za-z0-9_./-]+):(?!=)([^#]*)(?:##.*)?$/.exec(line);
    if (rule === null || rule[1]?.startsWith('.')) continue;
    current = { prerequisites: (rule[2] ?? '').trim().split(/\s+/).filter(Boolean), recipe: [] };
    targets.set(rule[1] ?? '', current);
  }
  return targets;
}

type Need = 'nothing' | 'node_modules' | 'dist';
const RANK: Record<Need, number> = { nothing: 0, node_modules: 1, dist: 2 };
const higher = (a: Need, b: Need): Need => (RANK[a] >= RANK[b] ? a : b);

/** What one line of shell needs by itself. */
function lineNeeds(line: string): Need {
  if (/\bdist\/(lorenz|scripted-agent|cli)|\bensure_built\b/.test(line)) return 'dist';
  if (/node_modules|\besbuild\b|run-ts\.sh|\$\(NPM\) (run|test)|\bnpm (run|test)\b/.test(line)) {
    return 'node_modules';
  }
  return 'nothing';
}

const code = (text: string) => text.split('\n').filter((line) => !/^\s*#/.test(line));

/** The hack scripts a piece of shell runs or sources, as paths under the repository. */
function scriptsIn(lines: string[], from: string): string[] {
  const found = new Set<string>();
  for (const line of lines) {
    for (const match of line.matchAll(/(?:hack\/)?((?:lib\/)?[\w-]+\.sh)\b/g)) {
      const name = match[1] ?? '';
      for (const candidate of [join('hack', name), normalize(join(from, name))]) {
        if (existsSync(join(root, candidate))) found.add(candidate);
      }
    }
  }
  return [...found];
}

/** What running a script needs, with what it runs and sources (each script read once). */
function scriptNeeds(path: string, seen = new Set<string>()): Need {
  if (seen.has(path)) return 'nothing';
  seen.add(path);
  const lines = code(readFileSync(join(root, path), 'utf8'));
  let need = lines.map(lineNeeds).reduce(higher, 'nothing');
  for (const next of scriptsIn(lines, join(path, '..')))
    need = higher(need, scriptNeeds(next, seen));
  return need;
}

function recipeNeeds(target: Target): Need {
  // `npm ci` is what installs node_modules: the one recipe that may run npm without them.
  const lines = target.recipe.filter((line) => !/\$\(NPM\) ci\b/.test(line));
  let need = lines.map(lineNeeds).reduce(higher, 'nothing');
  for (const script of scriptsIn(lines, 'hack')) need = higher(need, scriptNeeds(script));
  return need;
}

/** The targets a target depends on, directly or through others. */
function closure(
  targets: Map<string, Target>,
  name: string,
  seen = new Set<string>(),
): Set<string> {
  for (const prerequisite of targets.get(name)?.prerequisites ?? []) {
    if (seen.has(prerequisite)) continue;
    seen.add(prerequisite);
    closure(targets, prerequisite, seen);
  }
  return seen;
}

/** The prerequisite that provides a need. */
const PROVIDER: Record<Exclude<Need, 'nothing'>, string> = { node_modules: 'deps', dist: 'build' };

const makefile = parseMakefile(readFileSync(join(root, 'Makefile'), 'utf8'));

// Every target, with what it needs. `dist` includes node_modules (build depends on deps).
// The test tiers run the built CLI, so `test` needs dist beyond what its recipe shows.
const TARGETS: [string, Need][] = [
  ['help', 'nothing'],
  ['deps', 'nothing'],
  ['build', 'node_modules'],
  ['lint', 'node_modules'],
  ['tools', 'nothing'],
  ['test', 'dist'],
  ['crds', 'node_modules'],
  ['dev', 'dist'],
  ['demo', 'dist'],
  ['docker-build', 'nothing'],
  ['images', 'node_modules'],
  ['helm-lint', 'node_modules'],
  ['e2e-kind', 'nothing'],
  ['e2e-real-node', 'dist'],
  ['e2e-local', 'dist'],
];

describe('make targets from a fresh clone', () => {
  it('has a row here for every target of the Makefile', () => {
    const rows = TARGETS.map(([name]) => name).sort();
    const rules = [...makefile.keys()].filter((name) => !name.includes('/')).sort();
    expect(rows).toEqual(rules);
  });

  it.each(TARGETS)('make %s needs %s, and its prerequisites provide it', (name, need) => {
    const target = makefile.get(name);
    expect(target, `no target ${name} in the Makefile`).toBeDefined();
    if (target === undefined) return;
    // The row is at least what the recipe and its scripts show.
    const found = recipeNeeds(target);
    expect(RANK[need], `${name}'s recipe needs ${found}`).toBeGreaterThanOrEqual(RANK[found]);
    if (need === 'nothing') return;
    const provider = PROVIDER[need];
    if (name === provider) return;
    expect([...closure(makefile, name)], `make ${name} must depend on ${provider}`).toContain(
      provider,
    );
  });

  it('reads what recipes need (the parser and the scan themselves)', () => {
    const parsed = parseMakefile(
      'X := 1\n.PHONY: a b\na: b ## help\n\thack/e2e-local.sh\nb:\n\t$(NPM) ci\nc: ## c\n\ttrue\n',
    );
    expect([...parsed.keys()]).toEqual(['a', 'b', 'c']);
    expect(parsed.get('a')).toEqual({ prerequisites: ['b'], recipe: ['hack/e2e-local.sh'] });
    expect(recipeNeeds({ prerequisites: [], recipe: ['hack/e2e-local.sh'] })).toBe('dist');
    expect(recipeNeeds({ prerequisites: [], recipe: ['hack/images.sh'] })).toBe('node_modules');
    expect(recipeNeeds({ prerequisites: [], recipe: ['$(NPM) ci --no-audit'] })).toBe('nothing');
    expect(recipeNeeds({ prerequisites: [], recipe: ['hack/tools.sh > /dev/null'] })).toBe(
      'nothing',
    );
  });

  it('documents in the README and docs/ only targets the Makefile has', () => {
    const docs = readdirSync(join(root, 'docs'))
      .filter((name) => name.endsWith('.md'))
      .map((name) => join('docs', name));
    const readme = ['README.md', 'CONTRIBUTING.md', ...docs]
      .map((path) => readFileSync(join(root, path), 'utf8'))
      .join('\n');
    const documented = new Set(
      [...readme.matchAll(/`make ([a-z0-9-]+)[^`]*`|^make ([a-z0-9-]+)/gm)].map(
        (match) => match[1] ?? match[2] ?? '',
      ),
    );
    expect(documented.size).toBeGreaterThan(3);
    for (const name of documented) expect(makefile.has(name), `make ${name}`).toBe(true);
  });
});
