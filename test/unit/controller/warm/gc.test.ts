// Which warm snapshots go (docs/snapshots.md#warm-workspaces): every one but the current and
// the one being built, once no unfinished run started from it and no claim still Pending is
// restored from it; a superseded one waits out a short grace after its successor is ready.
import { describe, expect, it } from 'vitest';
import type { IssueRun } from '../../../../src/api/index.js';
import {
  WARM_GC_GRACE_MS,
  planWarmGc,
  type WarmGcFacts,
} from '../../../../src/controller/warm/gc.js';
import { issueRun } from '../../../support/fakes/objects.js';

const NOW = Date.parse('2026-03-01T10:00:00Z');
const run = (snapshot: string, phase: 'Running' | 'Succeeded'): IssueRun =>
  issueRun({
    name: `run-${snapshot}-${phase}`,
    status: {
      phase,
      workspaceSource: { type: 'VolumeSnapshot', volumeSnapshot: snapshot, digest: 'd' },
    },
  });
const claim = (name: string, phase: string | undefined) => ({
  phase,
  dataSource: { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name },
});
const base: WarmGcFacts = {
  snapshots: ['wf-warm-1', 'wf-warm-2', 'wf-warm-3'],
  current: 'wf-warm-3',
  currentReadyAt: NOW - 2 * WARM_GC_GRACE_MS,
  building: undefined,
  runs: [],
  claims: [],
  now: NOW,
};

const rows: { name: string; facts: Partial<WarmGcFacts>; want: unknown }[] = [
  {
    name: 'nothing uses the old ones: all but the current go',
    facts: {},
    want: { delete: ['wf-warm-1', 'wf-warm-2'], held: [] },
  },
  {
    name: 'an unfinished run started from one: kept; a finished one does not hold',
    facts: { runs: [run('wf-warm-1', 'Running'), run('wf-warm-2', 'Succeeded')] },
    want: { delete: ['wf-warm-2'], held: ['wf-warm-1'] },
  },
  {
    name: 'a claim still Pending (or with no phase yet) restored from one: kept; a Bound one does not hold',
    facts: { claims: [claim('wf-warm-1', 'Pending'), claim('wf-warm-2', 'Bound')] },
    want: { delete: ['wf-warm-2'], held: ['wf-warm-1'] },
  },
  {
    name: 'a claim with no phase yet holds too',
    facts: { claims: [claim('wf-warm-2', undefined)] },
    want: { delete: ['wf-warm-1'], held: ['wf-warm-2'] },
  },
  {
    name: 'the current one became ready a moment ago: the old ones wait out the grace',
    facts: { currentReadyAt: NOW - 1000 },
    want: { delete: [], held: ['wf-warm-1', 'wf-warm-2'] },
  },
  {
    name: 'the one being built is never taken',
    facts: { building: 'wf-warm-2' },
    want: { delete: ['wf-warm-1'], held: [] },
  },
  {
    name: 'warm off: all go under the same rule, none is current',
    facts: { current: undefined, currentReadyAt: undefined, runs: [run('wf-warm-3', 'Running')] },
    want: { delete: ['wf-warm-1', 'wf-warm-2'], held: ['wf-warm-3'] },
  },
];

describe('planWarmGc', () => {
  it.each(rows.map((row) => [row.name, row] as const))('%s', (_name, row) => {
    expect(planWarmGc({ ...base, ...row.facts })).toEqual(row.want);
  });
});
