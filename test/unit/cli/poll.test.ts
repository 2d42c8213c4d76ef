// `lorenz poll`: the controller's dispatch decisions, printed for a user debugging a tracker
// query; with --once, the dispatched issues run here through `lorenz run`'s engine.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pollCommand } from '../../../src/cli/poll-command.js';
import { useTempDir } from '../../support/workspace.js';

let dir: string;
useTempDir('lorenz-poll-test-', 'test', (made) => {
  dir = made;
});

const WORKFLOW = (log: string) => `---
tracker:
  kind: memory
  issues:
    - { id: "1", identifier: "P-1", title: "One", state: "Todo", priority: 2 }
    - { id: "2", identifier: "P-2", title: "Two", state: "In Progress", priority: 1 }
    - id: "3"
      identifier: "P-3"
      title: "Blocked"
      state: "Todo"
      blocked_by: [{ identifier: "P-1", state: "Todo" }]
    - { id: "4", identifier: "P-4", title: "Big", state: "Todo", labels: ["ensemble:3"] }
    - { id: "5", identifier: "P-5", title: "Done", state: "Done" }
agent:
  max_concurrent_agents: 2
workspace:
  root: ${join(log, '..', 'ws')}
hooks:
  after_create: echo {{ issue.identifier }} >> ${log}
---
Work on {{ issue.identifier }}.`;

async function poll(args: string[]) {
  const log = join(dir, 'hooks.log');
  const file = join(dir, 'WORKFLOW.md');
  await writeFile(file, WORKFLOW(log));
  let out = '';
  let err = '';
  const code = await pollCommand(
    ['--workflow', file, ...args],
    (text) => (out += text),
    (text) => (err += text),
  );
  return { code, out, err, log };
}

describe('lorenz poll', () => {
  it('prints each candidate in dispatch order with its decision', async () => {
    const { code, out } = await poll(['--dry-run']);
    expect(code).toBe(0);
    expect(out.split('\n').map((line) => line.replace(/\s+/g, ' ').trim())).toEqual([
      'P-2 In Progress dispatch',
      'P-1 Todo dispatch',
      'P-3 Todo blocked by P-1',
      'P-4 Todo over-cap (workflow cap, 3 slots)',
      '',
    ]);
  });

  it('prints JSON for scripts', async () => {
    const { out } = await poll(['--dry-run', '--output', 'json']);
    expect(JSON.parse(out)).toEqual([
      { identifier: 'P-2', state: 'In Progress', decision: 'dispatch', slots: 1 },
      { identifier: 'P-1', state: 'Todo', decision: 'dispatch', slots: 1 },
      { identifier: 'P-3', state: 'Todo', decision: 'blocked', blockedBy: ['P-1'] },
      { identifier: 'P-4', state: 'Todo', decision: 'over-cap', cap: 'workflow', slots: 3 },
    ]);
  });

  it('with --once runs the dispatched issues here, and only those', async () => {
    const { code, log } = await poll(['--once', '--no-agent']);
    expect(code).toBe(0);
    expect(await readFile(log, 'utf8')).toBe('P-2\nP-1\n');
  });

  it('asks for --dry-run or --once', async () => {
    await expect(poll([])).rejects.toThrow(/--dry-run .* or --once/);
  });
});
