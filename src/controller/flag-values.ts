/** The controller's flag values: sizes, durations, and the error a wrong one is. */

/** A flag's value is wrong: the CLI prints it with the usage, as parseArgs' own errors. */
export class FlagError extends Error {
  readonly code = 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE';
  constructor(message: string) {
    super(message);
    this.name = 'FlagError';
  }
}

const BYTE_UNITS: Record<string, number> = {
  '': 1,
  k: 1000,
  m: 1000 ** 2,
  g: 1000 ** 3,
  ki: 1024,
  mi: 1024 ** 2,
  gi: 1024 ** 3,
};

/** `33554432`, `32Mi`, `32MiB`, `1G` → bytes; anything else is a flag error naming it. */
export function parseByteSize(flag: string, text: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*([kmg]i?)?b?$/i.exec(text.trim());
  const unit = BYTE_UNITS[(match?.[2] ?? '').toLowerCase()];
  const bytes = match && unit !== undefined ? Math.floor(Number(match[1]) * unit) : NaN;
  if (!Number.isFinite(bytes) || bytes <= 0) {
    throw new FlagError(
      `${flag} ${JSON.stringify(text)}: expected a size in bytes (33554432, 32Mi, 1Gi)`,
    );
  }
  return bytes;
}

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** `24h`, `1h30m`, `90s`, `500ms` → milliseconds; anything else is a flag error naming it. */
export function parseDurationFlag(flag: string, text: string): number {
  const parts = [...text.trim().matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)];
  const whole = parts.map((part) => part[0]).join('');
  if (parts.length === 0 || whole !== text.trim()) {
    throw new FlagError(
      `${flag} ${JSON.stringify(text)}: expected a duration (24h, 1h30m, 90s, 500ms)`,
    );
  }
  return parts.reduce(
    (sum, part) => sum + Number(part[1]) * (DURATION_UNITS[part[2] ?? 's'] ?? 0),
    0,
  );
}
