// The Lorenz controller as a child process of the benchmark, so that its RSS is its own:
// bundled on its own (bench/reconcile-env.ts), started with fork(), answers over IPC.
//   argv: <kubeconfig> <namespace>
import { Session } from 'node:inspector/promises';
import { getHeapSpaceStatistics, writeHeapSnapshot } from 'node:v8';
import { KubeConfig } from '@kubernetes/client-node';
import { startController } from '../src/controller/main.js';
import {
  CONTROLLER_RUNTIME_V8_FLAGS,
  tuneControllerHeap,
} from '../src/controller/runtime/heap-flags.js';
import { createLogger } from '../src/controller/runtime/logger.js';

export type ControllerRequest =
  | { type: 'writes' }
  | { type: 'memory' }
  | { type: 'profile-start' }
  | { type: 'profile-stop' }
  | { type: 'stop' };
export type ControllerReply =
  | { type: 'started' }
  | { type: 'writes'; writes: number; log: string[] }
  | {
      type: 'memory';
      heapUsedMiB: number;
      heapTotalMiB: number;
      externalMiB: number;
      rssMiB: number;
      /** V8 heap spaces: physical size (used) in MiB, for telling young from old. */
      spaces: string;
    }
  | { type: 'profiling' }
  /** V8's CPU profile (the .cpuprofile JSON) of the time between profile-start and -stop. */
  | { type: 'profile'; profile: string; allocations: string }
  | { type: 'stopped' };

const [kubeconfigPath, namespace] = process.argv.slice(2);
if (!kubeconfigPath || !namespace) throw new Error('usage: <kubeconfig> <namespace>');
const send = (reply: ControllerReply) => process.send?.(reply);

// As `lorenz controller` does (src/cli/controller-command.ts); BENCH_RUNTIME_V8_FLAGS
// replaces the flags it turns on ('' for none), to compare.
const collector = tuneControllerHeap(
  process.env.BENCH_RUNTIME_V8_FLAGS === undefined
    ? CONTROLLER_RUNTIME_V8_FLAGS
    : process.env.BENCH_RUNTIME_V8_FLAGS.split(/\s+/).filter(Boolean),
);
const kubeConfig = new KubeConfig();
kubeConfig.loadFromFile(kubeconfigPath);
const running = await startController({
  kubeConfig,
  namespace,
  handleSignals: false,
  identity: 'bench-controller',
  // BENCH_ARCHIVE_DSN: the run archive on (bench/archive-cost.ts compares it with off).
  ...(process.env.BENCH_ARCHIVE_DSN
    ? { archive: { dsn: process.env.BENCH_ARCHIVE_DSN } }
    : { archiveOff: 'the benchmark measures the controller without it' }),
  logger: createLogger({ level: process.env.BENCH_LOG ?? 'silent' }),
});

// BENCH_PROFILE: the benchmark profiles only the load, through the inspector in this process
// (--cpu-prof would take the whole life: start-up, the warm-up run and the shutdown too).
const inspector = new Session();
async function profileStart() {
  inspector.connect();
  await inspector.post('Profiler.enable');
  await inspector.post('Profiler.setSamplingInterval', { interval: 500 });
  await inspector.post('Profiler.start');
  // Where the collector's share comes from: allocations sampled every 32 KiB.
  await inspector.post('HeapProfiler.enable');
  // Collected objects included: the garbage is what is being looked for.
  await inspector.post('HeapProfiler.startSampling', {
    samplingInterval: 32 * 1024,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  send({ type: 'profiling' });
}
async function profileStop() {
  const { profile } = await inspector.post('Profiler.stop');
  const { profile: allocations } = await inspector.post('HeapProfiler.stopSampling');
  inspector.disconnect();
  send({
    type: 'profile',
    profile: JSON.stringify(profile),
    allocations: JSON.stringify(allocations),
  });
}

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  collector.stop();
  await running.stop();
  send({ type: 'stopped' });
  process.exit(0);
};
process.on('message', (request: ControllerRequest) => {
  if (request.type === 'writes') {
    send({ type: 'writes', writes: running.writes(), log: running.writeLog() });
  } else if (request.type === 'memory') {
    // Forked with --expose-gc: what stays after a full collection is what the cache holds.
    (globalThis as { gc?: () => void }).gc?.();
    const usage = process.memoryUsage();
    const mib = (bytes: number) => bytes / 2 ** 20;
    send({
      type: 'memory',
      heapUsedMiB: mib(usage.heapUsed),
      heapTotalMiB: mib(usage.heapTotal),
      externalMiB: mib(usage.external),
      rssMiB: mib(usage.rss),
      spaces: getHeapSpaceStatistics()
        .map(
          (space) =>
            `${space.space_name.replace(/_space$/, '')} ${mib(space.physical_space_size).toFixed(1)}` +
            ` (${mib(space.space_used_size).toFixed(1)})`,
        )
        .join(', '),
    });
    // BENCH_HEAP_SNAPSHOT=<dir>: after the figures, a snapshot, to see what the heap holds.
    if (process.env.BENCH_HEAP_SNAPSHOT)
      writeHeapSnapshot(
        `${process.env.BENCH_HEAP_SNAPSHOT}/controller-${process.pid}.heapsnapshot`,
      );
  } else if (request.type === 'profile-start') void profileStart();
  else if (request.type === 'profile-stop') void profileStop();
  else if (request.type === 'stop') void stop();
});
// The benchmark went away (crashed or killed): never outlive it.
process.on('disconnect', () => void stop());
process.on('SIGTERM', () => void stop());
send({ type: 'started' });
