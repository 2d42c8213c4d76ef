import {
  InboxReasons,
  inboxRequestAnnotation,
  inboxSteeredAnnotation,
  type InboxDecision,
  type InboxRequest,
  type IssueRun,
  type PolicyReport,
  type SteerDelivery,
} from '../../api/index.js';
import type { InboxStore, VerifiedRun } from '../../tools/index.js';
import { createBoundedCache } from '../../workflow/bounded-cache.js';
import type { KubeClient } from '../runtime/client.js';
import { resourcePath } from '../runtime/client.js';
import type { Informer } from '../runtime/informer.js';
import { ISSUERUNS } from '../shared/resources.js';
import type { RunEventWriter } from './run-event.js';

/**
 * The gateway's inbox on the IssueRuns (src/api/inbox.ts, the flow at its top): requests go
 * to annotations by merge patch (a metadata write no status write can wipe), decisions and
 * steers are read from the informer's cache, and a slot's steer mark is an annotation too.
 * Every replica serves it; only what this replica itself wrote is remembered in memory,
 * to bridge the moment before its own patch comes back through the informer.
 */
export interface InboxStoreOptions {
  client: KubeClient;
  issueRuns: Informer<IssueRun>;
  event: RunEventWriter;
}

/** Entries kept of this replica's own writes (request ids, steer marks); the least recently used go first. */
const REMEMBERED = 4096;
const TITLE_IN_NOTE = 256;

const keyOf = (namespace: string | undefined, name: string | undefined): string =>
  `${namespace ?? ''}/${name ?? ''}`;

/** A steer mark as stored: a decimal string; anything else counts as nothing taken. */
const markOf = (value: string | undefined): number => {
  const mark = value !== undefined && /^\d{1,15}$/.test(value) ? Number(value) : 0;
  return Number.isSafeInteger(mark) ? mark : 0;
};

function policyNote(report: PolicyReport): string {
  const { request } = report;
  const title =
    request.title.length > TITLE_IN_NOTE
      ? `${request.title.slice(0, TITLE_IN_NOTE)}…`
      : request.title;
  const rule = request.rule === undefined ? 'the default' : `rule ${request.rule}`;
  return `${request.kind} ${request.id} (attempt ${request.attempt}, slot ${request.slot}): ${title}; ${report.outcome} by ${rule}, via ${report.via}`;
}

export interface ControllerInboxStore extends InboxStore {
  /** How many long polls wait for a change now; none is left behind when they end. */
  waiting(): number;
}

// eslint-disable-next-line max-lines-per-function -- a factory: the closures it returns share the state it keeps
export function createInboxStore(options: InboxStoreOptions): ControllerInboxStore {
  const { client, issueRuns } = options;
  const waiting = new Map<string, Set<() => void>>();
  const stored = createBoundedCache<string, true>(REMEMBERED);
  const marks = createBoundedCache<string, number>(REMEMBERED);
  /** Steer hand-outs of one slot run one at a time here, so two calls never take the same. */
  const queues = new Map<string, Promise<unknown>>();

  const wake = (run: IssueRun): void => {
    const key = keyOf(run.metadata.namespace, run.metadata.name);
    for (const waiter of [...(waiting.get(key) ?? [])]) waiter();
  };
  issueRuns.onUpdate((_previous, run) => wake(run));
  issueRuns.onDelete((run) => wake(run));

  /** The cached run, if it is still the one the token was minted for (same uid). */
  const current = (run: VerifiedRun): IssueRun | undefined => {
    const cached = issueRuns.get(run.namespace, run.run);
    return cached?.metadata.uid === run.resolved.uid ? cached : undefined;
  };

  /** A merge patch of annotations; the uid in the body makes it a precondition (409 else). */
  const annotate = (run: VerifiedRun, annotations: Record<string, string>) =>
    client.request({
      method: 'PATCH',
      path: resourcePath(ISSUERUNS, run.namespace, run.run),
      patchType: 'merge',
      body: { metadata: { uid: run.resolved.uid, annotations } },
    });

  const known = (run: VerifiedRun, id: string): boolean => {
    const cached = current(run);
    const inbox = cached?.status?.inbox;
    return (
      stored.get(`${run.resolved.uid}/${id}`) !== undefined ||
      cached?.metadata.annotations?.[inboxRequestAnnotation(id)] !== undefined ||
      (inbox?.pending ?? []).some((pending) => pending.id === id) ||
      (inbox?.decided ?? []).some((decision) => decision.requestId === id)
    );
  };

  async function handOut(run: VerifiedRun, slot: number): Promise<SteerDelivery[]> {
    const cached = current(run);
    const key = `${run.resolved.uid}/${slot}`;
    const mark = Math.max(
      markOf(cached?.metadata.annotations?.[inboxSteeredAnnotation(slot)]),
      marks.get(key) ?? 0,
    );
    const fresh = (cached?.status?.inbox?.steers ?? [])
      .filter((steer) => steer.seq > mark)
      .sort((a, b) => a.seq - b.seq);
    const last = fresh.at(-1);
    if (last === undefined) return [];
    // The mark is written before the steers are handed: a steer may be lost to a crash in
    // between, but never given to the agent twice.
    await annotate(run, { [inboxSteeredAnnotation(slot)]: String(last.seq) });
    marks.set(key, last.seq);
    options.event({
      namespace: run.namespace,
      run: run.run,
      uid: run.resolved.uid,
      kind: 'inbox',
      action: 'DeliverSteer',
      reason: InboxReasons.SteerDelivered,
      type: 'Normal',
      note: `${fresh.length === 1 ? 'steer' : 'steers'} ${fresh.map((steer) => steer.seq).join(', ')} handed to slot ${slot} (attempt ${run.attempt}) for its next turn`,
    });
    return fresh.map(({ seq, text, by }) => (by === undefined ? { seq, text } : { seq, text, by }));
  }

  return {
    async storeRequest(run: VerifiedRun, request: InboxRequest) {
      if (known(run, request.id)) return;
      await annotate(run, { [inboxRequestAnnotation(request.id)]: JSON.stringify(request) });
      stored.set(`${run.resolved.uid}/${request.id}`, true);
    },

    decisionOf(run: VerifiedRun, requestId: string): InboxDecision | null {
      const decided = current(run)?.status?.inbox?.decided ?? [];
      return decided.find((decision) => decision.requestId === requestId) ?? null;
    },

    nextChange(run: VerifiedRun, signal: AbortSignal) {
      const key = keyOf(run.namespace, run.run);
      return new Promise<void>((resolve) => {
        const done = () => {
          const set = waiting.get(key);
          set?.delete(done);
          if (set?.size === 0) waiting.delete(key);
          signal.removeEventListener('abort', done);
          resolve();
        };
        if (signal.aborted) return resolve();
        const set = waiting.get(key) ?? new Set();
        set.add(done);
        waiting.set(key, set);
        signal.addEventListener('abort', done, { once: true });
      });
    },

    takeSteers(run: VerifiedRun, slot: number) {
      const key = `${run.resolved.uid}/${slot}`;
      const previous = queues.get(key) ?? Promise.resolve();
      const next = previous.catch(() => undefined).then(() => handOut(run, slot));
      queues.set(key, next);
      const clear = () => {
        if (queues.get(key) === next) queues.delete(key);
      };
      void next.then(clear, clear);
      return next;
    },

    policyDecided(run: VerifiedRun, report: PolicyReport) {
      const allowed = report.outcome === 'allow';
      options.event({
        namespace: run.namespace,
        run: run.run,
        uid: run.resolved.uid,
        kind: 'inbox',
        action: 'DecideApproval',
        reason: allowed
          ? InboxReasons.ApprovalAllowedByPolicy
          : InboxReasons.ApprovalDeniedByPolicy,
        type: allowed ? 'Normal' : 'Warning',
        note: policyNote(report),
      });
    },

    waiting() {
      let count = 0;
      for (const set of waiting.values()) count += set.size;
      return count;
    },
  };
}
