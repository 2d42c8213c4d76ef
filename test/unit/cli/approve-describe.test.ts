// `lorenz describe run` shows the requests a run's agent waits on and the recent decisions,
// hostile text escaped; a run without an inbox shows no such section.
import { describe, expect, it } from 'vitest';
import { formatInboxSection, inboxViewOf } from '../../../src/cli/runs/describe-inbox.js';
import { permissionRequest } from '../../support/fakes/objects.js';

const run = (inbox: unknown) => ({ status: { inbox } });

describe('describe run: the inbox section', () => {
  it('lists waiting requests with what, options and deadline, and recent decisions', () => {
    const view = inboxViewOf(
      run({
        pending: [
          permissionRequest({
            id: 'a1-s0-2',
            turn: 2,
            title: 'push',
            toolKind: 'execute',
            command: 'git push --force origin main\u001b[31m',
            options: [
              { optionId: 'a', name: 'Allow', kind: 'allow_once' },
              { optionId: 'r', name: 'Reject', kind: 'reject_once' },
            ],
            deadline: '2026-12-02T18:00:00Z',
          }),
          { id: 'broken', kind: 'nonsense' },
        ],
        decided: [
          {
            requestId: 'a1-s0-1',
            verdict: 'deny',
            reason: 'not on main',
            by: 'alice',
            via: 'kubernetes',
            at: '2026-12-02T16:59:00Z',
          },
        ],
      }),
    );
    const text = formatInboxSection(view);
    expect(text).toContain('Waiting requests:\n  REQUEST');
    expect(text).toMatch(
      /a1-s0-2 +permission +0 +execute: git push --force origin main\\x1b\[31m +Allow, Reject/,
    );
    expect(text).toContain('2026-12-02T18:00:00Z');
    expect(text).toContain('lorenz approve RUN');
    expect(text).not.toContain('broken');
    expect(text).toMatch(
      /Recent decisions:\n {2}REQUEST +VERDICT.*\n {2}a1-s0-1 +deny +alice +kubernetes .* not on main/,
    );
    expect(text).not.toContain('\u001b');
  });

  it('says <none> for what is empty, and nothing at all without an inbox', () => {
    const decidedOnly = formatInboxSection(
      inboxViewOf(
        run({
          decided: [
            {
              requestId: 'a1-s0-1',
              verdict: 'timeout',
              via: 'timeout',
              at: '2026-12-02T17:00:00Z',
            },
          ],
        }),
      ),
    );
    expect(decidedOnly).toContain('Waiting requests:\n  <none>\n');
    expect(formatInboxSection(inboxViewOf(run(undefined)))).toBe('');
    expect(formatInboxSection(inboxViewOf({}))).toBe('');
  });
});
