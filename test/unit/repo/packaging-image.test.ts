// Static checks of the images, cheap enough for every unit run: hadolint-style rules on both
// Dockerfiles, a build context (.dockerignore) that holds every file the Dockerfile copies,
// and a runner bundle that needs no node_modules at run time (the final stage has none).
// The images are built and run for real by test/integration/images.test.ts (Docker).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { join } from 'node:path';
import { build } from 'esbuild';
import { sshBundleOptions } from '../../../hack/bundle-native.mjs';
import { describe, expect, it } from 'vitest';
import { node24, repoRoot, scratchDir } from './scratch.js';

const read = (path: string) => readFileSync(join(repoRoot, path), 'utf8');
/** The esbuild options of the image's bundles (hack/bundle.mjs): one ESM file for Node 22+. */
const BUNDLE = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  banner: {
    js: "import { createRequire as __lorenzCreateRequire } from 'node:module'; const require = __lorenzCreateRequire(import.meta.url);",
  },
  logLevel: 'silent',
} as const;

interface Instruction {
  keyword: string;
  args: string;
  line: number;
  stage: number;
  /** hadolint rule ids disabled for this instruction by a `# hadolint ignore=` comment. */
  ignored: string[];
}

/** Instructions with continuation lines joined and comments dropped. */
function parseDockerfile(text: string): Instruction[] {
  const instructions: Instruction[] = [];
  const lines = text.split('\n');
  let stage = -1;
  let ignored: string[] = [];
  const globalArgs = new Map<string, string>();
  for (let index = 0; index < lines.length; index += 1) {
    const first = lines[index]!.trim();
    const directive = /^#\s*hadolint ignore=(\S+)/.exec(first);
    if (directive) ignored = directive[1]!.split(',');
    if (first === '' || first.startsWith('#')) continue;
    let text = first;
    const line = index + 1;
    while (text.endsWith('\\') && index + 1 < lines.length) {
      index += 1;
      const next = lines[index]!.trim();
      if (next.startsWith('#')) continue;
      text = `${text.slice(0, -1).trimEnd()} ${next}`;
    }
    const [keyword = '', ...rest] = text.split(/\s+/);
    let args = rest.join(' ');
    if (keyword.toUpperCase() === 'FROM') {
      stage += 1;
      // A FROM may name a global ARG (`ARG BASE_IMAGE=…` before the first FROM): the rules
      // check its default, which is what a plain `docker build` uses.
      args = args.replace(
        /\$\{?(\w+)\}?/g,
        (_, name: string) => globalArgs.get(name) ?? `\${${name}}`,
      );
    } else if (keyword.toUpperCase() === 'ARG' && stage === -1) {
      const [name = '', value] = args.split('=');
      if (value !== undefined) globalArgs.set(name, value);
    }
    instructions.push({
      keyword: keyword.toUpperCase(),
      args,
      line,
      stage,
      ignored,
    });
    ignored = [];
  }
  return instructions;
}

type Rule = (instructions: Instruction[]) => string[];

const stageAliases = (instructions: Instruction[]) =>
  instructions
    .filter((i) => i.keyword === 'FROM')
    .map((i) => /\bAS\s+(\S+)/i.exec(i.args)?.[1])
    .filter((alias): alias is string => alias !== undefined);

/** The rules, by name. Each returns one message per problem, naming the line. */
const RULES: Record<string, Rule> = {
  'base images are pinned to an exact version': (instructions) => {
    const aliases = stageAliases(instructions);
    return instructions
      .filter((i) => i.keyword === 'FROM')
      .map((i) => ({ i, image: i.args.replace(/^--platform=\S+\s+/, '').split(/\s+/)[0]! }))
      .filter(({ image }) => !aliases.includes(image))
      .filter(({ image }) => !/(:[^:/@]*\d+\.\d+\.\d+[^:/@]*|@sha256:[a-f0-9]{64})$/.test(image))
      .map(({ i, image }) => `line ${i.line}: FROM ${image} is not pinned to an exact version`);
  },
  'no ADD (COPY for local files; no downloads)': (instructions) =>
    instructions
      .filter((i) => i.keyword === 'ADD')
      .map((i) => `line ${i.line}: ADD ${i.args}: use COPY; fetch nothing but packages`),
  'no curl or wget: only package registries are reached': (instructions) =>
    instructions
      .filter((i) => i.keyword === 'RUN' && /\b(curl|wget)\b/.test(i.args))
      .map((i) => `line ${i.line}: RUN downloads with curl/wget`),
  'the final stage runs as a non-root user': (instructions) => {
    const last = Math.max(...instructions.map((i) => i.stage));
    const user = instructions.filter((i) => i.stage === last && i.keyword === 'USER').at(-1);
    if (!user) return ['the final stage sets no USER (it would run as root)'];
    const name = user.args.split(':')[0]!;
    return name === 'root' || name === '0' ? [`line ${user.line}: USER ${user.args} is root`] : [];
  },
  'apt-get: --no-install-recommends, -y, update in the same RUN, lists removed': (instructions) =>
    instructions
      .filter((i) => i.keyword === 'RUN' && /apt-get\s+(-\S+\s+)*install/.test(i.args))
      .flatMap((i) => {
        const problems: string[] = [];
        const install = i.args.slice(i.args.search(/apt-get\s+(-\S+\s+)*install/));
        if (!install.includes('--no-install-recommends'))
          problems.push(`line ${i.line}: apt-get install without --no-install-recommends`);
        if (!/\s(-y|--yes|--assume-yes)\b/.test(install))
          problems.push(`line ${i.line}: apt-get install without -y`);
        if (!/apt-get\s+update/.test(i.args))
          problems.push(`line ${i.line}: apt-get install without apt-get update in the same RUN`);
        if (!i.args.includes('rm -rf /var/lib/apt/lists/*'))
          problems.push(`line ${i.line}: apt lists are not removed (rm -rf /var/lib/apt/lists/*)`);
        if (!i.ignored.includes('DL3008') && /install[^&;]*\s[a-z0-9.+-]+(\s|$)/.test(install)) {
          // Unpinned Debian packages must be a decision, written down as an ignore.
          const unpinned = install
            .split(/&&|;/)[0]!
            .split(/\s+/)
            .slice(2)
            .filter((word) => word !== '' && !word.startsWith('-') && !word.includes('='));
          if (unpinned.length > 0)
            problems.push(`line ${i.line}: unpinned apt packages: ${unpinned.join(' ')}`);
        }
        return problems;
      }),
  'npm ci for projects; npm install only globally, with exact versions': (instructions) =>
    instructions
      .filter((i) => i.keyword === 'RUN' && /\bnpm\s+(install|i|add)\b/.test(i.args))
      .flatMap((i) => {
        const command = i.args.slice(i.args.search(/\bnpm\s+(install|i|add)\b/)).split('&&')[0]!;
        const words = command.trim().split(/\s+/).slice(2);
        if (!words.some((word) => word === '-g' || word === '--global'))
          return [`line ${i.line}: npm install of a project: use npm ci with the lockfile`];
        const packages = words.filter((word) => !word.startsWith('-'));
        return packages
          .filter((name) => !/^(@[^/]+\/)?[^@]+@\d+\.\d+\.\d+$/.test(name))
          .map((name) => `line ${i.line}: npm package ${name} is not pinned to an exact version`);
      }),
  'COPY in the final stage sets its owner (--chown)': (instructions) => {
    const last = Math.max(...instructions.map((i) => i.stage));
    return instructions
      .filter((i) => i.stage === last && i.keyword === 'COPY' && !i.args.includes('--chown='))
      .map((i) => `line ${i.line}: COPY ${i.args} without --chown`);
  },
  'ENTRYPOINT and CMD in exec form': (instructions) =>
    instructions
      .filter((i) => (i.keyword === 'ENTRYPOINT' || i.keyword === 'CMD') && !i.args.startsWith('['))
      .map((i) => `line ${i.line}: ${i.keyword} in shell form`),
  'no sudo': (instructions) =>
    instructions
      .filter((i) => i.keyword === 'RUN' && /\bsudo\b/.test(i.args))
      .map((i) => `line ${i.line}: sudo in RUN`),
};

function lint(text: string): string[] {
  const instructions = parseDockerfile(text);
  return Object.values(RULES).flatMap((rule) => rule(instructions));
}

const GOOD_TAIL = 'USER 65532\nENTRYPOINT ["node"]\n';

describe('Dockerfile rules', () => {
  it.each([
    ['FROM node:latest\n' + GOOD_TAIL, 'FROM node:latest is not pinned'],
    ['FROM node\n' + GOOD_TAIL, 'FROM node is not pinned'],
    ['FROM node:24-slim\n' + GOOD_TAIL, 'FROM node:24-slim is not pinned'],
    ['FROM node:24.1.0\nADD https://x.example/a.tgz /a\n' + GOOD_TAIL, 'use COPY'],
    ['FROM node:24.1.0\nRUN curl -fsSL https://x.example | sh\n' + GOOD_TAIL, 'curl/wget'],
    ['FROM node:24.1.0\nENTRYPOINT ["node"]\n', 'sets no USER'],
    ['FROM node:24.1.0\nUSER root\n', 'is root'],
    ['FROM node:24.1.0 AS b\nFROM node:24.1.0\nUSER 0:0\n', 'is root'],
    [
      'FROM node:24.1.0\n# hadolint ignore=DL3008\nRUN apt-get update && apt-get install -y git && rm -rf /var/lib/apt/lists/*\n' +
        GOOD_TAIL,
      'without --no-install-recommends',
    ],
    [
      'FROM node:24.1.0\n# hadolint ignore=DL3008\nRUN apt-get update && apt-get install -y --no-install-recommends git\n' +
        GOOD_TAIL,
      'apt lists are not removed',
    ],
    [
      'FROM node:24.1.0\n# hadolint ignore=DL3008\nRUN apt-get install -y --no-install-recommends git && rm -rf /var/lib/apt/lists/*\n' +
        GOOD_TAIL,
      'without apt-get update in the same RUN',
    ],
    [
      'FROM node:24.1.0\nRUN apt-get update && apt-get install -y --no-install-recommends git && rm -rf /var/lib/apt/lists/*\n' +
        GOOD_TAIL,
      'unpinned apt packages: git',
    ],
    ['FROM node:24.1.0\nRUN npm install\n' + GOOD_TAIL, 'use npm ci'],
    ['FROM node:24.1.0\nRUN npm install -g codex-acp\n' + GOOD_TAIL, 'codex-acp is not pinned'],
    ['FROM node:24.1.0\nRUN npm i -g @a/b@^1.2.3\n' + GOOD_TAIL, '@a/b@^1.2.3 is not pinned'],
    ['FROM node:24.1.0\nCOPY a /a\n' + GOOD_TAIL, 'without --chown'],
    ['FROM node:24.1.0\nUSER 1000\nCMD node x.js\n', 'CMD in shell form'],
    ['FROM node:24.1.0\nRUN sudo ls\n' + GOOD_TAIL, 'sudo in RUN'],
    ['ARG BASE=node:24\nFROM ${BASE}\n' + GOOD_TAIL, 'FROM node:24 is not pinned'],
    ['ARG BASE\nFROM $BASE\n' + GOOD_TAIL, 'FROM ${BASE} is not pinned'],
  ])('flag a bad Dockerfile (%#): %s', (text, problem) => {
    expect(lint(text).join('\n')).toContain(problem);
  });

  it('accept what they allow: a pinned ARG default, stage aliases, digests, pinned globals, COPY --chown', () => {
    const text = [
      'ARG BASE_IMAGE=node:24.1.0-bookworm-slim',
      'FROM ${BASE_IMAGE} AS build',
      'RUN npm ci',
      'FROM build AS test',
      'FROM debian@sha256:' + 'a'.repeat(64),
      'RUN npm install --global @zed-industries/codex-acp@0.16.0 \\',
      '    claude@1.2.3',
      'COPY --from=build --chown=0:0 /out /app',
      'USER 65532:65532',
      'ENTRYPOINT ["node", "/app/x.js"]',
    ].join('\n');
    expect(lint(text)).toEqual([]);
  });

  it.each(['Dockerfile', 'examples/agent-image/Dockerfile'])('%s passes every rule', (path) => {
    expect(lint(read(path))).toEqual([]);
  });
});

describe('the operator image', () => {
  const instructions = parseDockerfile(read('Dockerfile'));
  const final = instructions.filter(
    (i) => i.stage === Math.max(...instructions.map((x) => x.stage)),
  );

  it('runs the bundled CLI from /lorenz/lorenz.js as uid 65532, the controller by default', () => {
    // A fixed 8 MiB young generation: the controller's CPU and RSS targets (docs/benchmarks.md);
    // --optimize-for-size is turned on at run time (src/controller/runtime/heap-flags.ts).
    expect(final.find((i) => i.keyword === 'ENTRYPOINT')?.args).toBe(
      '["node", "--max-semi-space-size=8", "--min-semi-space-size=8", "/lorenz/lorenz.js"]',
    );
    expect(final.find((i) => i.keyword === 'CMD')?.args).toBe('["controller"]');
    expect(final.filter((i) => i.keyword === 'USER').at(-1)?.args).toBe('65532:65532');
  });

  it('builds with npm ci and npm run build, and carries no node_modules into the final stage', () => {
    const runs = instructions.filter((i) => i.keyword === 'RUN').map((i) => i.args);
    expect(runs.some((run) => run.startsWith('npm ci'))).toBe(true);
    expect(runs.some((run) => run.startsWith('npm run build'))).toBe(true);
    expect(final.filter((i) => i.keyword === 'COPY').map((i) => i.args)).toEqual([
      '--from=build --chown=0:0 /out/lorenz/ /lorenz/',
    ]);
    expect(final.some((i) => /node_modules|npm/.test(i.args))).toBe(false);
  });

  it('uses the Node version the project runs on, in every stage of both images', () => {
    const version = execFileSync(node24, ['--version'], {
      encoding: 'utf8',
    })
      .trim()
      .replace(/^v/, '');
    for (const path of ['Dockerfile', 'examples/agent-image/Dockerfile']) {
      const bases = parseDockerfile(read(path))
        .filter((i) => i.keyword === 'FROM')
        .map((i) => i.args.split(/\s+/)[0]);
      expect(bases.length).toBeGreaterThan(0);
      for (const base of bases) expect(base).toBe(`node:${version}-bookworm-slim`);
    }
  });

  it('pins the ACP bridges of the agent image to the versions the project tests with', () => {
    const agent = read('examples/agent-image/Dockerfile');
    for (const name of ['@zed-industries/codex-acp', '@agentclientprotocol/claude-agent-acp']) {
      const { version } = JSON.parse(read(`node_modules/${name}/package.json`)) as {
        version: string;
      };
      expect(agent).toContain(`${name}@${version}`);
    }
  });
});

/** .dockerignore semantics for the patterns we use: last match wins, `!` re-includes. */
function inBuildContext(path: string, dockerignore: string): boolean {
  const glob = (part: string) =>
    part
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '[^/]*')
      .replace(/\?/g, '[^/]');
  const toRegExp = (pattern: string) =>
    new RegExp(`^${pattern.split('**').map(glob).join('.*')}(/.*)?$`);
  let included = true;
  for (const raw of dockerignore.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const negated = line.startsWith('!');
    if (toRegExp(negated ? line.slice(1) : line).test(path)) included = negated;
  }
  return included;
}

describe('the build context', () => {
  const dockerignore = read('.dockerignore');
  const copies = parseDockerfile(read('Dockerfile'))
    .filter((i) => i.keyword === 'COPY' && !i.args.includes('--from='))
    .flatMap((i) => i.args.split(/\s+/).slice(0, -1));

  it('holds every file the Dockerfile copies, and they exist', () => {
    expect(copies.length).toBeGreaterThan(3);
    for (const source of copies) {
      const path = source.replace(/\/$/, '');
      expect(existsSync(join(repoRoot, path)), `${path} exists`).toBe(true);
      const probe = statSync(join(repoRoot, path)).isDirectory() ? `${path}/any.ts` : path;
      expect(inBuildContext(probe, dockerignore), `${probe} is in the build context`).toBe(true);
    }
  });

  it('leaves out node_modules, dist, .git and local state', () => {
    for (const path of [
      'node_modules/zod/package.json',
      'dist/lorenz.js',
      '.git/HEAD',
      'README.md',
      'test/unit/x.test.ts',
    ]) {
      expect(inBuildContext(path, dockerignore), path).toBe(false);
    }
  });
});

describe('the runner bundle', () => {
  const scratch = scratchDir('lorenz-bundle-');

  // Built like hack/bundle.mjs builds dist/lorenz.js, but into a folder with no
  // node_modules above it: what the image's final stage is.
  it.each([
    ['src/cli.ts', 'lorenz.js', ['controller', '--no-such-flag'], 2],
    ['test/fixtures/scripted-agent/main.ts', 'scripted-agent.mjs', [], 0],
  ])(
    '%s runs as one file without node_modules (imports only built-ins and absent optional packages)',
    async (entry, outName, args, exitCode) => {
      const outfile = join(scratch, outName);
      const result = await build({
        entryPoints: [join(repoRoot, entry)],
        outfile,
        ...BUNDLE,
        metafile: true,
        ...sshBundleOptions,
      });
      // A package esbuild left external must not be installed either: it is an optional
      // dependency probed in a try/catch (ws's bufferutil, debug's supports-color), absent
      // here as in the image, so the bundle behaves the same in both places.
      const external = Object.values(result.metafile.outputs)
        .flatMap((output) => output.imports)
        .filter((imported) => imported.external && !isBuiltin(imported.path))
        .map((imported) => imported.path)
        .filter((name) => existsSync(join(repoRoot, 'node_modules', name, 'package.json')));
      expect(external).toEqual([]);
      const run = spawnSync(node24, [outfile, ...args], {
        cwd: scratch,
        input: '',
        encoding: 'utf8',
        timeout: 20_000,
      });
      expect(run.stderr).not.toMatch(/Cannot find (module|package)/);
      expect(run.status).toBe(exitCode);
    },
  );

  // The archive's PostgreSQL client, bundled the same way: pg's optional pg-native is
  // resolved at build time to a module that throws, never looked up beside the bundle, and
  // the store works from the one file (a closed port: the archive is unavailable, said so).
  it('the PostgreSQL archive store runs bundled, pg-native never required at run time', async () => {
    const outfile = join(scratch, 'archive-probe.mjs');
    await build({
      stdin: {
        contents: [
          "import { openPostgresArchive } from './src/archive/postgres.ts';",
          // Opening migrates the schema, so the open itself meets the closed port.
          "try { const store = await openPostgresArchive('postgres://lorenz:s3cret@127.0.0.1:1/lorenz');",
          'await store.close(); } catch (error) { console.log(error.code, error.message); }',
        ].join('\n'),
        resolveDir: repoRoot,
        loader: 'ts',
      },
      outfile,
      ...BUNDLE,
      ...sshBundleOptions,
    });
    expect(readFileSync(outfile, 'utf8')).not.toMatch(/require\("pg-native"\)/);
    const run = spawnSync(node24, [outfile], { cwd: scratch, encoding: 'utf8', timeout: 20_000 });
    expect(run.stderr).toBe('');
    expect(run.stdout).toMatch(
      /^archive_unavailable archive postgres:\/\/lorenz:\*\*\*@127\.0\.0\.1:1\/lorenz: .*ECONNREFUSED/,
    );
    expect(run.status).toBe(0);
  });
});
