// `npm run bench:limits`: what large inputs cost. A benchmark, not a test: it prints figures
// beside their targets.
//  1. Parse time of large Liquid bodies: liquidjs itself at 0.5–10 MB (is it linear?), and
//     both engines at 2 MB and 10 MB (refused at the parse limit, quickly and clearly).
//  2. Peak RSS of `lorenz run --no-agent` whose hook prints 50 MB, against one whose hook
//     prints nothing: the output is streamed, so the difference should be a few MiB.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { clearInterval, setInterval } from 'node:timers';
import { Liquid } from 'liquidjs';

const repo = new URL('..', import.meta.url).pathname;
const MB = 1024 * 1024;
const { TEMPLATE_LIMITS } = await import(join(repo, 'dist/tsc/template/limits.js'));
const { parsePromptTemplate } = await import(join(repo, 'dist/tsc/template/prompt.js'));
const { renderHookCommand } = await import(join(repo, 'dist/tsc/template/hook.js'));
const { normalizeIssue } = await import(join(repo, 'dist/tsc/workflow/issue.js'));

/** A body of `bytes` characters that mixes text, outputs and tags, as prompts do. */
function body(bytes) {
  const unit =
    'Work on {{ issue.identifier }}: {% if issue.title %}{{ issue.title }}{% endif %}.\n';
  return unit.repeat(Math.max(1, Math.round(bytes / unit.length)));
}

function time(fn) {
  const start = performance.now();
  let outcome = 'parsed';
  try {
    fn();
  } catch (error) {
    outcome = `refused: ${String(error.message).split('\n')[0].slice(0, 90)}`;
  }
  return { ms: performance.now() - start, outcome };
}

console.log('1. Liquid parse time (liquidjs alone, no parse limit; then both engines)');
const bare = new Liquid({ strictVariables: true, strictFilters: true });
const rawRows = [];
for (const size of [0.5, 1, 2, 4, 10]) {
  const text = body(size * MB);
  bare.parse(body(10_000)); // warm-up
  const { ms } = time(() => bare.parse(text));
  rawRows.push({ size, ms });
}
const perMb = (row) => row.ms / row.size;
for (const row of rawRows) {
  const ratio = perMb(row) / perMb(rawRows[0]);
  console.log(
    `  liquidjs parse ${String(row.size).padStart(4)} MB  ${row.ms.toFixed(0).padStart(6)} ms` +
      `  ${perMb(row).toFixed(0).padStart(4)} ms/MB  ×${ratio.toFixed(2)} per MB vs 0.5 MB (linear: ×1.00; quadratic at 10 MB: ×20)`,
  );
}
const issue = normalizeIssue({ identifier: 'ENG-1', title: 'bench' });
for (const size of [2, 10]) {
  const text = body(size * MB);
  const prompt = time(() => parsePromptTemplate(text));
  const hook = time(() => renderHookCommand(`echo ${text}`, issue));
  console.log(
    `  prompt engine ${size} MB: ${prompt.ms.toFixed(1)} ms, ${prompt.outcome}\n` +
      `  hook engine   ${size} MB: ${hook.ms.toFixed(1)} ms, ${hook.outcome}`,
  );
}
console.log(
  `  (parse limit: ${TEMPLATE_LIMITS.parseLimit} characters; target: refused in ≤ 50 ms)`,
);

console.log('\n2. Peak RSS of lorenz run --no-agent (VmHWM), hook printing 50 MB vs nothing');
const root = mkdtempSync(join(tmpdir(), 'lorenz-bench-limits-'));
const node = join(repo, 'node_modules/.bin/node');
const cli = join(repo, 'dist/cli/lorenz.js');
// The flags the bin's shebang gives node (`#!/usr/bin/env -S node …`), as a user runs it.
const shebangFlags = readFileSync(cli, 'utf8').split('\n')[0].split(/\s+/).slice(3);
const issueFile = join(root, 'issue.yaml');
writeFileSync(issueFile, 'identifier: ENG-1\ntitle: bench\nstate: Todo\n');

function workflowWith(hook) {
  const path = join(root, `WORKFLOW-${Math.random().toString(36).slice(2)}.md`);
  writeFileSync(
    path,
    `---\nworkspace:\n  root: ${join(root, 'ws')}\nhooks:\n  after_create: ${JSON.stringify(hook)}\n---\n`,
  );
  return path;
}

/** Run lorenz and sample its high-water RSS until it exits; resolves to KiB. */
function peakRss(workflow) {
  return new Promise((resolve, reject) => {
    const child = spawn(
      node,
      [...shebangFlags, cli, 'run', '--workflow', workflow, '--issue', issueFile, '--no-agent'],
      {
        stdio: ['ignore', 'ignore', 'inherit'],
      },
    );
    let peak = 0;
    const sample = () => {
      try {
        const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
        const match = /VmHWM:\s+(\d+) kB/.exec(status);
        if (match) peak = Math.max(peak, Number(match[1]));
      } catch {
        // exited
      }
    };
    const timer = setInterval(sample, 5);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearInterval(timer);
      if (code !== 0) reject(new Error(`lorenz run exited ${code}`));
      else resolve(peak);
    });
  });
}

const quiet = workflowWith('true');
const loud = workflowWith("head -c 52428800 /dev/zero | tr '\\0' x");
const rounds = Number(process.env.BENCH_RUNS ?? 3);
const quietPeaks = [];
const loudPeaks = [];
for (let round = 0; round < rounds; round += 1) {
  quietPeaks.push(await peakRss(quiet));
  loudPeaks.push(await peakRss(loud));
}
rmSync(root, { recursive: true, force: true });
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const mib = (kib) => `${(kib / 1024).toFixed(1)} MiB`;
const [q, l] = [median(quietPeaks), median(loudPeaks)];
console.log(`  hook prints nothing   peak RSS ${mib(q).padStart(10)}   (median of ${rounds})`);
console.log(`  hook prints 50 MB     peak RSS ${mib(l).padStart(10)}   ${(l / q).toFixed(3)}×`);
console.log(
  `  difference            ${mib(l - q).padStart(19)}   (target: a few MiB; a bare Node reader of the same pipe: about +9 MiB; before streaming: 1.1–1.9 GiB)`,
);
