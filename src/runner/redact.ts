import { REDACT_ENV_PREFIX } from '../api/run-pod.js';

/** What stands in for a secret value. */
export const REDACTED = '[redacted]';

/**
 * Values shorter than this are not redacted: replacing every `1` or `yes` in hook output
 * would destroy it, and so short a value is no secret worth the name.
 */
export const MIN_SECRET_LENGTH = 4;

/** The marker truncateOutput appends: a secret cut by it leaves a prefix just before it. */
const TRUNCATION = /\n\[truncated \d+ chars\]$/;

export interface Redactor {
  /** The text with every secret value (and a secret cut short at the truncation) replaced. */
  text(text: string): string;
  /** A JSON value with every string in it redacted. */
  value<T>(value: T): T;
  /**
   * The length of the longest suffix of `text` that is a proper prefix of a secret value (0
   * when none): what a stream cut at the end of `text` must hold back, so that a secret
   * written in two pieces is still redacted whole once the rest arrives.
   */
  secretPrefixAtEnd(text: string): number;
}

/** Splits the environment: the values to redact, and what hooks and the agent may see. */
export function secretsFromEnv(env: NodeJS.ProcessEnv): {
  secrets: string[];
  env: NodeJS.ProcessEnv;
} {
  const secrets = new Set<string>();
  const rest: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith(REDACT_ENV_PREFIX)) {
      rest[name] = value;
      continue;
    }
    for (const candidate of [value ?? '', (value ?? '').trim()]) {
      if (candidate.length >= MIN_SECRET_LENGTH) secrets.add(candidate);
    }
  }
  return { secrets: [...secrets], env: rest };
}

export function createRedactor(secrets: readonly string[]): Redactor {
  // Longest first, so a secret that contains another is replaced whole.
  const values = [...secrets]
    .filter((secret) => secret.length >= MIN_SECRET_LENGTH)
    .sort((a, b) => b.length - a.length);

  function cutTail(text: string): string {
    const marker = TRUNCATION.exec(text);
    if (!marker) return text;
    const head = text.slice(0, marker.index);
    for (const secret of values) {
      for (let length = secret.length - 1; length >= MIN_SECRET_LENGTH; length -= 1) {
        if (head.endsWith(secret.slice(0, length))) {
          return `${head.slice(0, head.length - length)}${REDACTED}${text.slice(marker.index)}`;
        }
      }
    }
    return text;
  }

  function text(input: string): string {
    if (values.length === 0) return input;
    let output = input;
    for (const secret of values) output = output.split(secret).join(REDACTED);
    return cutTail(output);
  }

  function value<T>(input: T): T {
    if (values.length === 0) return input;
    const walk = (node: unknown): unknown => {
      if (typeof node === 'string') return text(node);
      if (Array.isArray(node)) return node.map(walk);
      if (node === null || typeof node !== 'object') return node;
      return Object.fromEntries(Object.entries(node).map(([key, child]) => [key, walk(child)]));
    };
    return walk(input) as T;
  }

  function secretPrefixAtEnd(input: string): number {
    let longest = 0;
    for (const secret of values) {
      // Only a start within the last secret.length - 1 characters can be a proper prefix,
      // and only where the secret's first character is: a few candidates, checked longest first.
      const first = secret.charAt(0);
      let at = input.indexOf(first, Math.max(input.length - secret.length + 1, 0));
      while (at >= 0 && input.length - at > longest) {
        if (secret.startsWith(input.slice(at))) {
          longest = input.length - at;
          break;
        }
        at = input.indexOf(first, at + 1);
      }
    }
    return longest;
  }

  return { text, value, secretPrefixAtEnd };
}

/**
 * A thrown error with its message (and stack) redacted in place, its class and code kept, so
 * whoever prints it (`lorenz: <code>: <message>`) prints no secret.
 */
export function redactError<T>(error: T, redactor: Redactor): T {
  if (error instanceof Error) {
    error.message = redactor.text(error.message);
    if (error.stack !== undefined) error.stack = redactor.text(error.stack);
  }
  return error;
}
