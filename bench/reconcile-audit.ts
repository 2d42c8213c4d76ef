// Counting API writes the honest way: the apiserver's own audit log, one line per request
// that reached it, filtered by the user that made it.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export const CONTROLLER_USER = 'lorenz-bench-controller';
export const JOB_CONTROLLER_USER = 'lorenz-bench-kcm';

const READ_VERBS = ['get', 'list', 'watch'];

/**
 * Writes an audit policy that records, at Metadata level and only once complete, the
 * non-read requests of the two benchmarked controllers; everything else is left out so
 * that auditing costs the apiserver next to nothing.
 */
export async function auditApiserverArgs(
  dir: string,
): Promise<{ args: string[]; logPath: string }> {
  const policyPath = join(dir, 'audit-policy.yaml');
  const logPath = join(dir, 'audit.log');
  const policy = [
    'apiVersion: audit.k8s.io/v1',
    'kind: Policy',
    'omitStages: [RequestReceived, ResponseStarted]',
    'rules:',
    '  - level: None',
    `    verbs: [${READ_VERBS.join(', ')}]`,
    '  - level: Metadata',
    `    users: [${CONTROLLER_USER}, ${JOB_CONTROLLER_USER}]`,
    '  - level: None',
    '',
  ].join('\n');
  await writeFile(policyPath, policy);
  return {
    args: [
      `--audit-policy-file=${policyPath}`,
      `--audit-log-path=${logPath}`,
      '--audit-log-format=json',
      '--audit-log-mode=blocking',
    ],
    logPath,
  };
}

interface AuditEvent {
  stage?: string;
  verb?: string;
  user?: { username?: string };
  objectRef?: { resource?: string; subresource?: string; namespace?: string };
  responseStatus?: { code?: number };
}

export interface WriteCount {
  total: number;
  /** `verb resource[/subresource] code` → count, for the report. */
  breakdown: Map<string, number>;
}

/** Where the audit log ends now: count from here later with countWrites. */
export async function auditMark(logPath: string): Promise<number> {
  return (await readLines(logPath)).length;
}

/** Completed non-read requests by `user` in `namespace`, from line `from` on. */
export async function countWrites(
  logPath: string,
  user: string,
  namespace: string,
  from = 0,
): Promise<WriteCount> {
  const breakdown = new Map<string, number>();
  let total = 0;
  for (const line of (await readLines(logPath)).slice(from)) {
    const event = JSON.parse(line) as AuditEvent;
    if (event.stage !== 'ResponseComplete' || event.user?.username !== user) continue;
    if (!event.verb || READ_VERBS.includes(event.verb)) continue;
    if (event.objectRef?.namespace !== namespace) continue;
    const ref = event.objectRef;
    const what = `${event.verb} ${ref.resource}${ref.subresource ? `/${ref.subresource}` : ''} ${event.responseStatus?.code ?? '?'}`;
    breakdown.set(what, (breakdown.get(what) ?? 0) + 1);
    total += 1;
  }
  return { total, breakdown };
}

async function readLines(path: string): Promise<string[]> {
  try {
    return (await readFile(path, 'utf8')).split('\n').filter((line) => line.length > 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}
