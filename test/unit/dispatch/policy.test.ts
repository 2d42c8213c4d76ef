// The dispatch policy of docs/design.md#dispatch-rules: candidates in dispatch order, blockers,
// the workflow and per-state caps (ensemble slots count), issues already held.
import { describe, expect, it } from 'vitest';
import {
  compareCandidates,
  describeDecision,
  planDispatch,
  type DispatchSettings,
  type HeldIssue,
} from '../../../src/dispatch/policy.js';
import { type Issue } from '../../../src/workflow/issue.js';
import { todoIssue } from '../../support/fakes/issues.js';
import { eachNamedCase } from '../../support/cases.js';

const settings: DispatchSettings = {
  activeStates: ['Todo', 'In Progress'],
  terminalStates: ['Done', 'Cancelled'],
  maxConcurrentAgents: 3,
  maxConcurrentAgentsByState: {},
  ensembleSize: 1,
};

const issue = todoIssue;

const plan = (
  candidates: Issue[],
  held: HeldIssue[] = [],
  overrides: Partial<DispatchSettings> = {},
): string[] =>
  planDispatch(candidates, held, { ...settings, ...overrides }).map(
    (entry) => `${entry.issue.identifier}: ${describeDecision(entry.decision)}`,
  );

describe('dispatch order', () => {
  it('sorts by priority 1–4 (missing or 0 last), then oldest created_at, then identifier', () => {
    const sorted = [
      issue('E-5', { priority: null, created_at: '2026-01-01T00:00:00Z' }),
      issue('E-4', { priority: 0 }),
      issue('E-3', { priority: 2, created_at: '2026-02-01T00:00:00Z' }),
      issue('E-2', { priority: 2, created_at: '2026-01-01T00:00:00Z' }),
      issue('E-1', { priority: 4 }),
      issue('E-0', { priority: 1 }),
      issue('E-6', { priority: 2 }),
    ].sort(compareCandidates);
    expect(sorted.map((entry) => entry.identifier)).toEqual([
      'E-0',
      'E-2',
      'E-3',
      'E-6',
      'E-1',
      'E-5',
      'E-4',
    ]);
  });
});

describe('dispatch decisions', () => {
  eachNamedCase('%s', plan, [
    [
      'fills the free slots in order, then waits over the cap',
      [issue('A-1'), issue('A-2'), issue('A-3'), issue('A-4')],
      [],
      {},
      ['A-1: dispatch', 'A-2: dispatch', 'A-3: dispatch', 'A-4: over-cap (workflow cap, 1 slot)'],
    ],
    [
      'counts held issues against the cap, and does not dispatch them twice',
      [issue('A-1'), issue('A-2'), issue('A-3')],
      [
        { issueId: 'id-A-1', state: 'Todo', slots: 1 },
        { issueId: 'id-Z-9', state: 'In Progress', slots: 1 },
      ],
      {},
      ['A-1: running', 'A-2: dispatch', 'A-3: over-cap (workflow cap, 1 slot)'],
    ],
    [
      'ensemble slots count: a 3-slot issue does not fit in 2, a later solo one does',
      [issue('B-1', { priority: 1, labels: ['ensemble:3'] }), issue('B-2', { priority: 2 })],
      [{ issueId: 'id-X', state: 'Todo', slots: 1 }],
      {},
      ['B-1: over-cap (workflow cap, 3 slots)', 'B-2: dispatch'],
    ],
    [
      'a Todo issue with an open blocker waits; a terminal blocker does not hold it',
      [
        issue('C-1', { blocked_by: [{ identifier: 'C-9', state: 'In Progress' }] }),
        issue('C-2', { blocked_by: [{ identifier: 'C-8', state: 'done' }] }),
        issue('C-3', { blocked_by: [{ identifier: 'C-7', state: null }] }),
      ],
      [],
      {},
      ['C-1: blocked by C-9', 'C-2: dispatch', 'C-3: blocked by C-7'],
    ],
    [
      'blockers hold only unstarted issues: one already In Progress goes on',
      [issue('D-1', { state: 'In Progress', blocked_by: [{ identifier: 'D-9', state: 'Todo' }] })],
      [],
      {},
      ['D-1: dispatch'],
    ],
    [
      'the tracker state type decides what unstarted means when there is one',
      [
        issue('D-2', {
          state: 'Todo',
          state_type: 'started',
          blocked_by: [{ identifier: 'D-9', state: 'Todo' }],
        }),
        issue('D-3', {
          state: 'In Progress',
          state_type: 'unstarted',
          blocked_by: [{ identifier: 'D-9', state: 'Todo' }],
        }),
      ],
      [],
      {},
      ['D-2: dispatch', 'D-3: blocked by D-9'],
    ],
    [
      'states compare trimmed and case-insensitively; terminal or unknown states are not active',
      [
        issue('F-1', { state: ' todo ' }),
        issue('F-2', { state: 'Done' }),
        issue('F-3', { state: 'Backlog' }),
        issue('F-4', { state: null }),
      ],
      [],
      {},
      ['F-1: dispatch', 'F-2: not-active', 'F-3: not-active', 'F-4: not-active'],
    ],
    [
      'per-state caps hold beside the workflow cap',
      [issue('G-1'), issue('G-2'), issue('G-3', { state: 'In Progress' })],
      [],
      { maxConcurrentAgentsByState: { todo: 1 } },
      ['G-1: dispatch', 'G-2: over-cap (state cap, 1 slot)', 'G-3: dispatch'],
    ],
    [
      'an issue listed twice is decided once',
      [issue('H-1'), issue('H-1')],
      [],
      {},
      ['H-1: dispatch'],
    ],
  ]);

  it('never grants more slots than the caps, whatever the candidates', () => {
    for (let seed = 1; seed <= 200; seed += 1) {
      const candidates = Array.from({ length: (seed % 17) + 1 }, (_, index) =>
        issue(`R-${index}`, {
          priority: (seed * (index + 3)) % 6,
          state: index % 3 === 0 ? 'In Progress' : 'Todo',
          labels: (seed + index) % 4 === 0 ? [`ensemble:${(index % 3) + 1}`] : [],
        }),
      );
      const held: HeldIssue[] = [{ issueId: 'h', state: 'Todo', slots: seed % 3 }];
      const caps = { maxConcurrentAgents: (seed % 7) + 2, maxConcurrentAgentsByState: { todo: 2 } };
      const entries = planDispatch(candidates, held, { ...settings, ...caps });
      const granted = entries.flatMap((entry) =>
        entry.decision.kind === 'dispatch' ? [entry] : [],
      );
      const slots = granted.reduce(
        (sum, entry) => sum + (entry.decision.kind === 'dispatch' ? entry.decision.slots : 0),
        seed % 3,
      );
      expect(slots).toBeLessThanOrEqual(Math.max(caps.maxConcurrentAgents, seed % 3));
      const todo = granted
        .filter((entry) => entry.issue.state === 'Todo')
        .reduce(
          (sum, entry) => sum + (entry.decision.kind === 'dispatch' ? entry.decision.slots : 0),
          seed % 3,
        );
      expect(todo).toBeLessThanOrEqual(Math.max(2, seed % 3));
    }
  });
});
