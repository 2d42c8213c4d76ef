import type { FetchOptions } from '../types.js';
import { type LinearTransport, isJsonMap, linearRequest, trackerFailure } from './transport.js';

/** Reads `path` of a GraphQL answer, or undefined where a step is missing. */
export function dig(data: unknown, ...path: string[]): unknown {
  let value = data;
  for (const key of path) value = isJsonMap(value) ? value[key] : undefined;
  return value;
}

export interface ConnectionQuery {
  query: string;
  variables: Record<string, unknown>;
  /** Where the connection sits in the answer, e.g. ['issue', 'comments']. */
  path: string[];
  /** For messages: "comments of issue X". */
  what: string;
  pageSize: number;
  maxPages: number;
}

/**
 * Every node of a nested connection, following pageInfo.endCursor; the same guards as the
 * issue pages (no cursor, a repeated cursor, too many pages → `tracker_pagination`), since a
 * broken connection would otherwise loop a tool call forever.
 */
export async function allNodes(
  transport: LinearTransport,
  request: ConnectionQuery,
  options: FetchOptions = {},
): Promise<unknown[]> {
  const nodes: unknown[] = [];
  const cursors = new Set<string>();
  let after: string | null = null;
  for (let page = 1; page <= request.maxPages; page += 1) {
    const variables = { ...request.variables, first: request.pageSize, after };
    const data = await linearRequest(transport, request.query, variables, options.signal);
    const connection = dig(data, ...request.path);
    const more = dig(connection, 'pageInfo', 'hasNextPage');
    const pageNodes = dig(connection, 'nodes');
    if (!Array.isArray(pageNodes) || typeof more !== 'boolean') {
      throw trackerFailure(
        transport,
        'tracker_response',
        `Linear answered ${request.what} without a page`,
      );
    }
    nodes.push(...(pageNodes as unknown[]));
    if (!more) return nodes;
    const cursor = dig(connection, 'pageInfo', 'endCursor');
    if (typeof cursor !== 'string' || cursor === '' || cursors.has(cursor)) {
      throw trackerFailure(
        transport,
        'tracker_pagination',
        `Linear's pages of ${request.what} do not link up (page ${page})`,
        { page },
      );
    }
    cursors.add(cursor);
    after = cursor;
  }
  throw trackerFailure(
    transport,
    'tracker_pagination',
    `Linear kept offering pages of ${request.what} past ${request.maxPages}`,
    { maxPages: request.maxPages },
  );
}
