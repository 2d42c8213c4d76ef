import type { z } from 'zod';
import { LorenzError, type LorenzErrorCode } from './errors.js';

/**
 * Validating one front-matter section and reporting what is wrong with it: shared by
 * config.ts and the sections parsed in modules of their own (review-section.ts), so every
 * section names its key paths, warns about unknown keys and lists its problems the same way.
 */

export type RawMap = Record<string, unknown>;

export function isMap(value: unknown): value is RawMap {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** One invalid value of the front matter: its key path (`agent.max_turns`) and the rule. */
export interface ConfigProblem {
  path: string;
  rule: string;
}

/**
 * Settings whose refusal has a code of its own, which the docs promise: an invalid
 * worker.ssh_timeout_ms is `invalid_ssh_timeout` whether the schema or the executor finds it.
 */
const SETTING_CODES: Readonly<Record<string, LorenzErrorCode>> = {
  'worker.ssh_timeout_ms': 'invalid_ssh_timeout',
};

/** The code an invalid setting is refused with: its own where it has one, else the general one. */
export function settingErrorCode(path: string): LorenzErrorCode {
  return Object.hasOwn(SETTING_CODES, path)
    ? (SETTING_CODES[path] ?? 'invalid_workflow_config')
    : 'invalid_workflow_config';
}

export function invalid(path: string, rule: string): LorenzError {
  return new LorenzError(settingErrorCode(path), `${path}: ${rule}`, { path });
}

/**
 * The error for every problem the sections had: its message is the first one's (what
 * `lorenz run` and a Workflow condition show), its detail lists them all, so that
 * `lorenz workflow validate` can report each with its line.
 */
export function invalidAll(problems: readonly ConfigProblem[]): LorenzError {
  const [first] = problems;
  const path = first?.path ?? '';
  return new LorenzError(settingErrorCode(path), `${path}: ${first?.rule ?? 'invalid value'}`, {
    path,
    problems,
  });
}

/** The problems an `invalid_workflow_config` error carries (one when it predates the list). */
export function configProblems(error: LorenzError): ConfigProblem[] {
  const listed = error.detail?.problems;
  if (Array.isArray(listed)) return listed as ConfigProblem[];
  const path = typeof error.detail?.path === 'string' ? error.detail.path : '';
  const prefix = `${path}: `;
  const rule = error.message.startsWith(prefix)
    ? error.message.slice(prefix.length)
    : error.message;
  return [{ path, rule }];
}

/** A section as a map: absent or empty (`hooks:` with nothing under it) is {}. */
export function sectionMap(raw: RawMap, key: string, problems: ConfigProblem[]): RawMap {
  const value = raw[key];
  if (value === undefined || value === null) return {};
  if (!isMap(value)) {
    problems.push({ path: key, rule: 'must be a map' });
    return {};
  }
  return value;
}

function joinPath(base: string, segments: readonly PropertyKey[]): string {
  return segments.reduce<string>(
    (path, segment) =>
      typeof segment === 'number' ? `${path}[${segment}]` : `${path}.${String(segment)}`,
    base,
  );
}

/**
 * Validate one section; undefined when it is invalid, each of its issues added to
 * `problems`. `written` maps a canonical key back to the key as the user wrote it (only
 * differs for hook aliases), so errors name what is in the file.
 */
export function parseSection<S extends z.ZodObject>(
  schema: S,
  value: RawMap,
  path: string,
  context: { warnings: string[]; problems: ConfigProblem[] },
  written: Record<string, string> = {},
): z.output<S> | undefined {
  const known = new Set(Object.keys(schema.shape));
  for (const key of Object.keys(value)) {
    if (!known.has(key)) context.warnings.push(`unknown key ${path}.${key}`);
  }
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  for (const issue of result.error.issues) {
    const [head, ...rest] = issue.path;
    const writtenHead =
      head !== undefined && Object.hasOwn(written, String(head)) ? written[String(head)] : head;
    const segments = writtenHead === undefined ? [] : [writtenHead, ...rest];
    context.problems.push({ path: joinPath(path, segments), rule: issue.message });
  }
  return undefined;
}
