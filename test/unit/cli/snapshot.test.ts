import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { renderRunInputs } from '../../../src/controller/issuerun/inputs.js';
import { loadWorkflowText } from '../../../src/template/load-workflow.js';
import { normalizeIssue } from '../../../src/workflow/issue.js';
import type { StartupTrace } from '../../../src/workflow/startup-marks.js';
import { RUNNER_NODE_FLAGS } from '../../../src/api/run-pod.js';

// The launcher (hack/launcher.sh, built beside each bundle) starts from the V8 startup
// snapshot only when its key names this node; anything else (another node, as in a run Pod
// whose agent image brings its own, a missing blob) runs the plain bundle, same behaviour.
const repo = new URL('../../..', import.meta.url).pathname;
const dist = join(repo, 'dist');
const dir = mkdtempSync(join(tmpdir(), 'lorenz-snapshot-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const workflowText = `---\nworkspace:\n  root: ${join(dir, 'ws')}\nhooks:\n  after_create: 'echo made {{ issue.identifier }}'\n---\nHi\n`;
const workflowPath = join(dir, 'WORKFLOW.md');
writeFileSync(workflowPath, workflowText);
const issuePath = join(dir, 'issue.yaml');
writeFileSync(issuePath, 'identifier: SNAP-1\ntitle: t\nstate: Todo\n');

/** A copy of dist's runner files, as the init container lays them out in /lorenz-bin. */
function podBin(name: string, files: { blob: boolean; key?: string }): string {
  const bin = join(dir, name);
  mkdirSync(bin);
  for (const file of ['lorenz', 'lorenz.js']) copyFileSync(join(dist, file), join(bin, file));
  if (files.blob)
    copyFileSync(join(dist, 'lorenz.snapshot.blob'), join(bin, 'lorenz.snapshot.blob'));
  writeFileSync(
    join(bin, 'lorenz.snapshot.key'),
    files.key ?? readFileSync(join(dist, 'lorenz.snapshot.key'), 'utf8'),
  );
  return bin;
}

/** Runs `sh <launcher> args`; the exit code, stdout, and the start-up trace it wrote. */
function launch(launcher: string, args: string[], env: Record<string, string> = {}) {
  const trace = join(dir, `trace-${Math.random().toString(36).slice(2)}.jsonl`);
  const result = spawnSync('sh', [launcher, ...args], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, LORENZ_NODE: process.execPath, LORENZ_STARTUP_TRACE: trace, ...env },
  });
  let traced: StartupTrace | null = null;
  try {
    traced = JSON.parse(readFileSync(trace, 'utf8').split('\n')[0] ?? '') as StartupTrace;
  } catch {
    // no hook ran
  }
  return { code: result.status, stdout: result.stdout, stderr: result.stderr, trace: traced };
}

const runArgs = ['run', '--workflow', workflowPath, '--issue', issuePath, '--no-agent'];

describe('the launcher', () => {
  it('starts lorenz run from the snapshot, with the plain bundle’s output', () => {
    const snapshot = launch(join(dist, 'cli/lorenz'), runArgs);
    const plain = launch(join(dist, 'cli/lorenz'), runArgs, { LORENZ_SNAPSHOT: '0' });
    expect(snapshot.code).toBe(0);
    expect(snapshot.trace?.snapshot).toBe(true);
    expect(plain.trace?.snapshot).toBe(false);
    const strip = (text: string) => text.replace(/"durationMs":\d+/g, '');
    expect(strip(snapshot.stdout)).toBe(strip(plain.stdout));
    expect(snapshot.stdout).toContain('made SNAP-1');
    // The marks run from the process's start to the first hook's spawn, in order.
    const marks = Object.values(snapshot.trace?.marks ?? {});
    expect(marks.length).toBeGreaterThanOrEqual(4);
    expect([...marks].sort((a, b) => a - b)).toEqual(marks);
  });

  it('runs the plain bundle when the key names another node (the blob would not load)', () => {
    const bin = podBin('other-version', { blob: true, key: 'v0.0.1 x86_64\n' });
    const result = launch(join(bin, 'lorenz'), runArgs);
    expect(result.code).toBe(0);
    expect(result.trace?.snapshot).toBe(false);
    expect(result.stdout).toContain('"succeeded":true');
  });

  it('runs the plain bundle when the node on the way is not the one that built the blob', () => {
    // A node that reports another version, as an agent image's node would.
    const fake = join(dir, 'fake-node');
    writeFileSync(
      fake,
      `#!/bin/sh\n[ "$1" = --version ] && { echo v23.0.0; exit 0; }\nexec ${process.execPath} "$@"\n`,
      { mode: 0o755 },
    );
    const result = launch(join(dist, 'cli/lorenz'), runArgs, { LORENZ_NODE: fake });
    expect(result.code).toBe(0);
    expect(result.trace?.snapshot).toBe(false);
  });

  it('runs the plain bundle when there is no blob, and sends the operator’s commands there', () => {
    const bin = podBin('no-blob', { blob: false });
    expect(launch(join(bin, 'lorenz'), runArgs).trace?.snapshot).toBe(false);
    const poll = launch(join(dist, 'lorenz'), ['poll', '--no-such-flag']);
    expect(poll.code).toBe(2);
    expect(poll.stderr).not.toMatch(/not in the startup snapshot/);
  });

  it('starts node with RUNNER_NODE_FLAGS either way', () => {
    const execs = readFileSync(join(repo, 'hack/launcher.sh'), 'utf8')
      .split('\n')
      .filter((line) => line.trim().startsWith('exec "$node"'));
    expect(execs).toHaveLength(2);
    for (const line of execs) expect(line).toContain(` ${RUNNER_NODE_FLAGS.join(' ')} `);
  });

  it('prints the version from either start', () => {
    expect(launch(join(dist, 'lorenz'), ['--version']).stdout).toBe('lorenz 0.1.0\n');
    const bin = podBin('version', { blob: true, key: 'v0.0.1 x86_64\n' });
    expect(launch(join(bin, 'lorenz'), ['--version']).stdout).toBe('lorenz 0.1.0\n');
  });
});

describe('the runner through the launcher, as a run Pod starts it', () => {
  async function inputs(): Promise<string> {
    const loaded = loadWorkflowText(workflowText, 'test');
    const rendered = await renderRunInputs({
      workflowText,
      config: loaded.config,
      promptTemplate: loaded.promptTemplate,
      issue: normalizeIssue({ identifier: 'SNAP-1', title: 't', state: 'Todo' }),
      run: { run: 'snap-1', identifier: 'SNAP-1', attempt: null, ensembleSize: 1 },
    });
    const inputsDir = mkdtempSync(join(dir, 'inputs-'));
    for (const [name, content] of Object.entries(rendered.files))
      writeFileSync(join(inputsDir, name), content);
    return inputsDir;
  }

  const runner = async (bin: string) => {
    const workspace = mkdtempSync(join(dir, 'pod-ws-'));
    return launch(join(bin, 'lorenz'), [
      'runner',
      '--inputs',
      await inputs(),
      '--workspace',
      workspace,
      '--issue-state-file',
      join(dir, 'no-state'),
      '--termination-log',
      join(workspace, '..', `${workspace.split('/').pop() ?? ''}.termination`),
      '--no-agent',
    ]);
  };

  it('runs from the snapshot when the agent image has the build’s node', async () => {
    const result = await runner(podBin('pod-same-node', { blob: true }));
    expect(result.code).toBe(0);
    expect(result.trace?.snapshot).toBe(true);
    expect(Object.keys(result.trace?.marks ?? {})).toContain('inputs_verified');
    expect(result.stdout).toContain('made SNAP-1');
  });

  it('falls back to the plain bundle when the agent image has another node', async () => {
    const result = await runner(podBin('pod-other-node', { blob: true, key: 'v22.0.0 x86_64\n' }));
    expect(result.code).toBe(0);
    expect(result.trace?.snapshot).toBe(false);
    expect(result.stdout).toContain('made SNAP-1');
    expect(result.stderr).toBe('');
  });
});
