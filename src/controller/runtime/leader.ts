import type { Logger } from 'pino';
import { errorMessage } from '../../workflow/errors.js';
import { sleep } from './backoff.js';
import { isConflict, isNotFound, LEASES, resourcePath, type KubeClient } from './client.js';
import type { RuntimeMetrics } from './metrics.js';

export interface LeaderElectionOptions {
  client: KubeClient;
  namespace: string;
  name: string;
  identity: string;
  /** How long a lease holds without renewal; default 10 s. */
  leaseDurationMs?: number;
  /** A leader that has not renewed for this long steps down; default 7 s. */
  renewDeadlineMs?: number;
  /** Interval between acquire/renew attempts; default 1.5 s. */
  retryPeriodMs?: number;
  onStartedLeading: () => void;
  onStoppedLeading: () => void;
  logger?: Logger;
  metrics?: RuntimeMetrics;
}

export interface LeaderElector {
  /**
   * Tries to acquire, then renews; a leader that cannot renew steps down and becomes a
   * candidate again (the process stays up). Settles once stopped.
   */
  run(): Promise<void>;
  /** Stops; a leader releases the lease (empty holder) so a successor need not wait. */
  stop(options?: { release?: boolean }): Promise<void>;
  isLeader(): boolean;
}

interface LeaseSpec {
  holderIdentity?: string | null;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

interface Lease {
  apiVersion: 'coordination.k8s.io/v1';
  kind: 'Lease';
  metadata: { name: string; namespace: string; resourceVersion?: string };
  spec: LeaseSpec;
}

export const DEFAULT_LEASE = {
  leaseDurationMs: 10_000,
  renewDeadlineMs: 7_000,
  retryPeriodMs: 1_500,
} as const;

/** Lease times are metav1.MicroTime: RFC 3339 with microseconds. */
function microTime(date: Date): string {
  return date.toISOString().replace(/Z$/, '000Z');
}

/**
 * Leader election on a coordination.k8s.io/v1 Lease, as client-go does it: a candidate takes
 * the lease only when it is free or its holder has not renewed it for a lease duration
 * measured on the candidate's own clock (from when it last saw the record change, so clock
 * skew between replicas does not matter); writes use the resourceVersion, so two candidates
 * never both win. The leader renews every retry period and steps down at once when it has
 * not renewed within the renew deadline.
 */
// eslint-disable-next-line max-lines-per-function -- a factory: the closures it returns share the state it keeps
export function createLeaderElector(options: LeaderElectionOptions): LeaderElector {
  // A leader killed without releasing is replaced after at most a lease duration plus a retry
  // period or two (≈ 12 s); a live leader stops acting (renew deadline) well before anyone
  // else may take over (lease duration), so two never act at once.
  const leaseDurationMs = options.leaseDurationMs ?? DEFAULT_LEASE.leaseDurationMs;
  const renewDeadlineMs = options.renewDeadlineMs ?? DEFAULT_LEASE.renewDeadlineMs;
  const retryPeriodMs = options.retryPeriodMs ?? DEFAULT_LEASE.retryPeriodMs;
  const { client, namespace, name, identity, metrics } = options;
  const logger = options.logger?.child({ lease: `${namespace}/${name}`, identity });
  const path = resourcePath(LEASES, namespace, name);
  const stopper = new AbortController();
  let leader = false;
  let observed: { record: string; at: number } | undefined;
  let current: Lease | undefined;
  let running: Promise<void> | undefined;

  const setLeader = (value: boolean) => {
    leader = value;
    metrics?.leaderStatus.set({ name }, value ? 1 : 0);
  };

  const requestSignal = () =>
    AbortSignal.any([stopper.signal, AbortSignal.timeout(renewDeadlineMs)]);

  /** One attempt to take or keep the lease; true when we hold it afterwards. */
  async function tryAcquireOrRenew(): Promise<boolean> {
    const now = new Date();
    let lease: Lease;
    try {
      lease = await client.request<Lease>({ path, signal: requestSignal() });
    } catch (error) {
      if (!isNotFound(error)) throw error;
      const created = await client.request<Lease>({
        method: 'POST',
        path: resourcePath(LEASES, namespace),
        body: {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name, namespace },
          spec: {
            holderIdentity: identity,
            leaseDurationSeconds: Math.ceil(leaseDurationMs / 1000),
            acquireTime: microTime(now),
            renewTime: microTime(now),
            leaseTransitions: 0,
          },
        },
        signal: requestSignal(),
      });
      current = created;
      return true;
    }
    const spec = lease.spec ?? {};
    const record = JSON.stringify([spec.holderIdentity, spec.renewTime, spec.leaseDurationSeconds]);
    if (observed?.record !== record) observed = { record, at: Date.now() };
    const holder = spec.holderIdentity ?? '';
    const durationMs = (spec.leaseDurationSeconds ?? leaseDurationMs / 1000) * 1000;
    if (holder !== '' && holder !== identity && Date.now() < observed.at + durationMs) return false;

    const takingOver = holder !== identity;
    const next: Lease = {
      ...lease,
      spec: {
        ...spec,
        holderIdentity: identity,
        leaseDurationSeconds: Math.ceil(leaseDurationMs / 1000),
        renewTime: microTime(now),
        ...(takingOver
          ? {
              acquireTime: microTime(now),
              leaseTransitions: (spec.leaseTransitions ?? 0) + (holder ? 1 : 0),
            }
          : {}),
      },
    };
    current = await client.request<Lease>({
      method: 'PUT',
      path,
      body: next,
      signal: requestSignal(),
    });
    return true;
  }

  /** held: the lease is ours; other: someone else holds it; error: we could not tell. */
  async function attempt(): Promise<'held' | 'other' | 'error'> {
    try {
      return (await tryAcquireOrRenew()) ? 'held' : 'other';
    } catch (error) {
      if (!stopper.signal.aborted && !isConflict(error)) {
        logger?.warn({ err: error }, `lease update failed: ${errorMessage(error)}`);
      }
      return 'error';
    }
  }

  /** Jitter so that candidates do not retry in lock step. */
  const jittered = () => retryPeriodMs * (1 + Math.random() * 0.2);

  /** One term: acquire, then renew until the renewals fail. */
  async function term(): Promise<void> {
    setLeader(false);
    while (!stopper.signal.aborted && (await attempt()) !== 'held')
      await sleep(jittered(), stopper.signal);
    if (stopper.signal.aborted) return;
    setLeader(true);
    logger?.info('became leader');
    options.onStartedLeading();
    let lastRenew = Date.now();
    while (!stopper.signal.aborted) {
      await sleep(retryPeriodMs, stopper.signal);
      if (stopper.signal.aborted) break;
      const outcome = await attempt();
      if (outcome === 'held') lastRenew = Date.now();
      else if (stopper.signal.aborted) break;
      else if (outcome === 'other' || Date.now() - lastRenew >= renewDeadlineMs) {
        setLeader(false);
        logger?.warn({ outcome }, 'leadership lost; standing as a candidate again');
        options.onStoppedLeading();
        return;
      }
    }
  }

  async function run(): Promise<void> {
    while (!stopper.signal.aborted) await term();
  }

  async function release(): Promise<void> {
    if (!current || current.spec.holderIdentity !== identity) return;
    try {
      await client.request({
        method: 'PUT',
        path,
        body: {
          ...current,
          spec: {
            ...current.spec,
            holderIdentity: '',
            leaseDurationSeconds: 1,
            renewTime: microTime(new Date()),
          },
        },
        signal: AbortSignal.timeout(renewDeadlineMs),
      });
      logger?.info('lease released');
    } catch (error) {
      logger?.warn({ err: error }, `lease release failed: ${errorMessage(error)}`);
    }
  }

  return {
    run() {
      running ??= run();
      return running;
    },
    async stop(stopOptions = {}) {
      stopper.abort();
      await running;
      const wasLeader = leader;
      if (wasLeader) {
        setLeader(false);
        options.onStoppedLeading();
      }
      if (wasLeader && stopOptions.release !== false) await release();
    },
    isLeader: () => leader,
  };
}
