import type { Logger } from 'pino';
import { PRICE_TABLE_KEY, type PriceTable } from '../../workflow/budget.js';
import { errorMessage } from '../../workflow/errors.js';
import { parsePriceTable } from '../../workflow/price-table.js';
import type { KubeClient } from '../runtime/client.js';
import { CONFIGMAPS, isNotFound, resourcePath } from '../runtime/client.js';
import type { ConfigMapObject } from './resources.js';

/**
 * The price table (docs/budgets.md): the ConfigMap `--price-table` names, in the
 * controller's namespace, key PRICE_TABLE_KEY. Read when an attempt is built, at most once
 * per `refreshMs`; a table that does not parse keeps the last good one in force (the error
 * logged once), a ConfigMap that is gone means no prices (tokens only).
 */
export interface PriceTableSource {
  current(): Promise<PriceTable | undefined>;
  /** What is wrong with the table as it stands, if anything (for status messages). */
  problem(): string | undefined;
}

export const PRICE_TABLE_REFRESH_MS = 30_000;

export function createPriceTableSource(options: {
  client: KubeClient;
  namespace: string;
  name: string;
  logger?: Logger | undefined;
  refreshMs?: number;
  now?: () => number;
}): PriceTableSource {
  const refreshMs = options.refreshMs ?? PRICE_TABLE_REFRESH_MS;
  const now = options.now ?? Date.now;
  const where = `ConfigMap ${options.namespace}/${options.name}`;
  let table: PriceTable | undefined;
  let readAt = -Infinity;
  let problem: string | undefined;
  let reading: Promise<void> | undefined;

  const say = (next: string | undefined) => {
    if (next !== undefined && next !== problem) options.logger?.warn({ priceTable: where }, next);
    problem = next;
  };

  async function read(): Promise<void> {
    try {
      const configMap = await options.client.request<ConfigMapObject>({
        method: 'GET',
        path: resourcePath(CONFIGMAPS, options.namespace, options.name),
      });
      const text = configMap.data?.[PRICE_TABLE_KEY];
      if (text === undefined) {
        table = undefined;
        say(`${where} has no key ${PRICE_TABLE_KEY}: costs are not counted`);
        return;
      }
      table = parsePriceTable(text, `${where} key ${PRICE_TABLE_KEY}`);
      say(undefined);
    } catch (error) {
      if (isNotFound(error)) {
        table = undefined;
        say(`${where} does not exist: costs are not counted`);
        return;
      }
      // Unreadable or unparsable: the last good table stays in force.
      say(`${errorMessage(error)}; the last good price table stays in force`);
    } finally {
      readAt = now();
    }
  }

  return {
    async current() {
      if (now() - readAt >= refreshMs) {
        reading ??= read().finally(() => (reading = undefined));
        await reading;
      }
      return table;
    },
    problem: () => problem,
  };
}
