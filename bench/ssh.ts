// `npm run bench:ssh`: SSH workers against issue 13's targets, on a loopback sshd (the test
// fixture: /usr/sbin/sshd, user lorenz-worker). A benchmark, not a test: it prints figures
// beside their targets and never fails on them.
//
//   1. per-hook overhead: a hook (`true`) through the SSH executor, over its one reused
//      connection, against a bare `ssh -i key host true` (a new connection each time, as a
//      hook runner without reuse pays); goal ≤ 1.2×. Both the command alone (runCommand,
//      guard included) and the engine's whole hook (runHook: the containment probes too).
//   2. skills sync throughput: executor.copyTree of a tree of 1000 small files and a 50 MB
//      file, against `tar -c | ssh host tar -x`; goal ≥ 0.8×.
//
//   BENCH_HOOKS   hooks timed per variant (30)
import { execFile, spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createSshExecutor, type SshExecutor } from '../src/executor/ssh/index.js';
import { runHook } from '../src/workspace/hooks.js';
import { startSshd, type Sshd } from '../test/support/fakes/sshd.js';
import { readFile } from 'node:fs/promises';
import { say, median } from './report.js';

const run = promisify(execFile);
const HOOKS = Math.max(3, Number(process.env.BENCH_HOOKS ?? 30) || 30);

function sshArgs(sshd: Sshd, knownHosts: string): string[] {
  return [
    '-i',
    sshd.keyFile,
    '-p',
    String(sshd.port),
    '-o',
    `UserKnownHostsFile=${knownHosts}`,
    '-o',
    'StrictHostKeyChecking=yes',
    '-o',
    'BatchMode=yes',
    `${sshd.user}@${sshd.host}`,
  ];
}

async function timed(action: () => Promise<unknown>, times: number): Promise<number[]> {
  const samples: number[] = [];
  for (let index = 0; index < times; index += 1) {
    const started = performance.now();
    await action();
    samples.push(performance.now() - started);
  }
  return samples;
}

async function hookOverhead(sshd: Sshd, executor: SshExecutor, knownHosts: string) {
  const root = `${sshd.home}/bench-root`;
  const workspace = `${root}/ENG-1`;
  await sshd.asWorker(`mkdir -p ${workspace}`);
  await executor.runCommand('true', { cwd: workspace, timeoutMs: 10_000 }); // connect first
  const bare = await timed(() => run('ssh', [...sshArgs(sshd, knownHosts), 'true']), HOOKS);
  const command = await timed(
    () => executor.runCommand('true', { cwd: workspace, root, timeoutMs: 10_000 }),
    HOOKS,
  );
  const hook = await timed(
    () =>
      runHook({
        executor,
        emit: () => {},
        hookName: 'before_run',
        command: 'true',
        workspace,
        root,
        issue: null,
        timeoutMs: 10_000,
        slot: 0,
      }),
    HOOKS,
  );
  const base = median(bare);
  console.log('\n## Per-hook overhead (median of %d, loopback sshd)\n', HOOKS);
  console.log('| variant | ms | × bare `ssh host true` | goal |');
  console.log('|---|---|---|---|');
  console.log(`| bare \`ssh -i key host true\` (new connection) | ${base.toFixed(1)} | 1.00 | |`);
  for (const [name, samples] of [
    ['runCommand `true` (reused connection, guard included)', command],
    ['runHook `true` (guard + containment probes + command)', hook],
  ] as const) {
    const value = median(samples);
    console.log(`| ${name} | ${value.toFixed(1)} | ${(value / base).toFixed(2)} | ≤ 1.2× |`);
  }
}

async function makeSkills(local: string): Promise<{ source: string; bytes: number }> {
  const source = join(local, 'skills');
  await mkdir(join(source, 'nested'), { recursive: true });
  let bytes = 0;
  for (let index = 0; index < 1000; index += 1) {
    const text = `skill file ${index}\n`.repeat(20);
    bytes += text.length;
    await writeFile(join(source, index % 2 ? 'nested' : '', `f-${index}.md`), text);
  }
  const big = Buffer.alloc(50 * 1024 * 1024);
  for (let offset = 0; offset < big.length; offset += 4096) big.writeUInt32LE(offset, offset);
  await writeFile(join(source, 'model.bin'), big);
  return { source, bytes: bytes + big.length };
}

async function tarOverSsh(sshd: Sshd, knownHosts: string, source: string, target: string) {
  await new Promise<void>((resolve, reject) => {
    const tar = spawn('tar', ['-C', source, '-cf', '-', '.'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const ssh = spawn(
      'ssh',
      [
        ...sshArgs(sshd, knownHosts),
        `rm -rf ${target} && mkdir -p ${target} && tar -C ${target} -xf -`,
      ],
      { stdio: ['pipe', 'inherit', 'inherit'] },
    );
    // An ssh that fails before reading closes its stdin: its exit status is the news, not EPIPE.
    ssh.stdin.on('error', () => undefined);
    tar.stdout.pipe(ssh.stdin);
    ssh.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`ssh exited ${code}`))));
  });
}

async function skillsThroughput(
  sshd: Sshd,
  executor: SshExecutor,
  knownHosts: string,
  local: string,
) {
  const { source, bytes } = await makeSkills(local);
  const within = `${sshd.home}/bench-skills`;
  await sshd.asWorker(`mkdir -p ${within}`);
  const rounds = 5;
  const ours = await timed(() => executor.copyTree(source, `${within}/ours`, { within }), rounds);
  const bare = await timed(() => tarOverSsh(sshd, knownHosts, source, `${within}/bare`), rounds);
  const mb = bytes / 1024 / 1024;
  const rate = (ms: number) => mb / (ms / 1000);
  console.log('\n## Skills sync (1000 files + 50 MB, median of %d)\n', rounds);
  console.log('| variant | ms | MB/s | × `tar -c \\| ssh tar -x` | goal |');
  console.log('|---|---|---|---|---|');
  const base = rate(median(bare));
  console.log(
    `| \`tar -c \\| ssh host tar -x\` | ${median(bare).toFixed(0)} | ${base.toFixed(1)} | 1.00 | |`,
  );
  const value = rate(median(ours));
  console.log(
    `| executor.copyTree (tar-stream → guard → tar -x) | ${median(ours).toFixed(0)} | ${value.toFixed(1)} | ${(value / base).toFixed(2)} | ≥ 0.8× |`,
  );
}

const sshd = await startSshd();
const local = await mkdtemp(join(tmpdir(), 'lorenz-bench-ssh-'));
const knownHosts = join(local, 'known_hosts');
await writeFile(knownHosts, sshd.knownHosts);
const executor = createSshExecutor({
  target: {
    host: { user: sshd.user, host: sshd.host, port: sshd.port },
    privateKey: await readFile(sshd.keyFile),
    knownHosts: sshd.knownHosts,
  },
  timeoutMs: 60_000,
});
try {
  say(`sshd on ${sshd.host}:${sshd.port}`);
  await hookOverhead(sshd, executor, knownHosts);
  await skillsThroughput(sshd, executor, knownHosts, local);
} finally {
  await executor.shutdown();
  await sshd.asWorker('rm -rf ~/bench-root ~/bench-skills').catch(() => '');
  await sshd.stop();
  await rm(local, { recursive: true, force: true });
}
