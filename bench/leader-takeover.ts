// `npm run bench:leader`: how long a Lorenz controller's Lease stays orphaned when its
// leader is killed with SIGKILL (no release), with the default lease settings. Two candidate
// processes per round against a real kube-apiserver; the leader is killed, the time until
// the other leads is the takeover. A benchmark, not a test: it prints figures, never fails.
//
//   BENCH_ROUNDS   rounds (5)
import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';
import { startControlPlane } from '../hack/cluster/control-plane.js';
import { createKubeClient } from '../src/controller/runtime/client.js';
import { DEFAULT_LEASE, createLeaderElector } from '../src/controller/runtime/leader.js';

async function candidate(kubeconfig: string, lease: string, identity: string): Promise<void> {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(kubeconfig);
  const elector = createLeaderElector({
    client: createKubeClient(kubeConfig),
    namespace: 'default',
    name: lease,
    identity,
    onStartedLeading: () => process.stdout.write(`leading ${Date.now()}\n`),
    onStoppedLeading: () => process.stdout.write(`stopped ${Date.now()}\n`),
  });
  await elector.run();
}

/** Resolves with the time the child first prints `leading`. */
function leadingAt(child: ChildProcess): Promise<number> {
  return new Promise((resolve) => {
    let buffered = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const match = /leading (\d+)/.exec(buffered);
      if (match) resolve(Number(match[1]));
    });
  });
}

async function main(): Promise<void> {
  const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
  // The control plane finds hack/tools.sh next to its own source; in a bundle that is here.
  process.env.LORENZ_TOOLS_SCRIPT ??= join(
    dirname(fileURLToPath(import.meta.url)),
    '..',
    'hack',
    'tools.sh',
  );
  const cp = await startControlPlane({ controllers: [] });
  const takeovers: number[] = [];
  try {
    for (let round = 0; round < rounds; round += 1) {
      const lease = `bench-${round}`;
      const start = (identity: string) =>
        spawn(
          process.execPath,
          [process.argv[1] ?? '', 'candidate', cp.kubeconfigPath, lease, identity],
          {
            stdio: ['ignore', 'pipe', 'inherit'],
          },
        );
      const first = start('a');
      await leadingAt(first);
      const second = start('b');
      const secondLeads = leadingAt(second);
      // Let the second settle as a candidate that watches a live, renewed lease.
      await new Promise((resolve) => setTimeout(resolve, 3000 + Math.random() * 2000));
      const killedAt = Date.now();
      first.kill('SIGKILL');
      const takeover = (await secondLeads) - killedAt;
      takeovers.push(takeover);
      process.stdout.write(`round ${round + 1}: takeover ${(takeover / 1000).toFixed(1)} s\n`);
      second.kill('SIGKILL');
    }
  } finally {
    await cp.stop();
  }
  const sorted = [...takeovers].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)] ?? 0;
  const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  process.stdout.write(
    `leader takeover after SIGKILL (lease ${DEFAULT_LEASE.leaseDurationMs / 1000} s, renew ${DEFAULT_LEASE.renewDeadlineMs / 1000} s, retry ${DEFAULT_LEASE.retryPeriodMs / 1000} s), ${rounds} rounds: ` +
      `median ${seconds(median)}, min ${seconds(sorted[0] ?? 0)}, max ${seconds(sorted.at(-1) ?? 0)} (target ≤ 15 s)\n`,
  );
}

const [mode, ...args] = process.argv.slice(2);
if (mode === 'candidate') {
  const [kubeconfig = '', lease = '', identity = ''] = args;
  await candidate(kubeconfig, lease, identity);
} else {
  await main();
}
