// What the chaos suite counts, read from what the cluster kept: the IssueRuns, their hook
// Events, and the apiserver's audit log of every write the controller replicas made.
import { readFile } from 'node:fs/promises';
import type { IssueRun } from '../../src/api/index.js';
import type { KubeClient } from '../../src/controller/runtime/client.js';
import { NAMESPACE } from './env.js';

export const HOOKS = ['after_create', 'before_run', 'after_run', 'before_remove'] as const;

export interface RunLedger {
  /** IssueRuns the suite created. */
  runs: number;
  /** Created and gone (nobody deleted them). */
  lost: number;
  /** Not Finished=True when the suite stopped waiting. */
  unfinished: number;
  /** Finished with another phase than Succeeded: `reason` → count. */
  failed: Record<string, number>;
  /** Pod names created (201) more than once: one attempt run twice. */
  duplicatePods: number;
  /** Runs on a second attempt although no attempt failed: the controller lost track. */
  extraAttempts: number;
  /** The same hook's Event (reason, attempt) written twice for one run. */
  duplicateHookEvents: number;
  /** Hook Events a succeeded run should have and does not have. */
  missingHookEvents: number;
  /** Runs with a problem, by problem (the first few names), for the logs. */
  examples: Record<string, string[]>;
  /**
   * Where the first few unfinished runs stood when the suite stopped waiting (their phase,
   * reason and slots), so that a failure says what it was waiting for.
   */
  stuck: string[];
  /** The last Finished transition, ms since the epoch (second precision: the API's). */
  lastFinishedAt: number;
}

interface AuditEvent {
  stage?: string;
  verb?: string;
  user?: { username?: string };
  objectRef?: { resource?: string; subresource?: string; namespace?: string; name?: string };
  responseStatus?: { code?: number };
  requestReceivedTimestamp?: string;
}

export async function readAudit(logPath: string): Promise<AuditEvent[]> {
  const text = await readFile(logPath, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as AuditEvent)
    .filter((event) => event.stage === 'ResponseComplete');
}

/** Completed writes: who, what, when (the audit log's time of receipt). */
export interface AuditedWrite {
  user: string;
  verb: string;
  resource: string;
  name: string;
  code: number;
  at: number;
}

export async function auditedWrites(logPath: string): Promise<AuditedWrite[]> {
  return (await readAudit(logPath)).map((event) => ({
    user: event.user?.username ?? '',
    verb: event.verb ?? '',
    resource: `${event.objectRef?.resource ?? ''}${event.objectRef?.subresource ? `/${event.objectRef.subresource}` : ''}`,
    name: event.objectRef?.name ?? '',
    code: event.responseStatus?.code ?? 0,
    at: Date.parse(event.requestReceivedTimestamp ?? ''),
  }));
}

/** A replica's time holding the Lease: from its acquireTime to its kill (ms since epoch). */
export interface Term {
  identity: string;
  user: string;
  from: number;
  to: number;
}

/** A request sent just before the kill may be received just after it. */
export const IN_FLIGHT_MS = 1_000;

/** Writes (Lease writes aside) a replica's user made while none of its terms was on. */
export function writesOutsideTerms(
  writes: readonly AuditedWrite[],
  terms: readonly Term[],
): AuditedWrite[] {
  return writes.filter(
    (write) =>
      write.resource !== 'leases' &&
      !terms.some(
        (term) =>
          term.user === write.user && write.at >= term.from && write.at <= term.to + IN_FLIGHT_MS,
      ),
  );
}

interface EventItem {
  metadata: { name: string };
  reason: string;
  note?: string;
  regarding?: { name?: string; kind?: string };
  series?: { count?: number };
  deprecatedCount?: number;
}

const isFinished = (run: IssueRun) =>
  run.status?.conditions?.some((c) => c.type === 'Finished' && c.status === 'True') ?? false;

/** Reads the run prefix's IssueRuns and Events, and the audit log, into the ledger. */
export async function takeLedger(
  admin: KubeClient,
  auditLog: string,
  names: readonly string[],
  options: { failuresExpected?: boolean } = {},
): Promise<RunLedger> {
  const runs = await admin.request<{ items: IssueRun[] }>({
    path: `/apis/lorenz.dev/v1alpha1/namespaces/${NAMESPACE}/issueruns`,
  });
  const byName = new Map(runs.items.map((run) => [run.metadata.name ?? '', run]));
  const events = await admin.request<{ items: EventItem[] }>({
    path: `/apis/events.k8s.io/v1/namespaces/${NAMESPACE}/events`,
  });
  const wanted = new Set(names);
  const ledger: RunLedger = {
    runs: names.length,
    lost: 0,
    unfinished: 0,
    failed: {},
    duplicatePods: 0,
    extraAttempts: 0,
    duplicateHookEvents: 0,
    missingHookEvents: 0,
    lastFinishedAt: 0,
    examples: {},
    stuck: [],
  };
  const example = (problem: string, name: string) => {
    const list = (ledger.examples[problem] ??= []);
    if (list.length < 5 && !list.includes(name)) list.push(name);
  };
  for (const name of names) {
    const run = byName.get(name);
    if (!run) {
      ledger.lost += 1;
      example('lost', name);
      continue;
    }
    if (!isFinished(run)) {
      ledger.unfinished += 1;
      example('unfinished', name);
      if (ledger.stuck.length < 5) ledger.stuck.push(`${name}: ${whereItStands(run)}`);
      continue;
    }
    const finished = run.status?.conditions?.find((c) => c.type === 'Finished');
    ledger.lastFinishedAt = Math.max(
      ledger.lastFinishedAt,
      Date.parse(String(finished?.lastTransitionTime ?? '')) || 0,
    );
    if (run.status?.phase !== 'Succeeded') {
      const reason = run.status?.reason ?? 'unknown';
      ledger.failed[reason] = (ledger.failed[reason] ?? 0) + 1;
    } else if ((run.status?.attempt ?? 1) > 1 && !options.failuresExpected) {
      ledger.extraAttempts += 1;
    }
  }

  // Hook Events: one per (run, attempt, reason, hook). A second is a hook reported twice.
  const seen = new Map<string, number>();
  for (const event of events.items) {
    const run = event.regarding?.name ?? '';
    if (!wanted.has(run) || !event.reason.startsWith('Hook')) continue;
    const attempt = event.metadata.name.split('.').at(-1)?.split('-')[1] ?? '?';
    const hook = (event.note ?? '').split(' ')[0];
    const key = `${run}|${attempt}|${event.reason}|${hook}`;
    const count = Math.max(1, event.series?.count ?? 0, event.deprecatedCount ?? 0);
    seen.set(key, (seen.get(key) ?? 0) + count);
  }
  for (const [key, count] of seen) {
    ledger.duplicateHookEvents += count - 1;
    if (count > 1) example('duplicate hook Events', key.split('|')[0] ?? '');
  }
  for (const name of names) {
    const run = byName.get(name);
    if (run?.status?.phase !== 'Succeeded') continue;
    const attempt = String(run.status.attempt ?? 1);
    for (const hook of HOOKS) {
      for (const reason of ['HookStarted', 'HookSucceeded']) {
        if (seen.has(`${name}|${attempt}|${reason}|${hook}`)) continue;
        ledger.missingHookEvents += 1;
        example('missing hook Events', name);
      }
    }
  }

  // Pods: the names are deterministic (run, slot, attempt); a second 201 for one is a
  // second Pod for one attempt.
  const created = new Map<string, number>();
  for (const write of await auditedWrites(auditLog)) {
    if (write.verb !== 'create' || write.resource !== 'pods' || write.code !== 201) continue;
    created.set(write.name, (created.get(write.name) ?? 0) + 1);
  }
  for (const [pod, count] of created) {
    if (count < 2 || !names.some((name) => pod.startsWith(`${name}-`))) continue;
    ledger.duplicatePods += count - 1;
    example('duplicate Pods', pod);
  }
  return ledger;
}

/** An unfinished run's phase, reason and slots, in one line. */
function whereItStands(run: IssueRun): string {
  const status = run.status;
  const slots = (status?.slots ?? []).map(
    (slot) =>
      `slot ${slot.slot} ${slot.podName ?? 'no Pod'} ${slot.phase ?? '?'} ${slot.reason ?? ''}: ${slot.message ?? ''}`,
  );
  return [`${status?.phase ?? 'no phase'} ${status?.reason ?? ''}`.trim(), ...slots].join('; ');
}

/** Names of what the ledger says went wrong: empty when every promise was kept. */
export function brokenPromises(ledger: RunLedger, allowFailures = false): string[] {
  const broken: string[] = [];
  if (ledger.lost) broken.push(`${ledger.lost} run(s) lost`);
  if (ledger.unfinished) broken.push(`${ledger.unfinished} run(s) never Finished`);
  if (ledger.duplicatePods) broken.push(`${ledger.duplicatePods} duplicate Pod(s)`);
  if (ledger.extraAttempts) broken.push(`${ledger.extraAttempts} run(s) on an extra attempt`);
  if (ledger.duplicateHookEvents)
    broken.push(`${ledger.duplicateHookEvents} duplicate hook Event(s)`);
  if (ledger.missingHookEvents) broken.push(`${ledger.missingHookEvents} missing hook Event(s)`);
  if (broken.length > 0) broken.push(`examples: ${JSON.stringify(ledger.examples)}`);
  if (ledger.stuck.length > 0) broken.push(`unfinished: ${ledger.stuck.join(' | ')}`);
  const failed = Object.entries(ledger.failed);
  if (!allowFailures && failed.length > 0)
    broken.push(`failed runs: ${failed.map(([reason, n]) => `${reason} ×${n}`).join(', ')}`);
  return broken;
}
