import type { Executor, SpawnOptions, SpawnedProcess } from '../executor/types.js';
import { forEachLine, jsonLinesOnly } from './lines.js';

/** How many stderr lines a failure message quotes. */
const STDERR_TAIL_LINES = 20;

export interface BridgeExit {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
}

export interface BridgeListeners {
  onStderrLine(line: string): void;
  onMalformedLine(line: string): void;
}

/** A running bridge command: its stdio as an ACP byte stream, its stderr, its exit. */
export interface Bridge {
  readonly command: string;
  readonly pid: number | undefined;
  /** Input and output for the SDK's ndJsonStream (stdout already cleared of non-JSON). */
  readonly input: ReadableStream<Uint8Array>;
  readonly output: WritableStream<Uint8Array>;
  /** Resolves once the bridge has exited and stderr has been read to its end. */
  readonly exited: Promise<BridgeExit>;
  /** The exit, once it happened. */
  exit(): BridgeExit | undefined;
  /** The last stderr lines, oldest first. */
  stderrTail(): string[];
  /** End the bridge and its whole process group; resolves when nothing of it is left. */
  stop(graceMs: number): Promise<void>;
}

export function startBridge(
  executor: Executor,
  command: string,
  options: SpawnOptions & { env: NodeJS.ProcessEnv },
  listeners: BridgeListeners,
): Bridge {
  const child = executor.spawn(command, options);
  const tail: string[] = [];
  // Read stderr from the start: a bridge that dies before initialize says why only there.
  const stderrDone = forEachLine(child.stderr, (line) => {
    tail.push(line);
    if (tail.length > STDERR_TAIL_LINES) tail.shift();
    listeners.onStderrLine(line);
  });
  let exit: BridgeExit | undefined;
  const exited = child.exited.then(async (status) => {
    // The pipes close with the group; stderr may still hold the reason of a crash.
    await Promise.race([stderrDone, delay(1000)]);
    exit = status;
    return status;
  });
  return {
    command,
    pid: child.pid,
    input: jsonLinesOnly(child.stdout, (line) => listeners.onMalformedLine(line)),
    output: stdinWriter(child),
    exited,
    exit: () => exit,
    stderrTail: () => [...tail],
    async stop(graceMs) {
      child.stdin.end();
      await child.kill(graceMs);
      await exited;
    },
  };
}

function delay(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms).unref());
}

/** The bridge's stdin as a web stream; writes to a dead bridge fail the write, not us. */
function stdinWriter(child: SpawnedProcess): WritableStream<Uint8Array> {
  child.stdin.on('error', () => undefined);
  return new WritableStream<Uint8Array>({
    write(chunk) {
      return new Promise((done, fail) => {
        child.stdin.write(chunk, (error) => (error ? fail(error) : done()));
      });
    },
  });
}
