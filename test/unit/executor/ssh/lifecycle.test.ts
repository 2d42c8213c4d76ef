// The whole issue lifecycle on an SSH worker: the engine (runIssueLifecycle) unchanged, with
// the SSH executor against a real loopback sshd; and `lorenz run` with worker.ssh_hosts.
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAcpAgentStep } from '../../../../src/agent/step.js';
import { agentConfig } from '../../../fixtures/scripted-agent/harness.js';
import type { LorenzEvent } from '../../../../src/workflow/events.js';
import { startSshd, type Sshd } from '../../../support/fakes/sshd.js';
import {
  eventually,
  existsOnWorker,
  marker,
  pidsOf,
  runLifecycle,
  sshExecutor,
  workerReadableAgent,
} from './support.js';
import { makeTempDir, removeTempDir } from '../../../support/workspace.js';

let sshd: Sshd;
let local: string;
beforeAll(async () => {
  sshd = await startSshd();
  local = await makeTempDir('lorenz-ssh-life-');
}, 60_000);
afterAll(async () => {
  await sshd?.stop();
  if (local) await removeTempDir(local);
});

describe('the lifecycle on an SSH worker', () => {
  it("creates the workspace under the worker's ~ root, runs all four hooks there, removes it", async () => {
    const executor = await sshExecutor(sshd);
    const name = `ws-${marker()}`;
    const log = `${sshd.home}/${name}.log`;
    const logging = (hook: string) => `echo "${hook} $PWD $(id -un)" >> ${log}`;
    try {
      const { summary, events } = await runLifecycle(executor, {
        workspace: { root: `~/${name}` },
        hooks: {
          after_create: logging('after_create'),
          before_run: logging('before_run'),
          after_run: logging('after_run'),
          before_remove: logging('before_remove'),
        },
      });
      const workspace = `${sshd.home}/${name}/ENG_9`;
      expect(summary).toEqual({
        identifier: 'ENG/9',
        succeeded: true,
        slots: [{ slot: 0, workspace, succeeded: true, turns: 0 }],
      });
      expect((await sshd.asWorker(`cat ${log}`)).trim().split('\n')).toEqual(
        ['after_create', 'before_run', 'after_run', 'before_remove'].map(
          (hook) => `${hook} ${workspace} ${sshd.user}`,
        ),
      );
      expect(await existsOnWorker(sshd, workspace)).toBe(false);
      expect(events.filter((event) => event.type === 'workspace_removed')).toHaveLength(1);
    } finally {
      await sshd.asWorker(`rm -rf ~/${name} ${log}`);
      await executor.shutdown();
    }
  });

  it('refuses a symlinked root, a symlinked parent and a symlink swapped in between hooks', async () => {
    const executor = await sshExecutor(sshd);
    const base = `${sshd.home}/mal-${marker()}`;
    try {
      await sshd.asWorker(
        `mkdir -p ${base}/real ${base}/outside ${base}/root2 ${base}/root3 && ` +
          `ln -s ${base}/real ${base}/linked && ln -s ${base}/outside ${base}/root2/ENG_9`,
      );
      const linkedRoot = await runLifecycle(executor, { workspace: { root: `${base}/linked` } });
      expect(linkedRoot.summary.slots[0]).toMatchObject({
        succeeded: false,
        errorCode: 'workspace_unsafe_symlink',
        error: `unsafe symlink in workspace path: ${base}/linked`,
      });

      const linkedParent = await runLifecycle(executor, {
        workspace: { root: `${base}/root2` },
        agent: { ensemble_size: 2 },
      });
      for (const slot of linkedParent.summary.slots) {
        expect(slot).toMatchObject({ succeeded: false, errorCode: 'workspace_unsafe_symlink' });
        expect(slot.error).toContain('unsafe symlink in workspace path');
      }
      expect(await sshd.asWorker(`ls -A ${base}/outside`)).toBe('');

      // after_create swaps its own workspace for a symlink leading out of the root.
      const swapped = await runLifecycle(executor, {
        workspace: { root: `${base}/root3` },
        hooks: {
          after_create: `cd .. && mv ENG_9 moved && ln -s ${base}/outside ENG_9`,
          before_run: 'touch ran-before-run',
          after_run: 'touch ran-after-run',
        },
      });
      expect(swapped.summary.slots[0]).toMatchObject({
        succeeded: false,
        errorCode: 'workspace_unsafe_symlink',
        error: `unsafe symlink in workspace path: ${base}/root3/ENG_9`,
      });
      expect(await sshd.asWorker(`ls -A ${base}/outside`)).toBe('');
    } finally {
      await sshd.asWorker(`rm -rf ${base}`);
      await executor.shutdown();
    }
  });

  it('syncs skills of 1000 files and a 50 MB file byte for byte', async () => {
    const executor = await sshExecutor(sshd, { timeoutMs: 60_000 });
    const name = `skills-${marker()}`;
    const skill = join(local, 'many');
    const big = join(local, 'big');
    await mkdir(join(skill, 'nested', 'deeper'), { recursive: true });
    for (let index = 0; index < 1000; index += 1) {
      const folder = index % 3 === 0 ? join(skill, 'nested', 'deeper') : skill;
      await writeFile(join(folder, `file-${index}.md`), `skill file ${index}\n`.repeat(index % 7));
    }
    await mkdir(big, { recursive: true });
    const chunk = Buffer.alloc(1024 * 1024);
    const parts: Buffer[] = [];
    for (let index = 0; index < 50; index += 1) {
      chunk.fill(index);
      chunk.write(`chunk ${index}`);
      parts.push(Buffer.from(chunk));
    }
    await writeFile(join(big, 'model.bin'), Buffer.concat(parts));
    try {
      const { summary, events } = await runLifecycle(
        executor,
        { workspace: { root: `~/${name}` }, agent: { skills: [skill, big] } },
        { cleanup: false },
      );
      expect(summary.succeeded).toBe(true);
      expect(events.find((event) => event.type === 'skills_synced')?.message).toMatchObject({
        skills: ['many', 'big'],
      });
      const target = `${sshd.home}/${name}/ENG_9/.lorenz/skills`;
      for (const [source, skillName] of [
        [skill, 'many'],
        [big, 'big'],
      ] as const) {
        const remote = await sshd.asWorker(
          `cd ${target}/${skillName} && find . -type f -printf '%P\\n' | LC_ALL=C sort | ` +
            `while read -r f; do printf '%s %s\\n' "$f" "$(sha256sum < "$f" | cut -d' ' -f1)"; done`,
        );
        expect(remote).toBe(await localHashes(source));
      }
      expect(await sshd.asWorker(`cat ${target}/.gitignore`)).toBe('*\n');
    } finally {
      await sshd.asWorker(`rm -rf ~/${name}`);
      await executor.shutdown();
    }
  }, 120_000);

  it('a connection cut mid-hook fails the slot ssh_connect; after_run and cleanup still run, nothing is left', async () => {
    const executor = await sshExecutor(sshd);
    const name = `cut-${marker()}`;
    const mark = marker();
    try {
      const running = runLifecycle(executor, {
        workspace: { root: `~/${name}` },
        hooks: {
          before_run: `trap '' TERM HUP PIPE; sleep ${mark}`,
          after_run: `echo after_run >> ~/${name}.log`,
          timeout_ms: 60_000,
        },
      });
      expect(await eventually(async () => (await sshd.processes(`sleep ${mark}`)).length > 0)).toBe(
        true,
      );
      await sshd.cutSessions();
      const { summary, events } = await running;
      expect(summary.slots[0]).toMatchObject({ succeeded: false, errorCode: 'ssh_connect' });
      expect(summary.slots[0]?.error).toMatch(/connection to .* lost/);
      const failed = events.find(
        (event) => event.type === 'hook_execution' && event.message.status === 'failed',
      );
      expect(failed?.type === 'hook_execution' && failed.message.hookName).toBe('before_run');
      expect(await sshd.asWorker(`cat ~/${name}.log`)).toBe('after_run\n');
      expect(await sshd.processes(`sleep ${mark}`)).toEqual([]);
      expect(await existsOnWorker(sshd, `${sshd.home}/${name}/ENG_9`)).toBe(false);
    } finally {
      await sshd.asWorker(`rm -rf ~/${name} ~/${name}.log`);
      await executor.shutdown();
    }
  });

  it("runs the agent's ACP bridge on the worker over the channel's stdio", async () => {
    const executor = await sshExecutor(sshd);
    const name = `agent-${marker()}`;
    const repo = new URL('../../../..', import.meta.url).pathname;
    // dist/ is bundled by the unit tier's global setup; the worker user runs a copy it can read.
    const bridge = await workerReadableAgent(repo);
    const agent = createAcpAgentStep({
      config: agentConfig(bridge, { env: { AGENT_FLAG: 'from-workflow' } }),
      renderPrompt: () =>
        'Fix it.\n@write notes.txt "hello"\n@shell echo "$(id -un) $AGENT_FLAG" > who.txt',
      isIssueActive: async () => true,
      env: process.env,
      executor,
      controllerOnlyEnv: [],
      cancelGraceMs: 300,
      killGraceMs: 1000,
    });
    try {
      const { summary } = await runLifecycle(
        executor,
        { workspace: { root: `~/${name}` } },
        { cleanup: false, agent },
      );
      expect(summary.slots[0]).toMatchObject({ succeeded: true, turns: 1 });
      const workspace = `${sshd.home}/${name}/ENG_9`;
      expect(await sshd.asWorker(`cat ${workspace}/notes.txt`)).toBe('hello');
      expect(await sshd.asWorker(`cat ${workspace}/who.txt`)).toBe(`${sshd.user} from-workflow\n`);
      expect(await sshd.processes('scripted-agent')).toEqual([]);
    } finally {
      await sshd.asWorker(`rm -rf ~/${name}`);
      await executor.shutdown();
    }
  });

  it('clones a workspace.git repository on the worker and runs git there', async () => {
    const executor = await sshExecutor(sshd);
    const name = `git-${marker()}`;
    const repo = `${sshd.home}/${name}.git`;
    try {
      await sshd.asWorker(
        `set -e; git init -q --bare -b main ${repo}; tmp=$(mktemp -d); cd "$tmp"; ` +
          `git init -q -b main; echo hello > README.md; git add README.md; ` +
          `git -c user.name=t -c user.email=t@e commit -qm first; git push -q ${repo} main; rm -rf "$tmp"`,
      );
      const { summary, events } = await runLifecycle(executor, {
        workspace: { root: `~/${name}-ws`, git: { repo: `file://${repo}` } },
        hooks: { before_run: 'git branch --show-current > ../branch.txt; cat README.md' },
      });
      expect(summary.slots[0]).toMatchObject({ succeeded: true });
      expect((await sshd.asWorker(`cat ~/${name}-ws/branch.txt`)).trim()).toBe('lorenz/eng/9-nine');
      const hook = events.find(
        (event) => event.type === 'hook_execution' && event.message.status === 'completed',
      );
      expect(hook?.type === 'hook_execution' ? hook.message.output : '').toBe('hello');
    } finally {
      await sshd.asWorker(`rm -rf ${repo} ~/${name}-ws`);
      await executor.shutdown();
    }
  });
});

async function localHashes(root: string): Promise<string> {
  const files = (await readdir(root, { recursive: true, withFileTypes: true }))
    .filter((entry) => entry.isFile())
    .map((entry) => relative(root, join(entry.parentPath, entry.name)))
    .sort((a, b) => (Buffer.from(a) < Buffer.from(b) ? -1 : 1));
  const lines: string[] = [];
  for (const file of files) {
    const hash = createHash('sha256')
      .update(await readFile(join(root, file)))
      .digest('hex');
    lines.push(`${file} ${hash}\n`);
  }
  return lines.join('');
}

describe('lorenz run with worker.ssh_hosts', () => {
  const cli = join(new URL('../../../..', import.meta.url).pathname, 'dist/cli/lorenz.js');

  async function files(name: string, hosts: string[], hooks: string) {
    const dir = join(local, name);
    await mkdir(dir, { recursive: true });
    const knownHosts = join(dir, 'known_hosts');
    await writeFile(knownHosts, sshd.knownHosts);
    const workflow = join(dir, 'WORKFLOW.md');
    await writeFile(
      workflow,
      `---\nworkspace:\n  root: ~/${name}\nworker:\n  ssh_hosts: ${JSON.stringify(hosts)}\n` +
        `  ssh_timeout_ms: 10000\nhooks:\n${hooks}---\nDo it.\n`,
    );
    const issue = join(dir, 'issue.yaml');
    await writeFile(issue, 'identifier: ENG-7\ntitle: Seven\nstate: Todo\n');
    return { dir, knownHosts, workflow, issue };
  }

  const lorenz = (args: string[], cwd: string) => {
    const result = spawnSync(process.execPath, [cli, ...args], {
      cwd,
      encoding: 'utf8',
      env: { ...process.env, LORENZ_WORKSPACE_ROOT: '' },
    });
    return { code: result.status, stdout: result.stdout, stderr: result.stderr };
  };
  /** `lorenz run --no-agent` of the files, with this SSH key. */
  const runFiles = (paths: Awaited<ReturnType<typeof files>>, keyFile = sshd.keyFile) =>
    lorenz(
      [
        'run',
        '--workflow',
        paths.workflow,
        '--issue',
        paths.issue,
        '--no-agent',
        '--ssh-key',
        keyFile,
        '--known-hosts',
        paths.knownHosts,
      ],
      paths.dir,
    );

  it('runs the lifecycle on the first host that connects', async () => {
    const name = `cli-${marker()}`;
    const down = `${sshd.user}@127.0.0.1:1`;
    const paths = await files(
      name,
      [down, sshd.destination],
      `  before_run: "hostname > ~/${name}.where; echo \\"$PWD\\" >> ~/${name}.where"\n`,
    );
    try {
      const result = runFiles(paths);
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      const lines = result.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as LorenzEvent);
      expect(lines.at(-1)).toMatchObject({ type: 'run_completed', message: { succeeded: true } });
      expect((await sshd.asWorker(`cat ~/${name}.where`)).trim().split('\n')[1]).toBe(
        `${sshd.home}/${name}/ENG-7`,
      );
      expect(await existsOnWorker(sshd, `${sshd.home}/${name}/ENG-7`)).toBe(false);
    } finally {
      await sshd.asWorker(`rm -rf ~/${name} ~/${name}.where`);
    }
  });

  it("ends the daemons its hooks left on the host, and only this run's", async () => {
    const name = `cli-${marker()}`;
    const [detached, doubleForked, neighbours] = [marker(), marker(), marker()];
    // Another run's daemon on the same host and user: it must be left alone.
    const neighbour = await sshExecutor(sshd);
    await neighbour.runCommand(`setsid sleep ${neighbours} >/dev/null 2>&1 &`, {
      cwd: sshd.home,
      timeoutMs: 10_000,
    });
    const paths = await files(
      name,
      [sshd.destination],
      `  after_create: "setsid sleep ${detached} >/dev/null 2>&1 &"\n` +
        `  before_run: "( setsid sh -c 'sleep ${doubleForked} &' >/dev/null 2>&1 & )"\n`,
    );
    try {
      const result = runFiles(paths);
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(await pidsOf(sshd, `sleep ${detached}`)).toEqual([]);
      expect(await pidsOf(sshd, `sleep ${doubleForked}`)).toEqual([]);
      expect(await pidsOf(sshd, `sleep ${neighbours}`)).toHaveLength(1);
    } finally {
      await neighbour.shutdown(300);
      await sshd.asWorker(`rm -rf ~/${name}`);
    }
  });

  it('fails ssh_connect (exit 1) when no host can be reached', async () => {
    const name = `cli-${marker()}`;
    const paths = await files(name, [`${sshd.user}@127.0.0.1:1`], '  before_run: "true"\n');
    const result = runFiles(paths, sshd.wrongKeyFile);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('lorenz: ssh_connect: no SSH worker could be reached');
    expect(result.stderr.split('ssh_connect')).toHaveLength(2);
    expect(result.stderr).toContain('connection refused');
  });
});
