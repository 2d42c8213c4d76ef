import type { LogFilter, RunQuery, UsageQuery } from '../archive/types.js';
import { badParameter } from './errors.js';

/**
 * The read API's query parameters, checked one by one: an unknown parameter, a repeated one
 * or a value of the wrong shape is a 400 naming it, never a query the store sees.
 */
const NAMESPACE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;
const REASON = /^[A-Za-z][A-Za-z0-9]{0,127}$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const DAY = /^\d{4}-\d{2}-\d{2}$/;
const PHASES = ['Pending', 'Running', 'Succeeded', 'Failed'];

type Params = Map<string, string>;

/** The parameters of a URL, each once and each among `allowed`. */
export function paramsOf(url: URL, allowed: readonly string[]): Params {
  const params: Params = new Map();
  for (const [key, value] of url.searchParams) {
    if (!allowed.includes(key))
      throw badParameter(key, `unknown (this endpoint takes ${allowed.join(', ') || 'none'})`);
    if (params.has(key)) throw badParameter(key, 'given more than once');
    params.set(key, value);
  }
  return params;
}

function pattern(params: Params, key: string, re: RegExp, want: string): string | undefined {
  const value = params.get(key);
  if (value === undefined) return undefined;
  if (!re.test(value)) throw badParameter(key, `want ${want}, got ${JSON.stringify(value)}`);
  return value;
}

export const namespaceParam = (params: Params, key = 'namespace'): string | undefined =>
  pattern(params, key, NAMESPACE, 'a namespace name');

function timeParam(params: Params, key: string): string | undefined {
  const value = pattern(params, key, RFC3339, 'an RFC 3339 time');
  if (value !== undefined && Number.isNaN(Date.parse(value)))
    throw badParameter(key, `not a real time: ${JSON.stringify(value)}`);
  return value === undefined ? undefined : new Date(value).toISOString();
}

function dayParam(params: Params, key: string): string | undefined {
  const value = pattern(params, key, DAY, 'a day YYYY-MM-DD');
  if (value !== undefined && Number.isNaN(Date.parse(`${value}T00:00:00Z`)))
    throw badParameter(key, `not a real day: ${JSON.stringify(value)}`);
  return value;
}

function integerParam(params: Params, key: string, min: number, max: number): number | undefined {
  const value = params.get(key);
  if (value === undefined) return undefined;
  const number = /^\d{1,7}$/.test(value) ? Number(value) : NaN;
  if (!(number >= min && number <= max))
    throw badParameter(key, `want an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
  return number;
}

function boolParam(params: Params, key: string): boolean | undefined {
  const value = params.get(key);
  if (value === undefined) return undefined;
  if (value !== 'true' && value !== 'false')
    throw badParameter(key, `want true or false, got ${JSON.stringify(value)}`);
  return value === 'true';
}

function textParam(params: Params, key: string, max: number): string | undefined {
  const value = params.get(key);
  if (value === undefined) return undefined;
  if (value.length === 0 || value.length > max)
    throw badParameter(key, `want 1 to ${max} characters, got ${value.length}`);
  return value;
}

export const RUNS_PARAMS = [
  'namespace',
  'workflow',
  'issue',
  'phase',
  'reason',
  'since',
  'until',
  'limit',
  'continue',
  'deleted',
] as const;

/** The parameters of GET /api/v1/runs for a query, as the read API's clients send them. */
export function runsParamsOf(
  namespace: string | undefined,
  query: RunQuery,
): Record<string, string | undefined> {
  return {
    namespace,
    workflow: query.workflow,
    issue: query.issue,
    phase: query.phase,
    reason: query.reason,
    since: query.since,
    until: query.until,
    limit: query.limit === undefined ? undefined : String(query.limit),
    continue: query.continue,
    deleted: query.includeLive === false ? 'true' : undefined,
  };
}

/**
 * The two ends of a range (since and until, from and to), each optional and read by `read`;
 * the second may not come before the first (both compare as text: RFC 3339 UTC, YYYY-MM-DD).
 */
function rangeParams(
  params: Params,
  first: string,
  second: string,
  read: (params: Params, key: string) => string | undefined,
): [string | undefined, string | undefined] {
  const start = read(params, first);
  const end = read(params, second);
  if (start !== undefined && end !== undefined && start > end)
    throw badParameter(second, `is before ${first} (${start})`);
  return [start, end];
}

/** The path of one run of the read API (its log is below it). */
export const archiveRunPath = (namespace: string, name: string): string =>
  `/api/v1/namespaces/${encodeURIComponent(namespace)}/runs/${encodeURIComponent(name)}`;

/** GET /api/v1/runs: the query (its namespace apart: the caller decides which it may see). */
export function runQueryOf(params: Params): { namespace?: string; query: RunQuery } {
  const namespace = namespaceParam(params);
  const phase = params.get('phase');
  if (phase !== undefined && !PHASES.includes(phase))
    throw badParameter('phase', `want one of ${PHASES.join(', ')}, got ${JSON.stringify(phase)}`);
  const query: RunQuery = {};
  const workflow = pattern(params, 'workflow', SUBDOMAIN, 'a Workflow name');
  if (workflow !== undefined) query.workflow = workflow;
  const issue = textParam(params, 'issue', 256);
  if (issue !== undefined) query.issue = issue;
  if (phase !== undefined) query.phase = phase;
  const reason = pattern(params, 'reason', REASON, 'a CamelCase reason');
  if (reason !== undefined) query.reason = reason;
  const [since, until] = rangeParams(params, 'since', 'until', timeParam);
  if (since !== undefined) query.since = since;
  if (until !== undefined) query.until = until;
  const limit = integerParam(params, 'limit', 1, 1000);
  if (limit !== undefined) query.limit = limit;
  const next = textParam(params, 'continue', 4096);
  if (next !== undefined) query.continue = next;
  // deleted=true: only runs gone from the cluster; otherwise every archived run.
  if (boolParam(params, 'deleted') === true) query.includeLive = false;
  return { ...(namespace ? { namespace } : {}), query };
}

export const USAGE_PARAMS = ['namespace', 'workflow', 'from', 'to'] as const;

export function usageQueryOf(params: Params): { namespace?: string; query: UsageQuery } {
  const namespace = namespaceParam(params);
  const query: UsageQuery = {};
  const workflow = pattern(params, 'workflow', SUBDOMAIN, 'a Workflow name');
  if (workflow !== undefined) query.workflow = workflow;
  const [from, to] = rangeParams(params, 'from', 'to', dayParam);
  if (from !== undefined) query.from = from;
  if (to !== undefined) query.to = to;
  return { ...(namespace ? { namespace } : {}), query };
}

export const LOG_PARAMS = ['slot', 'attempt', 'uid'] as const;

export function logFilterOf(params: Params): LogFilter {
  const filter: LogFilter = {};
  const slot = integerParam(params, 'slot', 0, 1000);
  if (slot !== undefined) filter.slot = slot;
  const attempt = integerParam(params, 'attempt', 1, 1_000_000);
  if (attempt !== undefined) filter.attempt = attempt;
  return filter;
}

/** A run's name in a path segment: an object name (DNS subdomain). */
export function runNameOf(segment: string): string {
  let name: string;
  try {
    name = decodeURIComponent(segment);
  } catch {
    throw badParameter('name', 'not a valid path segment');
  }
  if (!SUBDOMAIN.test(name))
    throw badParameter('name', `not an object name: ${JSON.stringify(name)}`);
  return name;
}

export const uidOf = (params: Params): string | undefined =>
  pattern(params, 'uid', /^[0-9A-Za-z-]{1,64}$/, 'an object uid');
