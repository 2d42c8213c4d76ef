import { StringDecoder } from 'node:string_decoder';

/**
 * Call `onLine` for each line of a byte stream (without its line ending), the last
 * unterminated line included. Resolves when the stream ends or fails.
 */
export function forEachLine(
  stream: NodeJS.ReadableStream,
  onLine: (line: string) => void,
): Promise<void> {
  const decoder = new StringDecoder('utf8');
  let pending = '';
  const take = (text: string): void => {
    pending += text;
    let newline = pending.indexOf('\n');
    while (newline >= 0) {
      onLine(pending.slice(0, newline).replace(/\r$/, ''));
      pending = pending.slice(newline + 1);
      newline = pending.indexOf('\n');
    }
  };
  return new Promise((done) => {
    stream.on('data', (chunk: Buffer | string) =>
      take(typeof chunk === 'string' ? chunk : decoder.write(chunk)),
    );
    const finish = (): void => {
      take(decoder.end());
      if (pending.length > 0) onLine(pending.replace(/\r$/, ''));
      pending = '';
      done();
    };
    stream.once('end', finish);
    stream.once('error', finish);
  });
}

/** True when the line is a JSON object: the only thing a JSON-RPC peer may send. */
function isJsonObject(line: string): boolean {
  const text = line.trim();
  if (!text.startsWith('{')) return false;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}

/**
 * The bridge's stdout as newline-delimited JSON for the SDK, with everything else diverted
 * to `onMalformed`: a bridge that prints a banner or a log line on stdout must not break
 * the session (and the SDK would answer it with a parse error the bridge never asked for).
 */
export function jsonLinesOnly(
  stdout: NodeJS.ReadableStream,
  onMalformed: (line: string) => void,
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  // Once the SDK cancels its side (the connection closed), lines are still read, so the
  // bridge never blocks on a full pipe, and dropped.
  let cancelled = false;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      void forEachLine(stdout, (line) => {
        if (line.trim() === '') return;
        if (!isJsonObject(line)) onMalformed(line);
        else if (!cancelled) controller.enqueue(encoder.encode(`${line}\n`));
      }).then(() => {
        if (!cancelled) controller.close();
      });
    },
    cancel() {
      cancelled = true;
    },
  });
}
