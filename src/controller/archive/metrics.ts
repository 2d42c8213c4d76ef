import { Counter, Gauge, type Registry } from 'prom-client';

/** The archiver's metrics, on the manager's registry (served at /metrics). */
export interface ArchiveMetrics {
  /** Records written, by kind: run, attempt, events, log, deleted. */
  writes: Counter<'kind'>;
  /** Failed writes, by ArchiveError code (`unknown` for anything else). */
  failures: Counter<'code'>;
  /** Runs let go unarchived after --archive-give-up-after. */
  abandoned: Counter;
  /** Bytes of Pod logs dropped while the store could not take them. */
  droppedLogBytes: Counter;
}

/**
 * `pending` is read at each scrape: the runs waiting to be archived (ended or being deleted,
 * not written yet), with when each began to wait; the lag is the oldest one's age.
 */
export function createArchiveMetrics(
  registry: Registry,
  pending: () => Iterable<number>,
  now: () => number = Date.now,
): ArchiveMetrics {
  const registers = [registry];
  new Gauge({
    name: 'lorenz_archive_lag_seconds',
    help: 'Age of the oldest run waiting to be archived (0 when none waits).',
    registers,
    collect(this: Gauge) {
      const since = Math.min(...pending());
      this.set(Number.isFinite(since) ? Math.max(0, (now() - since) / 1000) : 0);
    },
  });
  new Gauge({
    name: 'lorenz_archive_pending_runs',
    help: 'Runs ended or being deleted whose archive is not written yet.',
    registers,
    collect(this: Gauge) {
      this.set([...pending()].length);
    },
  });
  return {
    writes: new Counter({
      name: 'lorenz_archive_writes_total',
      help: 'Records written to the run archive, by kind.',
      labelNames: ['kind'],
      registers,
    }),
    failures: new Counter({
      name: 'lorenz_archive_failures_total',
      help: 'Failed writes to the run archive, by error code.',
      labelNames: ['code'],
      registers,
    }),
    abandoned: new Counter({
      name: 'lorenz_archive_abandoned_total',
      help: 'Runs released unarchived after --archive-give-up-after (each with an ArchiveAbandoned Event).',
      registers,
    }),
    droppedLogBytes: new Counter({
      name: 'lorenz_archive_log_dropped_bytes_total',
      help: 'Bytes of Pod logs dropped while the archive could not take them.',
      registers,
    }),
  };
}
