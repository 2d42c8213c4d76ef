import type { core } from 'zod';

/**
 * zod's own texts ("Invalid input: expected string, received undefined") speak of schemas;
 * a person editing a YAML file needs the key and what it should hold. These say it in the
 * file's terms: `key "identifier" is required`, `key "labels" must be a list, not a string`.
 */

const EXPECTED: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  array: 'a list',
  object: 'a map',
};

/** How a value read from YAML or JSON looks to its author. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'number') return Number.isInteger(value) ? 'a whole number' : 'a number';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'string') return 'a string';
  if (typeof value === 'object') return 'a map';
  return `a ${typeof value}`;
}

/** `blocked_by[0].id` from ['blocked_by', 0, 'id']. */
export function keyPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((text, segment) => {
    if (typeof segment === 'number') return `${text}[${segment}]`;
    return text === '' ? String(segment) : `${text}.${String(segment)}`;
  }, '');
}

/** One zod issue as a sentence about a key; the issue must come from a parse with reportInput. */
export function describeZodIssue(issue: core.$ZodIssue): string {
  const key = keyPath(issue.path);
  const subject = key === '' ? 'the value' : `key "${key}"`;
  if (issue.code === 'invalid_type') {
    // A missing key leaves no input behind; an explicit null is reported as null.
    if (issue.input === undefined) return `${subject} is required`;
    const expected = EXPECTED[issue.expected] ?? issue.expected;
    return `${subject} must be ${expected}, not ${describeValue(issue.input)}`;
  }
  if (issue.code === 'too_small' && issue.origin === 'string' && Number(issue.minimum) === 1) {
    return `${subject} must not be empty`;
  }
  return `${subject}: ${issue.message}`;
}
