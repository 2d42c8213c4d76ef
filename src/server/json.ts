/** Small readers of untyped JSON (IssueRun and Workflow objects, Pods, log records): the view
 * server and the CLI's run commands read what the cluster and the archive hold without
 * trusting its shape. */
export type Json = Record<string, unknown>;

export const isRecord = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export const str = (value: unknown): string | undefined =>
  typeof value === 'string' ? value : undefined;

export const num = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) ? value : undefined;

/** `get(obj, 'status', 'slots')`: the value at a path of record keys. */
export function get(value: unknown, ...keys: string[]): unknown {
  let current = value;
  for (const key of keys) {
    if (!isRecord(current)) return undefined;
    current = current[key];
  }
  return current;
}

/** The fields that hold something: a view's JSON leaves out what is absent or empty. */
export function given<T extends Json>(
  fields: T,
): { [K in keyof T]?: Exclude<T[K], undefined | null | '' | 0 | false> } {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => Boolean(value))) as {
    [K in keyof T]?: Exclude<T[K], undefined | null | '' | 0 | false>;
  };
}

export const records = (value: unknown): Json[] =>
  Array.isArray(value) ? value.filter(isRecord) : [];
