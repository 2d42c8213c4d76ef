// SSH workers end to end: a Workflow with `worker.ssh_hosts` (the loopback sshd fixture as the
// one worker) and spec.worker.sshKeySecretRef, an IssueRun whose hooks and scripted agent run
// on the worker as its user, under its home. The run Pod is the supervisor: its runner
// connects with the mounted key, checks the host key against the Secret's known_hosts, and
// reports hook Events and the status as for a local run; the status names the host.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSshd, type Sshd } from '../support/fakes/sshd.js';
import { NAMESPACE, useOperatorEnv } from './operator-harness.js';
import { RUN_POD_PATHS, SCRIPTED_AGENT_FILE } from '../../src/api/run-pod.js';

describe('SSH workers on the operator', () => {
  const env = useOperatorEnv();
  let sshd: Sshd;
  let dir: string;
  const name = `it-ssh-${process.pid}`;
  beforeAll(async () => {
    sshd = await startSshd();
    dir = await mkdtemp(join(tmpdir(), 'lorenz-it-ssh-'));
  }, 120_000);
  afterAll(async () => {
    await sshd?.asWorker(`rm -rf ~/${name} ~/${name}.log`).catch(() => undefined);
    await sshd?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('runs the hooks and the agent on the worker, and records the host in the status', async () => {
    const knownHosts = join(dir, 'known_hosts');
    await writeFile(knownHosts, sshd.knownHosts);
    await env.kubectl(
      'create',
      'secret',
      'generic',
      'worker-ssh',
      '-n',
      NAMESPACE,
      `--from-file=ssh-privatekey=${sshd.keyFile}`,
      `--from-file=known_hosts=${knownHosts}`,
    );
    const log = `~/${name}.log`;
    // The worker is this machine: it runs the scripted agent from where the harness built it
    // (readable by any user), not from the Pod's /lorenz-bin, which only the Pod sees.
    const text = env
      .workflowText({
        hooks: {
          timeout_ms: 60000,
          after_create: `echo "after_create $PWD $(id -un)" >> ${log}`,
          after_run: `cat done.txt >> ${log}`,
        },
      })
      .replace(`${RUN_POD_PATHS.runnerBin}/${SCRIPTED_AGENT_FILE}`, env.scriptedAgent)
      .replace(
        'hooks:\n',
        `worker:\n  ssh_hosts: ["${sshd.destination}"]\nworkspace:\n  root: ~/${name}\nhooks:\n`,
      );
    await env.createWorkflow('remote', text, {
      worker: { sshKeySecretRef: { name: 'worker-ssh' } },
    });
    await env.createIssueRun('remote-1', 'remote', { identifier: 'REM-1', title: 'Remote' });
    const run = await env.finished('remote-1', 180_000);
    expect(run.status?.phase, JSON.stringify(run.status)).toBe('Succeeded');
    expect(run.status?.slots?.[0]?.host).toBe(sshd.destination);

    // The hook and the agent ran on the worker, as its user, in the workspace under its home.
    const workspace = `${sshd.home}/${name}/REM-1`;
    expect(await sshd.asWorker(`cat ${log}`)).toBe(`after_create ${workspace} ${sshd.user}\nok`);
    const events = await env.hookEvents('remote-1');
    const notes = events.map((event) => `${event.reason} ${event.note}`).join('\n');
    expect(notes).toMatch(/after_create/);
    expect(notes).toMatch(/after_run/);
    // The Pod mounted the key for its runner; the key itself is in no log line.
    const [pod] = await env.runPodNames('remote-1');
    const logs = await env.kubectl('logs', pod ?? '', '-n', NAMESPACE, '-c', 'agent');
    expect(logs).toContain(workspace);
    expect(logs).not.toContain('PRIVATE KEY');
  });
});
