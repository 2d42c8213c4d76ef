import type { Logger } from 'pino';
import type { KubeClient } from './runtime/client.js';
import { FlagError } from './flag-values.js';
import { createPriceTableSource, type PriceTableSource } from './shared/price-table-source.js';

/** Where the price table is (docs/budgets.md): its ConfigMap's name and namespace. */
export interface PriceTableRef {
  name: string;
  namespace?: string;
}

/** `--price-table NAME` or `NAMESPACE/NAME`: the ConfigMap of prices (docs/budgets.md). */
export function priceTableOption(flag: string | undefined): { priceTable?: PriceTableRef } {
  if (flag === undefined || flag === '') return {};
  const parts = flag.split('/');
  const valid = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
  if (parts.length > 2 || !parts.every((part) => valid.test(part))) {
    throw new FlagError(
      `--price-table ${JSON.stringify(flag)}: expected a ConfigMap name, or NAMESPACE/NAME`,
    );
  }
  const [first = '', second] = parts;
  return {
    priceTable: second === undefined ? { name: first } : { namespace: first, name: second },
  };
}

/**
 * The controller's price table: the ConfigMap named, in its namespace when the flag names
 * none (the Pod's, POD_NAMESPACE, else the watched one). Absent: costs are not counted.
 */
export function priceTableSource(
  options: { priceTable?: PriceTableRef | undefined; namespace?: string | undefined },
  client: KubeClient,
  logger: Logger,
): PriceTableSource | undefined {
  if (!options.priceTable) return undefined;
  return createPriceTableSource({
    client,
    name: options.priceTable.name,
    namespace:
      options.priceTable.namespace ?? process.env.POD_NAMESPACE ?? options.namespace ?? 'default',
    logger,
  });
}
