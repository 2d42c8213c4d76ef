import { RUN_SOURCE_OPTIONS, parseRunArgs } from './args.js';
import type { IssueRun } from '../../api/index.js';
import type { LogEntry, LogFilter } from '../../archive/types.js';
import { statusOf } from '../../controller/runtime/client.js';
import { reportingFailures } from './errors.js';
import { integerOption, outputOption } from '../usage.js';
import type { ArchiveReader } from './archive-reader.js';
import { findRunArchive } from './find-archive.js';
import type { RunCommand } from './get-runs.js';
import { userCluster, type UserCluster } from './kube.js';
import { get, str } from '../../server/json.js';
import { agentState, getIssueRun, getPod, podLog, runPods, type RunPod } from './live.js';
import { createLogRenderer } from './render.js';

type Output = (text: string) => void;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** How often -f looks again for a run Pod that is not there yet, or not started. */
const FOLLOW_POLL_MS = 500;

/** Whether the run is over: no Pod of it will start again. */
const isFinished = (run: IssueRun | undefined): boolean =>
  !run || (run.status?.conditions ?? []).some((c) => c.type === 'Finished' && c.status === 'True');

/** Where the lines of one log go: as they are (json), or rendered (text). */
interface Sink {
  line(raw: string): void;
  /** A whole archived piece: lines, each ended by its newline (pieces end on line ends). */
  piece(data: string): void;
  elided(entry: Extract<LogEntry, { kind: 'elided' }>): void;
  header(text: string): void;
  /** What is still owed, then everything written so far out. */
  end(): void;
}

/** Output gathered into writes of up to this many characters. */
const BATCH_CHARS = 64 * 1024;

/**
 * Text gathered into few large writes: a 32 MiB log printed a line a write spent as much time
 * in write(2) as in rendering. What is held goes out at BATCH_CHARS, on the next turn of the
 * event loop (so a followed log still shows each line as it comes), or at flush().
 */
function batched(out: Output): { write(text: string): void; flush(): void } {
  let parts: string[] = [];
  let size = 0;
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (parts.length === 0) return;
    const text = parts.join('');
    parts = [];
    size = 0;
    out(text);
  };
  return {
    write(text) {
      if (!text) return;
      parts.push(text);
      size += text.length;
      if (size >= BATCH_CHARS) flush();
      else if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    },
    flush,
  };
}

function sinkOf(output: 'text' | 'json', out: Output, prefix = ''): Sink {
  const batch = batched(out);
  if (output === 'json')
    return {
      line: (raw) => batch.write(`${raw}\n`),
      piece: (data) => batch.write(data.endsWith('\n') ? data : `${data}\n`),
      elided: (entry) =>
        batch.write(
          `${JSON.stringify({ type: 'log_elided', message: { slot: entry.slot, attempt: entry.attempt, offset: entry.offset, bytes: entry.bytes } })}\n`,
        ),
      header: () => {},
      end: () => batch.flush(),
    };
  const renderer = createLogRenderer();
  const write = (text: string) => {
    if (!text) return;
    batch.write(prefix ? text.replace(/^(?=.)/gm, prefix) : text);
  };
  return {
    line: (raw) => write(renderer.line(raw)),
    piece(data) {
      let start = 0;
      while (start < data.length) {
        const end = data.indexOf('\n', start);
        const stop = end < 0 ? data.length : end;
        write(renderer.line(data.slice(start, stop)));
        start = stop + 1;
      }
    },
    elided: (entry) => write(renderer.elided(entry.bytes)),
    header: (text) => write(`${renderer.end()}==> ${text} <==\n`),
    end: () => {
      write(renderer.end());
      batch.flush();
    },
  };
}

/** The archived log: its pieces split into lines, markers where the cap dropped some. */
async function printArchived(
  reader: ArchiveReader,
  run: Parameters<ArchiveReader['readLog']>[0],
  filter: LogFilter,
  sink: Sink,
): Promise<number> {
  let current = '';
  let count = 0;
  for await (const entry of reader.readLog(run, filter)) {
    const key = `${entry.kind === 'data' ? entry.piece.slot : entry.slot}/${entry.kind === 'data' ? entry.piece.attempt : entry.attempt}`;
    if (key !== current) {
      current = key;
      const [slot, attempt] = key.split('/');
      sink.header(`slot ${slot} attempt ${attempt} (archived)`);
    }
    count += 1;
    if (entry.kind === 'elided') {
      sink.elided(entry);
      continue;
    }
    sink.piece(entry.piece.data);
  }
  sink.end();
  return count;
}

/** Follows one Pod's agent log until it ends; waits while the container has not started. */
async function followPod(
  cluster: UserCluster,
  namespace: string,
  pod: RunPod,
  follow: boolean,
  sink: Sink,
): Promise<void> {
  // -f before the agent container runs: its log would end at once, empty.
  while (follow) {
    const current = await getPod(cluster.client, namespace, pod.name);
    if (!current || str(get(current, 'status', 'phase')) !== 'Pending') break;
    if (agentState(current).startedAt) break;
    await sleep(FOLLOW_POLL_MS);
  }
  for (;;) {
    try {
      await podLog(cluster.client, namespace, pod.name, {
        follow,
        onLine: (line) => sink.line(line),
      });
      sink.end();
      return;
    } catch (error) {
      // 400 while the container is waiting to start: with -f, wait for it.
      if (!follow || statusOf(error) !== 400) {
        sink.end(); // what was read before the failure is still shown
        throw error;
      }
      await sleep(FOLLOW_POLL_MS);
    }
  }
}

/** The flags `lorenz logs` parses (their help: cli/command-help.ts). */
export const LOGS_OPTIONS = {
  ...RUN_SOURCE_OPTIONS,
  follow: { type: 'boolean', short: 'f', default: false },
  slot: { type: 'string' },
  attempt: { type: 'string' },
  output: { type: 'string', short: 'o', default: 'text' },
} as const;

/**
 * `lorenz logs RUN [-n NS] [-f] [--slot N] [--attempt N] [--output text|json]`: the run's log
 * from its Pod while there is one (pods/log, the agent container), else from the archive.
 */
// eslint-disable-next-line max-lines-per-function -- `lorenz logs` in order: parse, find the run (live or archived), print or follow
export const logsCommand: RunCommand = async (args, out, err, deps = {}) => {
  const { values, name } = parseRunArgs(args, LOGS_OPTIONS, 'logs');
  const output = outputOption(values.output, ['text', 'json']);
  const slot = integerOption(values.slot, '--slot');
  const attempt = integerOption(values.attempt, '--attempt');
  const filter: LogFilter = {
    ...(slot === undefined ? {} : { slot }),
    ...(attempt === undefined ? {} : { attempt }),
  };
  const cluster = (deps.cluster ?? userCluster)(values.kubeconfig);
  const namespace = values.namespace ?? cluster.namespace;
  const wanted = (pod: RunPod) =>
    (slot === undefined || pod.slot === slot) && (attempt === undefined || pod.attempt === attempt);
  return reportingFailures(err, async () => {
    try {
      let live = await getIssueRun(cluster.client, namespace, name);
      let pods = live
        ? (await runPods(cluster.client, namespace, { name, uid: live.metadata.uid })).filter(
            wanted,
          )
        : [];
      // -f on a run whose Pod is not made yet: wait for it, or for the run to end without one.
      while (values.follow && live && pods.length === 0 && !isFinished(live)) {
        await sleep(FOLLOW_POLL_MS);
        live = await getIssueRun(cluster.client, namespace, name);
        pods = live
          ? (await runPods(cluster.client, namespace, { name, uid: live.metadata.uid })).filter(
              wanted,
            )
          : [];
      }
      if (pods.length > 0) {
        if (values.follow) {
          // The newest attempt of each slot, followed side by side (prefixed when several).
          const latest = [...new Map(pods.map((pod) => [pod.slot, pod])).values()];
          await Promise.all(
            latest.map((pod) =>
              followPod(
                cluster,
                namespace,
                pod,
                true,
                sinkOf(output, out, latest.length > 1 ? `[slot ${pod.slot}] ` : ''),
              ),
            ),
          );
          return 0;
        }
        const sink = sinkOf(output, out);
        for (const pod of pods) {
          if (pods.length > 1)
            sink.header(`slot ${pod.slot} attempt ${pod.attempt} (pod ${pod.name})`);
          await followPod(cluster, namespace, pod, false, sink);
        }
        return 0;
      }
      const reader = await findRunArchive({ values, cluster, err, deps });
      if (!reader) {
        err(
          `lorenz: run ${namespace}/${name} has no Pod in the cluster and no archive was found\n`,
        );
        return 1;
      }
      try {
        const archived = await reader.getRun(namespace, name, live?.metadata.uid);
        if (!archived) {
          err(
            `lorenz: run ${namespace}/${name} not found (in the cluster nor in ${reader.where})\n`,
          );
          return 1;
        }
        const count = await printArchived(reader, archived.run, filter, sinkOf(output, out));
        if (count === 0)
          err(
            `lorenz: run ${namespace}/${name} has no archived log${slot !== undefined || attempt !== undefined ? ' for that slot/attempt' : ''}\n`,
          );
        return 0;
      } finally {
        await reader.close();
      }
    } finally {
      cluster.client.close();
    }
  });
};
