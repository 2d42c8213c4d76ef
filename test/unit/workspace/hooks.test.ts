import { describe, expect, it } from 'vitest';
import { mkdir, rm, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { createLocalExecutor } from '../../../src/executor/local.js';
import { runHook, type HookRequest } from '../../../src/workspace/hooks.js';
import type { HookName } from '../../../src/workflow/events.js';
import { normalizeIssue } from '../../../src/workflow/issue.js';
import { hookMessages, hookRequest } from '../../support/hook-request.js';
import { isAlive, printedPids, useIssueWorkspace } from '../../support/workspace.js';

// Pids a hook prints are checked from here: they are this machine's only outside the run's
// PID namespace, whose own behaviour test/unit/executor/escape.test.ts covers.
const executor = createLocalExecutor({ pidNamespace: false });
const issue = normalizeIssue({ identifier: 'ENG-7', title: "Fix it's bug", branch_name: 'eng-7' });
const place = useIssueWorkspace('lorenz-hooks-', 'ENG-7');

const request = (
  hookName: HookName,
  command: string | null,
  overrides: Partial<HookRequest> = {},
) => hookRequest(executor, place, hookName, command, { issue, ...overrides });

describe('runHook', () => {
  it('a null hook runs nothing and emits nothing', async () => {
    const { events, request: hook } = request('after_create', null);
    expect(await runHook(hook)).toBeNull();
    expect(events).toEqual([]);
  });

  it('emits started then completed, rendering the issue shell-escaped, in the workspace', async () => {
    const { events, request: hook } = request('before_run', 'echo {{ issue.title }} in "$PWD"');
    await runHook(hook);
    const command = "echo 'Fix it'\\''s bug' in \"$PWD\"";
    const [started, completed] = hookMessages(events);
    expect(started).toEqual({
      status: 'started',
      hookName: 'before_run',
      command,
      cwd: place.workspace,
      slot: 0,
    });
    expect(completed).toEqual({
      status: 'completed',
      hookName: 'before_run',
      command,
      cwd: place.workspace,
      exitCode: 0,
      output: `Fix it's bug in ${place.workspace}`,
      outputTruncated: false,
      error: null,
      errorTruncated: false,
      durationMs: expect.any(Number),
      slot: 0,
    });
    // The output also streams while the hook runs, between its two records.
    expect(events.map((event) => event.type)).toEqual([
      'hook_execution',
      'hook_output',
      'hook_execution',
    ]);
  });

  it('a failing fail-fast hook throws hook_failed with the status and output', async () => {
    const { events, request: hook } = request('after_create', 'echo out; echo err >&2; exit 7');
    await expect(runHook(hook)).rejects.toMatchObject({
      code: 'hook_failed',
      message: 'hook failed with status 7: out\nerr',
    });
    expect(hookMessages(events)[1]).toMatchObject({
      status: 'failed',
      exitCode: 7,
      output: 'out\nerr',
      outputTruncated: false,
      error: 'hook failed with status 7: out\nerr',
      errorTruncated: false,
    });
  });

  it('a timed-out hook throws hook_timed_out, with a null exit code', async () => {
    const { events, request: hook } = request('before_run', 'echo begun; sleep 1000', {
      timeoutMs: 300,
      killGraceMs: 1000,
    });
    await expect(runHook(hook)).rejects.toMatchObject({
      code: 'hook_timed_out',
      message: 'hook timed out after 300ms',
    });
    expect(hookMessages(events)[1]).toMatchObject({
      status: 'failed',
      exitCode: null,
      output: 'begun',
      error: 'hook timed out after 300ms',
      errorTruncated: false,
    });
  });

  it('kills every backgrounded child of a timed-out hook before returning', async () => {
    const { events, request: hook } = request(
      'after_run',
      'sleep 1000 & echo pid:$!; sleep 1000 & echo pid:$!; wait',
      { timeoutMs: 300, killGraceMs: 1000 },
    );
    const message = await runHook(hook);
    const pids = printedPids(message?.output ?? '');
    expect(pids).toHaveLength(2);
    for (const pid of pids) expect(await isAlive(pid)).toBe(false);
    expect(events.at(-1)).toEqual({
      type: 'stderr',
      message: 'Ignoring after_run hook failure: hook timed out after 300ms',
      slot: 0,
    });
  });

  it('SIGKILLs a hook that ignores SIGTERM after the grace', async () => {
    const { request: hook } = request(
      'before_remove',
      "trap '' TERM; sleep 1000 & echo pid:$!; wait",
      { timeoutMs: 200, killGraceMs: 300 },
    );
    const message = await runHook(hook);
    expect(message).toMatchObject({ status: 'failed', exitCode: null });
    expect(message?.durationMs).toBeGreaterThanOrEqual(450);
    for (const pid of printedPids(message?.output ?? '')) expect(await isAlive(pid)).toBe(false);
  });

  it('reports a hook stopped by a cancellation as killed, not timed out', async () => {
    const controller = new AbortController();
    const { request: hook, events } = request('after_run', 'echo started; sleep 1000', {
      timeoutMs: 60_000,
      killGraceMs: 300,
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(), 200);
    const message = await runHook(hook);
    expect(message).toMatchObject({
      status: 'failed',
      exitCode: null,
      error: 'hook killed: the run was cancelled or its Pod stopped',
    });
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'stderr', message: expect.stringContaining('hook killed') }),
    );
  });

  it('reports a hook whose process group is killed by a signal as killed by it', async () => {
    const { request: hook } = request('after_run', 'echo started; kill -KILL 0');
    const message = await runHook(hook);
    expect(message).toMatchObject({ status: 'failed', exitCode: null });
    expect(message?.error).toMatch(/^hook killed by SIGKILL: started/);
  });

  it.each([
    [4096, 'x'.repeat(4096), false],
    [4097, `${'x'.repeat(4096)}\n[truncated 1 chars]`, true],
  ])('output of %d characters', async (length, output, truncated) => {
    const { request: hook } = request('after_create', `printf 'x%.0s' $(seq ${length})`);
    expect(await runHook(hook)).toMatchObject({ output, outputTruncated: truncated });
  });

  it.each([
    ['the final newline only', "printf 'a\\n\\n'", 'a\n'],
    ['a last line without a newline as it is', "printf 'a\\nb'", 'a\nb'],
    ['nothing when only a newline was printed', 'echo', ''],
    ['a final newline that arrives on its own', "printf a; sleep 0.05; printf '\\n'", 'a'],
  ])('reports the output without %s, as Lorenz does', async (_case, command, output) => {
    const { request: hook } = request('after_create', command);
    expect(await runHook(hook)).toMatchObject({ output, outputTruncated: false });
  });

  it('does not count the final newline as a dropped character', async () => {
    const fits = request('after_create', "printf 'x%.0s' $(seq 4096); echo");
    expect(await runHook(fits.request)).toMatchObject({
      output: 'x'.repeat(4096),
      outputTruncated: false,
    });
    const over = request('after_create', "printf 'x%.0s' $(seq 4098); echo");
    expect(await runHook(over.request)).toMatchObject({
      output: `${'x'.repeat(4096)}\n[truncated 2 chars]`,
      outputTruncated: true,
    });
  });

  it('trims the error of a failed hook', async () => {
    const { request: hook } = request('after_run', "printf '  out  \\n\\n\\t'; exit 1");
    expect(await runHook(hook)).toMatchObject({
      output: '  out  \n\n\t',
      error: 'hook failed with status 1:   out',
    });
    const silent = request('after_run', 'exit 1');
    expect(await runHook(silent.request)).toMatchObject({
      output: '',
      error: 'hook failed with status 1:',
    });
  });

  it('truncates a long failure error the same way', async () => {
    const { request: hook } = request('after_run', `printf 'y%.0s' $(seq 5000); exit 1`);
    const message = await runHook(hook);
    const prefix = 'hook failed with status 1: ';
    const dropped = prefix.length + 5000 - 4096;
    expect(message).toMatchObject({ outputTruncated: true, errorTruncated: true });
    expect(message?.error).toBe(
      `${prefix}${'y'.repeat(4096 - prefix.length)}\n[truncated ${dropped} chars]`,
    );
  });

  it('a template that cannot render emits one failed message and no started', async () => {
    const { events, request: hook } = request('before_run', 'echo {{ issue.nope }}');
    await expect(runHook(hook)).rejects.toMatchObject({
      code: 'template_render_error',
      message: 'undefined variable: issue.nope, line:1, col:9',
    });
    expect(events).toEqual([
      {
        type: 'hook_execution',
        message: {
          status: 'failed',
          hookName: 'before_run',
          command: 'echo {{ issue.nope }}',
          cwd: place.workspace,
          exitCode: null,
          output: '',
          outputTruncated: false,
          error: 'undefined variable: issue.nope, line:1, col:9',
          errorTruncated: false,
          durationMs: 0,
          slot: 0,
        },
      },
    ]);
  });

  it('best-effort hooks report the failure on stderr and do not throw', async () => {
    for (const hookName of ['after_run', 'before_remove'] as const) {
      const { events, request: hook } = request(hookName, 'exit 2');
      await expect(runHook(hook)).resolves.toMatchObject({ status: 'failed', exitCode: 2 });
      expect(events.at(-1)).toEqual({
        type: 'stderr',
        message: `Ignoring ${hookName} hook failure: hook failed with status 2:`,
        slot: 0,
      });
    }
  });

  it('refuses to run in a workspace swapped for a symlink out of the root', async () => {
    const swapped = join(place.root, 'ENG-8');
    const elsewhere = join(place.base, 'elsewhere');
    await mkdir(swapped);
    await mkdir(elsewhere);
    await rm(swapped, { recursive: true });
    await symlink(elsewhere, swapped);
    const { events, request: hook } = request('before_run', 'touch marker', { workspace: swapped });
    await expect(runHook(hook)).rejects.toMatchObject({
      code: 'workspace_unsafe_symlink',
      message: `unsafe symlink in workspace path: ${swapped}`,
    });
    expect(hookMessages(events)).toEqual([
      expect.objectContaining({
        status: 'failed',
        command: 'touch marker',
        error: `unsafe symlink in workspace path: ${swapped}`,
        exitCode: null,
      }),
    ]);
    expect(await executor.pathKind(join(elsewhere, 'marker'))).toBe('missing');
  });
});
