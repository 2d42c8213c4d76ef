import type { KubeClient, RequestOptions } from './client.js';

/** How many of the last writes are kept for accounting. */
const WRITE_LOG_SIZE = 1000;

/** A client that counts the writes made through it (for the API-writes target), unchanged. */
export function countingClient(client: KubeClient): {
  client: KubeClient;
  writes: () => number;
  writeLog: () => string[];
} {
  let writes = 0;
  const log: string[] = [];
  return {
    client: {
      request<T>(options: RequestOptions): Promise<T> {
        if ((options.method ?? 'GET') !== 'GET') {
          writes += 1;
          log.push(`${options.method} ${options.path}`);
          if (log.length > WRITE_LOG_SIZE) log.shift();
        }
        return client.request<T>(options);
      },
      stream: (options) => client.stream(options),
      close: () => client.close(),
    },
    writes: () => writes,
    writeLog: () => [...log],
  };
}
