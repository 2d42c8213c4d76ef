// The pages and their URLs: every page (and every filter) lives in the URL so that it can be
// shared. Pure: the unit tests parse and format without a browser.

export const RUN_FILTER_KEYS = [
  'namespace',
  'workflow',
  'phase',
  'reason',
  'issue',
  'since',
  'until',
  'source',
] as const;
export type RunFilterKey = (typeof RUN_FILTER_KEYS)[number];
export type RunFilters = Partial<Record<RunFilterKey, string>>;

export const USAGE_FILTER_KEYS = ['namespace', 'workflow', 'from', 'to'] as const;
export type UsageFilters = Partial<Record<(typeof USAGE_FILTER_KEYS)[number], string>>;

export type Route =
  | { page: 'overview' }
  | { page: 'runs'; filters: RunFilters }
  | { page: 'run'; namespace: string; name: string; uid?: string }
  | { page: 'usage'; filters: UsageFilters }
  | { page: 'not_found'; path: string };

function pick<K extends string>(
  params: URLSearchParams,
  keys: readonly K[],
): Partial<Record<K, string>> {
  const out: Partial<Record<K, string>> = {};
  for (const key of keys) {
    const value = params.get(key);
    if (value) out[key] = value;
  }
  return out;
}

function decode(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

export function parseRoute(pathname: string, search: string): Route {
  const params = new URLSearchParams(search);
  const path = pathname.replace(/\/+$/, '') || '/';
  if (path === '/') return { page: 'overview' };
  if (path === '/runs') return { page: 'runs', filters: pick(params, RUN_FILTER_KEYS) };
  if (path === '/usage') return { page: 'usage', filters: pick(params, USAGE_FILTER_KEYS) };
  const run = /^\/runs\/([^/]+)\/([^/]+)$/.exec(path);
  if (run) {
    const namespace = decode(run[1] ?? '');
    const name = decode(run[2] ?? '');
    if (namespace && name) {
      const uid = params.get('uid');
      return uid ? { page: 'run', namespace, name, uid } : { page: 'run', namespace, name };
    }
  }
  return { page: 'not_found', path: pathname };
}

function query(filters: Record<string, string | undefined>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(filters)) if (value) params.set(key, value);
  const text = params.toString();
  return text ? `?${text}` : '';
}

export function runsUrl(filters: RunFilters = {}): string {
  return `/runs${query(filters)}`;
}

export function runUrl(namespace: string, name: string, uid?: string): string {
  return `/runs/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}${query({ uid })}`;
}

export function usageUrl(filters: UsageFilters = {}): string {
  return `/usage${query(filters)}`;
}

/** The query string of an API call: the set values only. */
export function apiQuery(filters: Record<string, string | number | undefined>): string {
  const strings: Record<string, string | undefined> = {};
  for (const [key, value] of Object.entries(filters))
    strings[key] = value === undefined ? undefined : String(value);
  return query(strings);
}
