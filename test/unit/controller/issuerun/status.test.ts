import { describe, expect, it } from 'vitest';
import {
  hookEntries,
  runConditions,
  runStateFromSlots,
  slotStatuses,
  type SlotView,
} from '../../../../src/controller/issuerun/status.js';
import { canonicalJson } from '../../../../src/controller/shared/status-writer.js';
import type { PodOutcome } from '../../../../src/controller/issuerun/pod-status.js';
import type { PodLogState } from '../../../../src/controller/issuerun/log-follower.js';

const outcome = (
  phase: PodOutcome['phase'],
  reason: PodOutcome['reason'],
  extra: Partial<PodOutcome> = {},
): PodOutcome => ({
  phase,
  reason,
  message: `${reason} message`,
  finished: phase === 'Succeeded' || phase === 'Failed',
  summary: null,
  ...extra,
});
const view = (slot: number, result: PodOutcome | null, log?: Partial<PodLogState>): SlotView => ({
  slot,
  attempt: 1,
  podName: `run-${slot}-1`,
  outcome: result,
  log: log as PodLogState | undefined,
});

describe('run status', () => {
  it.each<[string, Partial<SlotView>, number | undefined, number | undefined]>([
    [
      'Pod created → first turn',
      {
        podCreatedAt: '2026-01-01T00:00:00.000Z',
        log: { firstTurnAt: '2026-01-01T00:00:01.250Z' } as PodLogState,
      },
      undefined,
      1250,
    ],
    [
      'no turn yet',
      { podCreatedAt: '2026-01-01T00:00:00.000Z', log: {} as PodLogState },
      undefined,
      undefined,
    ],
    [
      'the log forgotten: the recorded figure kept',
      { podCreatedAt: '2026-01-01T00:00:00.000Z' },
      900,
      900,
    ],
    [
      'a node clock behind the apiserver: never negative',
      {
        podCreatedAt: '2026-01-01T00:00:05.000Z',
        log: { firstTurnAt: '2026-01-01T00:00:04.000Z' } as PodLogState,
      },
      undefined,
      0,
    ],
  ])('firstTurnAfterMs: %s', (_case, extra, recorded, expected) => {
    const slot = { ...view(0, outcome('Running', 'Running')), ...extra };
    const previous =
      recorded === undefined ? [] : [{ slot: 0, attempt: 1, firstTurnAfterMs: recorded }];
    expect(slotStatuses([slot], previous)[0]?.firstTurnAfterMs).toBe(expected);
    // Another attempt's figure is not this one's.
    const other = [{ slot: 0, attempt: 2, firstTurnAfterMs: 5 }];
    if (extra.log?.firstTurnAt === undefined) {
      expect(slotStatuses([slot], other)[0]?.firstTurnAfterMs).toBeUndefined();
    }
  });

  it.each<[string, SlotView[], string, string]>([
    ['no Pod yet', [view(0, null)], 'progressing', 'Pending'],
    ['running', [view(0, outcome('Running', 'Running'))], 'progressing', 'Running'],
    ['solo success', [view(0, outcome('Succeeded', 'Succeeded'))], 'finished', 'Succeeded'],
    ['solo failure', [view(0, outcome('Failed', 'HookFailed'))], 'finished', 'HookFailed'],
    [
      'ensemble: one slot still running',
      [view(0, outcome('Succeeded', 'Succeeded')), view(1, outcome('Running', 'Running'))],
      'progressing',
      'Running',
    ],
    [
      'ensemble: any slot succeeding wins',
      [view(0, outcome('Failed', 'AgentFailed')), view(1, outcome('Succeeded', 'Succeeded'))],
      'finished',
      'Succeeded',
    ],
    [
      'ensemble: all failed, the first reason',
      [view(0, outcome('Failed', 'OOMKilled')), view(1, outcome('Failed', 'AgentFailed'))],
      'finished',
      'OOMKilled',
    ],
  ])('%s', (_case, slots, kind, reason) => {
    const state = runStateFromSlots(slots);
    expect(state.kind).toBe(kind);
    expect(state.reason).toBe(reason);
  });

  it('sets Succeeded/Finished/Reconciling/Stalled and keeps transition times of unchanged conditions', () => {
    const t0 = new Date('2026-01-01T00:00:00Z');
    const t1 = new Date('2026-01-01T00:01:00Z');
    const running = runConditions(
      [],
      { kind: 'progressing', phase: 'Running', reason: 'Running', message: 'm' },
      1,
      t0,
    );
    expect(running.map((c) => `${c.type}=${c.status}`)).toEqual([
      'Succeeded=Unknown',
      'Finished=False',
      'Reconciling=True',
      'Stalled=False',
    ]);
    const done = runConditions(
      running,
      { kind: 'finished', succeeded: true, reason: 'Succeeded', message: 'ok' },
      1,
      t1,
    );
    expect(done.map((c) => `${c.type}=${c.status}`)).toEqual([
      'Succeeded=True',
      'Finished=True',
      'Reconciling=False',
      'Stalled=False',
    ]);
    expect(done.find((c) => c.type === 'Stalled')?.lastTransitionTime).toBe('2026-01-01T00:00:00Z');
    expect(done.find((c) => c.type === 'Finished')?.lastTransitionTime).toBe(
      '2026-01-01T00:01:00Z',
    );
    expect(done.every((c) => c.observedGeneration === 1)).toBe(true);
  });

  it('fills hook entries from logs, never regresses them, and closes gaps from the termination summary', () => {
    const started = {
      status: 'started' as const,
      hookName: 'after_create' as const,
      command: 'x',
      cwd: '/w',
    };
    const completed = {
      ...started,
      status: 'completed' as const,
      exitCode: 0,
      output: 'ok',
      durationMs: 3,
    };
    const summary = {
      v: 1 as const,
      slot: 0,
      succeeded: true,
      turns: 1,
      records: 4,
      trail: [
        { seq: 0, name: 'after_create' as const, status: 'started' as const, exitCode: null },
        {
          seq: 1,
          name: 'after_create' as const,
          status: 'completed' as const,
          exitCode: 0,
          durationMs: 3,
        },
        { seq: 2, name: 'before_run' as const, status: 'started' as const, exitCode: null },
        {
          seq: 3,
          name: 'before_run' as const,
          status: 'completed' as const,
          exitCode: 0,
          durationMs: 2,
        },
      ],
    };
    const persisted = [
      {
        slot: 0,
        name: 'after_create' as const,
        status: 'completed' as const,
        exitCode: 0,
        output: 'ok',
      },
    ];
    const replaying = view(0, outcome('Succeeded', 'Succeeded', { summary }), {
      hooks: [{ seq: 0, message: started }],
    });
    expect(hookEntries(persisted, [replaying])).toEqual([
      { slot: 0, name: 'after_create', status: 'completed', exitCode: 0, output: 'ok' },
      { slot: 0, name: 'before_run', status: 'completed', exitCode: 0, durationMs: 2 },
    ]);
    const full = view(0, outcome('Running', 'Running'), {
      hooks: [
        { seq: 0, message: started },
        { seq: 1, message: completed },
      ],
    });
    expect(hookEntries([], [full])[0]).toMatchObject({
      status: 'completed',
      output: 'ok',
      durationMs: 3,
    });
  });

  it('compares statuses whatever the key order', () => {
    expect(canonicalJson({ b: 1, a: { d: [{ y: 1, x: 2 }], c: undefined } })).toBe(
      canonicalJson({ a: { d: [{ x: 2, y: 1 }] }, b: 1 }),
    );
  });
});
