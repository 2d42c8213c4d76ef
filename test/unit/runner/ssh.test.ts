// The runner's side of SSH workers: with worker.ssh_hosts in the inputs, the run Pod drives
// the whole lifecycle on the host the controller chose (--ssh-host) with the mounted key and
// known_hosts, under the worker's workspace.root, not the Pod's volume. Against the loopback
// sshd fixture; the key never shows in what the runner reports.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseRunnerArgs, runRunner } from '../../../src/runner/main.js';
import { parseTerminationSummary } from '../../../src/runner/summary.js';
import type { LorenzEvent } from '../../../src/workflow/events.js';
import { startSshd, type Sshd } from '../../support/fakes/sshd.js';
import { marker, workerReadableAgent } from '../executor/ssh/support.js';
import { writeRunInputs } from './run-inputs.js';

let sshd: Sshd;
let dir: string;
let knownHostsFile: string;
const repo = new URL('../../..', import.meta.url).pathname;
// dist/ is bundled by the unit tier's global setup; the worker user runs a copy it can read
// (a clean clone may sit in a directory only its owner can enter).
let BRIDGE: string;

beforeAll(async () => {
  BRIDGE = await workerReadableAgent(repo);
  sshd = await startSshd();
  dir = await mkdtemp(join(tmpdir(), 'lorenz-runner-ssh-'));
  knownHostsFile = join(dir, 'known_hosts');
  await writeFile(knownHostsFile, sshd.knownHosts);
}, 60_000);
afterAll(async () => {
  await sshd?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('runner flags', () => {
  it('takes --ssh-key, --known-hosts and --ssh-host, and nothing when they are absent', () => {
    expect(
      parseRunnerArgs([
        '--ssh-key',
        '/lorenz/ssh/ssh-privatekey',
        '--known-hosts',
        '/lorenz/ssh/known_hosts',
        '--ssh-host',
        'w@h:2222',
      ]),
    ).toMatchObject({
      ssh: {
        keyFile: '/lorenz/ssh/ssh-privatekey',
        knownHostsFile: '/lorenz/ssh/known_hosts',
        host: 'w@h:2222',
      },
    });
    expect(parseRunnerArgs([])).not.toHaveProperty('ssh');
  });
});

const workflow = (name: string, hosts: string[], hooks: string[]) => `---
tracker:
  kind: memory
agent:
  kind: scripted
  max_turns: 1
agents:
  scripted:
    bridge_command: ${BRIDGE}
worker:
  ssh_hosts: ${JSON.stringify(hosts)}
  ssh_timeout_ms: 5000
workspace:
  root: ~/${name}
hooks:
  timeout_ms: 30000
${hooks.map((hook) => `  ${hook}`).join('\n')}
---
Work on {{ issue.identifier }}.
@shell echo "agent $(id -un)" > agent.txt`;

async function writeInputs(text: string): Promise<string> {
  return writeRunInputs(await mkdtemp(join(dir, 'inputs-')), text, { title: 'Remote' });
}

async function run(text: string, host: string | undefined) {
  const lines: string[] = [];
  const pod = await mkdtemp(join(dir, 'pod-'));
  const termination = join(pod, 'termination');
  const code = await runRunner({
    inputsDir: await writeInputs(text),
    slot: 0,
    // The Pod's volume: never used on a worker.
    workspaceRoot: join(pod, 'workspace'),
    issueStateFile: join(pod, 'state'),
    terminationLogPath: termination,
    keepWorkspace: false,
    noAgent: false,
    ssh: { keyFile: sshd.keyFile, knownHostsFile, host },
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: pod },
    write: (line) => lines.push(line),
  });
  const events = lines.map((line) => JSON.parse(line) as LorenzEvent);
  const summary = parseTerminationSummary(await readFile(termination, 'utf8'));
  return { code, events, summary, text: lines.join('') };
}

describe('runner: SSH workers', () => {
  it('runs the hooks and the agent on the chosen worker under its home, and redacts the key', async () => {
    const name = `runner-${marker()}`;
    const log = `~/${name}.log`;
    const keyLine = (await readFile(sshd.keyFile, 'utf8')).split('\n')[1] ?? '';
    const text = workflow(
      name,
      ['other@192.0.2.1', sshd.destination],
      [
        `after_create: 'echo "after_create $PWD $(id -un)" >> ${log}; echo ${keyLine}'`,
        `after_run: 'cat agent.txt >> ${log}'`,
        `before_remove: 'echo "before_remove $PWD" >> ${log}'`,
      ],
    );
    try {
      const { code, events, summary, text: output } = await run(text, sshd.destination);
      expect(code, output).toBe(0);
      const workspace = `${sshd.home}/${name}/ENG-7`;
      expect(summary).toMatchObject({ succeeded: true, slot: 0 });
      const completed = events.find((event) => event.type === 'run_completed');
      expect(completed?.type === 'run_completed' && completed.message.slots[0]).toMatchObject({
        workspace,
        succeeded: true,
        turns: 1,
      });
      // Everything happened on the worker, as its user, in its home; the Pod's volume unused.
      expect(await sshd.asWorker(`cat ${log}`)).toBe(
        [
          `after_create ${workspace} ${sshd.user}`,
          `agent ${sshd.user}`,
          `before_remove ${workspace}`,
          '',
        ].join('\n'),
      );
      expect((await sshd.asWorker(`test -e ${workspace} && echo yes || echo no`)).trim()).toBe(
        'no',
      );
      const hooks = events.flatMap((event) =>
        event.type === 'hook_execution'
          ? [`${event.message.hookName} ${event.message.status}`]
          : [],
      );
      expect(hooks).toEqual(
        expect.arrayContaining([
          'after_create completed',
          'after_run completed',
          'before_remove completed',
        ]),
      );
      // A hook that printed a line of the key shows the redaction instead.
      expect(keyLine.length).toBeGreaterThan(16);
      expect(output).not.toContain(keyLine);
      expect(output).toContain('[redacted]');
    } finally {
      await sshd.asWorker(`rm -rf ~/${name} ~/${name}.log`);
    }
  });

  it('fails ssh_connect on a closed port: the controller retries on another host', async () => {
    const closed = `${sshd.user}@127.0.0.1:1`;
    const { code, summary } = await run(workflow(`closed-${marker()}`, [closed], []), closed);
    expect(code).toBe(1);
    expect(summary).toMatchObject({ succeeded: false, errorCode: 'ssh_connect' });
    expect(summary?.error).toContain('127.0.0.1');
  });

  it('fails clearly when the controller named no host', async () => {
    const { code, summary } = await run(
      workflow(`nohost-${marker()}`, [sshd.destination], []),
      undefined,
    );
    expect(code).toBe(1);
    expect(summary).toMatchObject({ succeeded: false, errorCode: 'runner_failed' });
    expect(summary?.error).toContain('no --ssh-host');
  });
});
