import { describe, expect, it } from 'vitest';
import { createLocalExecutor } from '../../../src/executor/local.js';
import {
  MAX_ARGUMENT_BYTES,
  describeSpawnFailure,
  oversizedArgument,
} from '../../../src/executor/exec-limits.js';
import { runHook } from '../../../src/workspace/hooks.js';
import { normalizeIssue } from '../../../src/workflow/issue.js';
import { hookMessages, hookRequest } from '../../support/hook-request.js';
import { useIssueWorkspace } from '../../support/workspace.js';

const executor = createLocalExecutor();
const place = useIssueWorkspace('lorenz-exec-limits-', 'ENG-1');

describe('oversizedArgument', () => {
  const largest = MAX_ARGUMENT_BYTES - 1;
  it.each([
    ['the largest argument Linux takes', 'x'.repeat(largest), 'linux', null],
    ['one byte more', 'x'.repeat(largest + 1), 'linux', /^command is 131072 bytes, over/],
    ['bytes, not characters, count', 'é'.repeat(70_000), 'linux', /^command is 140000 bytes/],
    ['another platform, where only the total applies', 'x'.repeat(200_000), 'darwin', null],
  ] as const)('%s', (_name, text, platform, expected) => {
    const problem = oversizedArgument(text, platform);
    if (expected === null) expect(problem).toBeNull();
    else expect(problem).toMatch(expected);
  });

  it('names the limit', () => {
    expect(oversizedArgument('x'.repeat(200_000), 'linux')).toBe(
      "command is 200000 bytes, over Linux's limit of 131071 bytes for one exec argument " +
        '(MAX_ARG_STRLEN); pass large data through a file instead',
    );
  });
});

describe.runIf(process.platform === 'linux')('a hook too large to exec', () => {
  it('runs a command right at the limit', async () => {
    const { request } = hookRequest(
      executor,
      place,
      'before_run',
      `: ${'x'.repeat(MAX_ARGUMENT_BYTES - 4)}`,
    );
    expect(await runHook(request)).toMatchObject({ status: 'completed', exitCode: 0 });
  });

  it('fails a fail-fast hook whose rendered command is over the limit, saying which limit', async () => {
    const { events, request } = hookRequest(
      executor,
      place,
      'before_run',
      'echo {{ issue.title }}',
      {
        issue: normalizeIssue({ identifier: 'ENG-1', title: 'y'.repeat(200_000) }),
      },
    );
    await expect(runHook(request)).rejects.toMatchObject({
      code: 'hook_failed',
      message: expect.stringMatching(
        /^hook cannot start: command is 200007 bytes, over Linux's limit of 131071 bytes for one exec argument \(MAX_ARG_STRLEN\)/,
      ),
    });
    // It never ran: one `failed` message, no `started`, no exit code.
    expect(hookMessages(events)).toEqual([
      expect.objectContaining({ status: 'failed', exitCode: null, hookName: 'before_run' }),
    ]);
  });

  it('reports a best-effort hook over the limit on stderr and goes on', async () => {
    const { events, request } = hookRequest(
      executor,
      place,
      'after_run',
      `echo ${'z'.repeat(150_000)}`,
    );
    expect(await runHook(request)).toMatchObject({ status: 'failed' });
    expect(events).toContainEqual(
      expect.objectContaining({
        type: 'stderr',
        message: expect.stringContaining('Ignoring after_run hook failure: hook cannot start: '),
      }),
    );
  });

  it('says ARG_MAX when the environment is what makes the exec too large', async () => {
    const { request } = hookRequest(executor, place, 'before_run', 'true');
    const env: NodeJS.ProcessEnv = { ...request.env };
    for (let index = 0; index < 64; index += 1) env[`BIG_${index}`] = 'v'.repeat(100_000);
    await expect(runHook({ ...request, env })).rejects.toMatchObject({
      code: 'hook_failed',
      message: expect.stringMatching(
        /E2BIG.*exceed the system's limit on exec arguments \(ARG_MAX\)/,
      ),
    });
  });
});

describe('describeSpawnFailure', () => {
  it('leaves other failures as they are', () => {
    expect(describeSpawnFailure('spawn ENOENT')).toBe('spawn ENOENT');
  });
});
