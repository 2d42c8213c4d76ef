import { describe, expect, it } from 'vitest';
import type { IssueRun } from '../../../../src/api/index.js';
import { changesWorkflowStatus } from '../../../../src/controller/workflow/run-changes.js';
import { issueRun, usedSlot } from '../../../support/fakes/objects.js';

const running = issueRun({ status: { phase: 'Running', slots: [usedSlot(1)] } });
const edited = (edit: (run: IssueRun) => void): IssueRun => {
  const copy = structuredClone(running);
  edit(copy);
  return copy;
};
const usage = { inputTokens: 10, outputTokens: 5, totalTokens: 15 };

describe('changesWorkflowStatus', () => {
  it.each<[string, (run: IssueRun) => void, boolean]>([
    ['nothing', () => undefined, false],
    ['a finalizer removed', (run) => void (run.metadata.finalizers = []), false],
    ['its deletion begun', (run) => void (run.metadata.deletionTimestamp = new Date()), false],
    ['a label added', (run) => void (run.metadata.labels = { team: 'a' }), false],
    ['a hook record added', (run) => void (run.status = { ...run.status, hooks: [] }), false],
    ['the phase', (run) => void (run.status = { ...run.status, phase: 'Succeeded' }), true],
    [
      'Finished',
      (run) =>
        void (run.status = {
          ...run.status,
          conditions: [
            {
              type: 'Finished',
              status: 'True',
              reason: 'Succeeded',
              message: '',
              lastTransitionTime: '2026-12-03T00:00:00Z',
            },
          ],
        }),
      true,
    ],
    ['usage reported', (run) => void (run.status = { ...run.status, usage }), true],
    [
      'a day spent',
      (run) =>
        void (run.status = { ...run.status, usageDays: [{ day: '2026-12-03', tokens: 15 }] }),
      true,
    ],
    [
      'a slot’s turns',
      (run) => void (run.status = { ...run.status, slots: [usedSlot(1, undefined, 2)] }),
      true,
    ],
    [
      'a slot’s usage',
      (run) => void (run.status = { ...run.status, slots: [usedSlot(1, usage)] }),
      true,
    ],
    ['its Workflow', (run) => void (run.spec.workflowRef = { name: 'other' }), true],
    ['its uid (deleted and created again)', (run) => void (run.metadata.uid = 'new'), true],
  ])('%s', (_what, edit, changes) => {
    expect(changesWorkflowStatus(running, edited(edit))).toBe(changes);
  });
});
