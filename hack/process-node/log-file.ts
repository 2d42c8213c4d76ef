import { closeSync, openSync, writeSync } from 'node:fs';

/**
 * Container logs are kept in the CRI text format the kubelet reads:
 * `<RFC3339 time> <stdout|stderr> <F|P> <content>`, one entry per line of output
 * (P marks a fragment of a longer line). Timestamps and tailLines come from it.
 */
export interface LogEntry {
  time: string;
  stream: string;
  partial: boolean;
  content: string;
}

const MAX_FRAGMENT = 16 * 1024;

export interface LogWriter {
  write(stream: 'stdout' | 'stderr', chunk: Buffer): void;
  close(): void;
}

export function openLogWriter(path: string): LogWriter {
  const fd = openSync(path, 'a', 0o640);
  const pending: Record<string, string> = { stdout: '', stderr: '' };
  let closed = false;
  const emit = (stream: string, content: string, partial: boolean) => {
    writeSync(fd, `${new Date().toISOString()} ${stream} ${partial ? 'P' : 'F'} ${content}\n`);
  };
  return {
    write(stream, chunk) {
      if (closed) return;
      let text = (pending[stream] ?? '') + chunk.toString('utf8');
      let nl = text.indexOf('\n');
      while (nl >= 0) {
        emit(stream, text.slice(0, nl), false);
        text = text.slice(nl + 1);
        nl = text.indexOf('\n');
      }
      while (text.length > MAX_FRAGMENT) {
        emit(stream, text.slice(0, MAX_FRAGMENT), true);
        text = text.slice(MAX_FRAGMENT);
      }
      pending[stream] = text;
    },
    close() {
      if (closed) return;
      closed = true;
      for (const [stream, rest] of Object.entries(pending)) if (rest) emit(stream, rest, false);
      closeSync(fd);
    },
  };
}

export function parseLogLine(line: string): LogEntry | undefined {
  const m = /^(\S+) (stdout|stderr) ([FP]) (.*)$/s.exec(line);
  if (!m) return undefined;
  return { time: m[1] ?? '', stream: m[2] ?? '', partial: m[3] === 'P', content: m[4] ?? '' };
}

export function renderEntry(entry: LogEntry, timestamps: boolean): string {
  const prefix = timestamps ? `${entry.time} ` : '';
  return prefix + entry.content + (entry.partial ? '' : '\n');
}
