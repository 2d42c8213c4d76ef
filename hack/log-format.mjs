// A tiny formatter for the controller's pino JSON logs (pino-pretty is not a dependency):
// `HH:MM:SS.mmm LEVEL msg key=value …`, one line per record; lines that are not JSON pass
// through unchanged. Reads stdin until EOF and ignores SIGINT, so on Ctrl-C it still prints
// the controller's shutdown lines before it exits.
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';

// pino writes numeric levels by default; the controller's logger writes their labels.
const LEVELS = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };
const HIDDEN = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'v']);
const color = process.stdout.isTTY && !process.env.NO_COLOR;
const paint = (code, text) => (color ? `\u001b[${code}m${text}\u001b[0m` : text);
const LEVEL_COLORS = { warn: 33, error: 31, fatal: 31 };

function formatValue(value) {
  if (typeof value === 'string') return /[\s"=]/.test(value) ? JSON.stringify(value) : value;
  return JSON.stringify(value);
}

export function formatLine(line) {
  let record;
  try {
    record = JSON.parse(line);
  } catch {
    return line;
  }
  if (typeof record !== 'object' || record === null || !('msg' in record || 'level' in record)) {
    return line;
  }
  const time = new Date(typeof record.time === 'number' ? record.time : Date.now());
  const clock = time.toISOString().slice(11, 23);
  const label = LEVELS[record.level] ?? String(record.level ?? '');
  const level = label.toUpperCase().padEnd(5);
  const fields = Object.entries(record)
    .filter(([key]) => !HIDDEN.has(key))
    .map(([key, value]) => `${paint(2, key + '=')}${formatValue(value)}`);
  const head = `${paint(2, clock)} ${paint(LEVEL_COLORS[label] ?? 36, level)} ${record.msg ?? ''}`;
  return [head, ...fields].join(' ');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.on('SIGINT', () => {});
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  lines.on('line', (line) => process.stdout.write(`${formatLine(line)}\n`));
}
