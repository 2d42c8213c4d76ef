// A tiny formatter for the controller's pino JSON logs (pino-pretty is not a dependency):
// `HH:MM:SS.mmm LEVEL msg key=value …`, one line per record; lines that are not JSON pass
// through unchanged. Reads stdin until EOF and ignores SIGINT, so on Ctrl-C it still prints
// the controller's shutdown lines before it exits.
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';

const LEVELS = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO ', 40: 'WARN ', 50: 'ERROR', 60: 'FATAL' };
const HIDDEN = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'v']);
const color = process.stdout.isTTY && !process.env.NO_COLOR;
const paint = (code, text) => (color ? `\u001b[${code}m${text}\u001b[0m` : text);
const LEVEL_COLORS = { 40: 33, 50: 31, 60: 31 };

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
  const level = LEVELS[record.level] ?? String(record.level ?? '').padEnd(5);
  const fields = Object.entries(record)
    .filter(([key]) => !HIDDEN.has(key))
    .map(([key, value]) => `${paint(2, key + '=')}${formatValue(value)}`);
  const head = `${paint(2, clock)} ${paint(LEVEL_COLORS[record.level] ?? 36, level)} ${record.msg ?? ''}`;
  return [head, ...fields].join(' ');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.on('SIGINT', () => {});
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  lines.on('line', (line) => process.stdout.write(`${formatLine(line)}\n`));
}
