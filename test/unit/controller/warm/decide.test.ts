// What the warm controller does next for a Workflow (docs/snapshots.md#warm-workspaces), as a
// table over the Workflow, its status.warm, the warm-up's Pod and snapshot, and the time: one
// warm-up at a time; a full one without a ready snapshot or after a change of what shapes the
// tree; a head check (--unless-commit) once refreshInterval has passed; the Pod's end mapped
// from its termination message; failures wait out the shared backoff.
import { describe, expect, it } from 'vitest';
import {
  Reasons,
  encodeWarmUpResult,
  type WarmStatus,
  type WarmUpResult,
  type Workflow,
} from '../../../../src/api/index.js';
import { decideWarm, type WarmFacts } from '../../../../src/controller/warm/decide.js';
import type { PodObject } from '../../../../src/controller/shared/resources.js';
import { agentStatus, claimedWorkspace, workflow } from '../../../support/fakes/objects.js';

const NOW = Date.parse('2026-03-01T10:00:00Z');
const MIN = 60_000;
const DIGEST = `sha256:${'ab'.repeat(32)}`;
const CONFIG = 'sha256:config-1';
const COMMIT = 'c0ffee0000000000000000000000000000000000';
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

const warmOn = (warm: object = {}): Workflow => {
  const spec = claimedWorkspace('fast-ssd');
  return workflow({ workspace: { ...spec.workspace, warm } });
};

const READY: WarmStatus = {
  snapshot: 'wf-warm-2',
  digest: DIGEST,
  commit: COMMIT,
  readyAt: iso(NOW - 5 * MIN),
  build: 2,
  checkedAt: iso(NOW - 5 * MIN),
  configDigest: CONFIG,
  reason: Reasons.WarmUpSucceeded,
};
const BUILDING: WarmStatus = { ...READY, build: 3, building: 'wf-warm-3' };

/** A warm-up Pod made at `created` whose agent container waits for `reason`. */
const waiting = (reason: string, created: number): PodObject => ({
  metadata: { name: 'wf-warm-3', namespace: 'ns', creationTimestamp: new Date(created) },
  status: {
    phase: 'Pending',
    containerStatuses: [agentStatus({ waiting: { reason, message: 'Back-off pulling image' } })],
  },
});
const unschedulable = (created: number): PodObject => ({
  metadata: { name: 'wf-warm-3', namespace: 'ns', creationTimestamp: new Date(created) },
  status: {
    phase: 'Pending',
    conditions: [
      {
        type: 'PodScheduled',
        status: 'False',
        reason: 'Unschedulable',
        message: '0/1 nodes are available',
      },
    ],
  },
});

const pod = (phase: string, result?: WarmUpResult | string): PodObject => ({
  metadata: { name: 'wf-warm-3', namespace: 'ns' },
  status: {
    phase,
    containerStatuses: [
      agentStatus({
        terminated: {
          exitCode: phase === 'Failed' ? 1 : 0,
          reason: phase === 'Failed' ? 'Error' : 'Completed',
          ...(result === undefined
            ? {}
            : { message: typeof result === 'string' ? result : encodeWarmUpResult(result) }),
        },
      }),
    ],
  },
});
const PREPARED: WarmUpResult = {
  outcome: 'prepared',
  digest: DIGEST,
  commit: COMMIT,
  files: 10,
  bytes: 1000,
  prepareMs: 5000,
  digestMs: 20,
};

const facts = (over: Partial<WarmFacts>): WarmFacts => ({
  workflow: warmOn(),
  warm: undefined,
  configDigest: CONFIG,
  hasGit: true,
  unsupported: null,
  pod: undefined,
  podSeen: false,
  snapshot: undefined,
  failures: 0,
  lastFailureAt: undefined,
  now: NOW,
  ...over,
});

const rows: { name: string; facts: WarmFacts; want: unknown }[] = [
  { name: 'warm off: off', facts: facts({ workflow: workflow() }), want: { action: 'off' } },
  {
    name: 'unsupported (and nothing building): refused with the reason',
    facts: facts({ unsupported: 'no claim' }),
    want: { action: 'refuse', message: 'no claim' },
  },
  {
    name: 'no config recorded yet: wait for it',
    facts: facts({ configDigest: undefined }),
    want: { action: 'waitConfig' },
  },
  {
    name: 'never warmed: a full warm-up, build 1',
    facts: facts({}),
    want: { action: 'start', build: 1, name: 'wf-warm-1', why: 'no warm snapshot is ready yet' },
  },
  {
    name: 'ready but the config digest changed: a full warm-up, the next build',
    facts: facts({ warm: READY, configDigest: 'sha256:config-2' }),
    want: {
      action: 'start',
      build: 3,
      name: 'wf-warm-3',
      why: 'the configuration that shapes the workspace changed',
    },
  },
  {
    name: 'ready and checked 5 minutes ago (default 10m): idle until the check is due',
    facts: facts({ warm: READY }),
    want: { action: 'idle', requeueAfterMs: 5 * MIN },
  },
  {
    name: 'refreshInterval passed: a warm-up with --unless-commit',
    facts: facts({ workflow: warmOn({ refreshInterval: '2m' }), warm: READY }),
    want: {
      action: 'start',
      build: 3,
      name: 'wf-warm-3',
      unlessCommit: COMMIT,
      why: `refreshInterval passed: is the default branch still at ${COMMIT}?`,
    },
  },
  {
    name: 'no workspace.git: nothing to refresh, only config changes rebuild',
    facts: facts({
      warm: { ...READY, commit: undefined, checkedAt: iso(NOW - 99 * MIN) },
      hasGit: false,
    }),
    want: { action: 'idle' },
  },
  {
    name: 'failed twice, the last a minute ago: waits out 60 s of backoff (30 s·2)',
    facts: facts({
      warm: { build: 2, reason: Reasons.WarmUpFailed },
      failures: 2,
      lastFailureAt: NOW - 30_000,
    }),
    want: { action: 'idle', requeueAfterMs: 30_000 },
  },
  {
    name: 'failed once, its backoff over: the next build',
    facts: facts({
      warm: { build: 2, reason: Reasons.WarmUpFailed },
      failures: 1,
      lastFailureAt: NOW - 30_000,
    }),
    want: { action: 'start', build: 3, name: 'wf-warm-3', why: 'no warm snapshot is ready yet' },
  },
  {
    name: 'building, its Pod not made (or not seen yet): make the objects, the refresh kept',
    facts: facts({ warm: BUILDING }),
    want: { action: 'create', name: 'wf-warm-3', unlessCommit: COMMIT },
  },
  {
    name: 'building a full warm-up after a config change: no --unless-commit when remade',
    facts: facts({ warm: BUILDING, configDigest: 'sha256:config-2' }),
    want: { action: 'create', name: 'wf-warm-3' },
  },
  {
    name: 'building, unsupported meanwhile: the warm-up in progress is seen to its end first',
    facts: facts({ warm: BUILDING, unsupported: 'x', pod: pod('Running') }),
    want: { action: 'waitPod', name: 'wf-warm-3' },
  },
  {
    name: 'building, its image not pulled for 1 min: waits out the pull grace (2 min)',
    facts: facts({ warm: BUILDING, pod: waiting('ImagePullBackOff', NOW - MIN) }),
    want: { action: 'waitPod', name: 'wf-warm-3', recheckAfterMs: MIN },
  },
  {
    name: 'building, its image not pulled for 3 min: failed, saying why, not held for ever',
    facts: facts({ warm: BUILDING, pod: waiting('ImagePullBackOff', NOW - 3 * MIN) }),
    want: {
      action: 'record',
      name: 'wf-warm-3',
      outcome: 'failed',
      message:
        'warm-up Pod wf-warm-3 cannot start (ImagePullFailed): container agent: ImagePullBackOff: Back-off pulling image',
    },
  },
  {
    name: 'building, an image name that is not one: failed at once',
    facts: facts({ warm: BUILDING, pod: waiting('InvalidImageName', NOW) }),
    want: expect.objectContaining({ action: 'record', outcome: 'failed' }),
  },
  {
    name: 'building, unschedulable for 11 min: failed past the pending timeout (10 min)',
    facts: facts({ warm: BUILDING, pod: unschedulable(NOW - 11 * MIN) }),
    want: {
      action: 'record',
      name: 'wf-warm-3',
      outcome: 'failed',
      message: 'warm-up Pod wf-warm-3 cannot start (Unschedulable): 0/1 nodes are available',
    },
  },
  {
    name: 'building, its Pod seen before and gone: failed (deleted)',
    facts: facts({ warm: BUILDING, podSeen: true }),
    want: {
      action: 'record',
      name: 'wf-warm-3',
      outcome: 'failed',
      message: 'warm-up Pod wf-warm-3 was deleted before it ended',
    },
  },
  {
    name: 'prepared, no snapshot yet: snapshot the claim',
    facts: facts({ warm: BUILDING, pod: pod('Succeeded', PREPARED), snapshot: { kind: 'absent' } }),
    want: { action: 'snapshot', name: 'wf-warm-3', result: PREPARED },
  },
  {
    name: 'prepared, the snapshot not ready: wait, with its error',
    facts: facts({
      warm: BUILDING,
      pod: pod('Succeeded', PREPARED),
      snapshot: { kind: 'present', readyToUse: false, error: 'slow disk' },
    }),
    want: { action: 'waitSnapshot', name: 'wf-warm-3', error: 'slow disk' },
  },
  {
    name: 'prepared, the snapshot ready: record it',
    facts: facts({
      warm: BUILDING,
      pod: pod('Succeeded', PREPARED),
      snapshot: { kind: 'present', readyToUse: true },
    }),
    want: { action: 'record', name: 'wf-warm-3', outcome: 'prepared', result: PREPARED },
  },
  {
    name: 'unchanged: record the check only',
    facts: facts({
      warm: BUILDING,
      pod: pod('Succeeded', { outcome: 'unchanged', commit: COMMIT }),
    }),
    want: { action: 'record', name: 'wf-warm-3', outcome: 'unchanged', commit: COMMIT },
  },
  {
    name: 'moved: record the check, and the full warm-up that follows at once',
    facts: facts({
      warm: BUILDING,
      pod: pod('Succeeded', { outcome: 'moved', commit: 'f'.repeat(40) }),
    }),
    want: {
      action: 'record',
      name: 'wf-warm-3',
      outcome: 'moved',
      commit: 'f'.repeat(40),
      then: {
        action: 'start',
        build: 4,
        name: 'wf-warm-4',
        why: `the default branch moved on from ${COMMIT} to ${'f'.repeat(40)}`,
      },
    },
  },
  {
    name: 'failed with a result: the error code and error',
    facts: facts({
      warm: BUILDING,
      pod: pod('Failed', {
        outcome: 'failed',
        errorCode: 'hook_failed',
        error: 'after_create exited 2',
      }),
    }),
    want: {
      action: 'record',
      name: 'wf-warm-3',
      outcome: 'failed',
      message: 'hook_failed: after_create exited 2',
    },
  },
  {
    name: 'the Pod failed with no result: failed, saying how it ended',
    facts: facts({ warm: BUILDING, pod: pod('Failed', 'not json') }),
    want: {
      action: 'record',
      name: 'wf-warm-3',
      outcome: 'failed',
      message:
        'warm-up Pod wf-warm-3 ended Failed with no result in its termination message (Error, exit code 1)',
    },
  },
];

describe('decideWarm', () => {
  it.each(rows.map((row) => [row.name, row] as const))('%s', (_name, row) => {
    expect(decideWarm(row.facts)).toEqual(row.want);
  });
});
