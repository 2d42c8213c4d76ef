import { LorenzError } from '../../workflow/errors.js';
import { connectFailure, type SshConnection } from './connection.js';
import { invocation, REFUSED_LINE } from './scripts.js';

/** A readable to pipe from: a node stream, or a streamx one (tar-stream's pack). */
export interface PipeSource {
  pipe(destination: NodeJS.WritableStream): unknown;
}

/** What a short script printed and how it ended. */
export interface CallResult {
  status: number | null;
  stdout: Buffer;
  stderr: string;
}

export interface CallOptions {
  /** Written to the script's stdin, then closed; a stream is piped. */
  input?: string | Buffer | PipeSource;
  /** Bound on the whole call; the channel is closed when it passes. */
  timeoutMs?: number;
}

/**
 * Runs a short script (a file operation, a signal) on its own channel and collects what it
 * printed. A connection that drops, or a call that outlasts `timeoutMs`, fails ssh_connect.
 */
export async function callScript(
  connection: Pick<SshConnection, 'name' | 'exec'>,
  script: string,
  args: readonly string[],
  options: CallOptions = {},
): Promise<CallResult> {
  const { channel, lost, exit } = await connection.exec(invocation(script, args));
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  channel.on('data', (chunk: Buffer) => stdout.push(chunk));
  channel.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
  let status: number | null = null;
  let exited = false;
  void exit.then(({ code }) => {
    exited = true;
    status = code;
  });
  const input = options.input;
  if (input === undefined) channel.end();
  else if (typeof input === 'string' || Buffer.isBuffer(input)) channel.end(input);
  else input.pipe(channel);
  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    new Promise<'closed'>((resolve) => channel.once('close', () => resolve('closed'))),
    lost.then((reason) => ({ lost: reason })),
    new Promise<'timeout'>((resolve) => {
      if (options.timeoutMs !== undefined)
        timer = setTimeout(() => resolve('timeout'), options.timeoutMs);
    }),
  ]);
  clearTimeout(timer);
  // The exit is reported before the close; let its handler run first.
  await Promise.race([exit, Promise.resolve()]);
  if (outcome === 'timeout') {
    channel.close();
    throw connectFailure(
      connection.name,
      `no answer within ${options.timeoutMs}ms (worker.ssh_timeout_ms)`,
    );
  }
  if (typeof outcome === 'object' || !exited) {
    throw connectFailure(
      connection.name,
      typeof outcome === 'object' ? outcome.lost : 'the channel closed without an exit status',
    );
  }
  return { status, stdout: Buffer.concat(stdout), stderr: Buffer.concat(stderr).toString('utf8') };
}

/** A guard's refusal (`lorenz-refused <code> <message>`) as the LorenzError it stands for. */
export function refusalIn(stderr: string): LorenzError | null {
  const line = stderr.split('\n').find((text) => text.startsWith(REFUSED_LINE));
  if (line === undefined) return null;
  const rest = line.slice(REFUSED_LINE.length);
  const space = rest.indexOf(' ');
  const code = rest.slice(0, space);
  const message = rest.slice(space + 1);
  return new LorenzError(isRefusalCode(code) ? code : 'invalid_workspace_cwd', message, {});
}

const REFUSAL_CODES = [
  'workspace_unsafe_symlink',
  'workspace_outside_root',
  'workspace_is_root',
  'invalid_workspace_cwd',
  'ssh_connect',
] as const;
type RefusalCode = (typeof REFUSAL_CODES)[number];

const isRefusalCode = (code: string): code is RefusalCode =>
  (REFUSAL_CODES as readonly string[]).includes(code);
