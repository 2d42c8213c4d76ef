import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { mkdir, readFile, readdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createLocalExecutor } from '../../../src/executor/local.js';
import { runIssueLifecycle, type LifecycleOptions } from '../../../src/workspace/lifecycle.js';
import type { AgentStep, AgentStepContext } from '../../../src/workspace/agent-step.js';
import { parseConfig } from '../../../src/workflow/config.js';
import type { LorenzEvent } from '../../../src/workflow/events.js';
import { normalizeIssue } from '../../../src/workflow/issue.js';
import { FOUR_HOOKS_RAN, quickLoginEnv, useTempDir } from '../../support/workspace.js';

const executor = createLocalExecutor();
let base: string;
let root: string;
let log: string;

useTempDir('lorenz-life-', 'test', async (dir) => {
  base = dir;
  root = join(base, 'root');
  log = join(base, 'hooks.log');
  await writeFile(log, '');
});

/** Every hook appends `<name> <cwd>` to the log, so order and place are observable. */
const logging = (name: string) => `echo "${name} $PWD" >> "$HOOK_LOG"`;
const ALL_HOOKS = {
  after_create: logging('after_create'),
  before_run: logging('before_run'),
  after_run: logging('after_run'),
  before_remove: logging('before_remove'),
};

function setup(
  front: Record<string, unknown>,
  labels: string[] = [],
  overrides: Partial<LifecycleOptions> = {},
): { events: LorenzEvent[]; options: LifecycleOptions } {
  const events: LorenzEvent[] = [];
  const { config } = parseConfig({ workspace: { root }, ...front });
  const env: NodeJS.ProcessEnv = { ...quickLoginEnv(base), HOOK_LOG: log };
  delete env.LORENZ_WORKSPACE_ROOT;
  return {
    events,
    options: {
      config,
      issue: normalizeIssue({ identifier: 'ENG/9', title: 'Nine', labels }),
      executor,
      emit: (event) => events.push(event),
      attempt: null,
      env,
      ...overrides,
    },
  };
}

async function logLines(): Promise<string[]> {
  return (await readFile(log, 'utf8')).split('\n').filter(Boolean);
}

const types = (events: LorenzEvent[]) =>
  events.map((event) =>
    event.type === 'hook_execution'
      ? `${event.message.hookName}:${event.message.status}`
      : event.type,
  );

describe('runIssueLifecycle', () => {
  it('runs a solo workspace through every hook in order and removes it', async () => {
    const { events, options } = setup({ hooks: ALL_HOOKS });
    const summary = await runIssueLifecycle(options);
    const workspace = join(root, 'ENG_9');
    expect(summary).toEqual({
      identifier: 'ENG/9',
      succeeded: true,
      slots: [{ slot: 0, workspace, succeeded: true, turns: 0 }],
    });
    expect(types(events)).toEqual([
      'workspace_prepared',
      ...FOUR_HOOKS_RAN,
      'workspace_removed',
      'run_completed',
    ]);
    expect(events[0]).toEqual({
      type: 'workspace_prepared',
      message: { path: workspace, created: true, slot: 0 },
    });
    expect(events.at(-1)).toEqual({ type: 'run_completed', message: summary });
    expect(await logLines()).toEqual(
      ['after_create', 'before_run', 'after_run', 'before_remove'].map(
        (name) => `${name} ${workspace}`,
      ),
    );
    expect(await executor.pathKind(workspace)).toBe('missing');
  });

  it('runs after_create only for a new directory', async () => {
    const first = setup({ hooks: ALL_HOOKS }, [], { cleanup: false });
    await runIssueLifecycle(first.options);
    const second = setup({ hooks: ALL_HOOKS }, [], { cleanup: false });
    await runIssueLifecycle(second.options);
    expect(second.events[0]).toMatchObject({ message: { created: false } });
    expect((await logLines()).map((line) => line.split(' ')[0])).toEqual([
      'after_create',
      'before_run',
      'after_run',
      'before_run',
      'after_run',
    ]);
    expect(await executor.pathKind(join(root, 'ENG_9'))).toBe('directory');
  });

  it('hands the agent its context and records turns, usage and failure', async () => {
    const seen: AgentStepContext[] = [];
    const agent: AgentStep = async (context) => {
      seen.push(context);
      return { ok: false, code: 'acp_turn_failed', message: 'acp_turn_failed: refusal', turns: 2 };
    };
    const { events, options } = setup({ hooks: ALL_HOOKS }, [], { agent, attempt: 3 });
    const summary = await runIssueLifecycle(options);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({
      workspace: join(root, 'ENG_9'),
      slot: 0,
      ensembleSize: 1,
      attempt: 3,
      issue: { identifier: 'ENG/9' },
    });
    expect(summary.succeeded).toBe(false);
    expect(summary.slots[0]).toMatchObject({
      succeeded: false,
      errorCode: 'acp_turn_failed',
      error: 'acp_turn_failed: refusal',
      turns: 2,
    });
    // after_run and cleanup still happen after a failed agent.
    expect(types(events)).toContain('after_run:completed');
    expect(types(events)).toContain('workspace_removed');
  });

  it('runs after_run when the agent throws, and when it succeeds records usage', async () => {
    const throwing: AgentStep = async () => {
      throw new Error('bridge crashed');
    };
    const failed = setup({ hooks: ALL_HOOKS }, [], { agent: throwing });
    expect((await runIssueLifecycle(failed.options)).slots[0]).toMatchObject({
      succeeded: false,
      errorCode: 'workspace_error',
      error: 'bridge crashed',
    });
    expect(types(failed.events)).toContain('after_run:completed');

    const usage = { inputTokens: 1, outputTokens: 2, totalTokens: 3 };
    const ok = setup({}, [], { agent: async () => ({ ok: true, turns: 4, usage }) });
    expect((await runIssueLifecycle(ok.options)).slots[0]).toMatchObject({
      succeeded: true,
      turns: 4,
      usage,
    });
  });

  it.each([
    ['after_create', 'exit 4', 'hook_failed', 'hook failed with status 4:'],
    ['before_run', 'exit 5', 'hook_failed', 'hook failed with status 5:'],
    ['before_run', 'sleep 1000', 'hook_timed_out', 'hook timed out after 200ms'],
    [
      'before_run',
      'echo {{ issue.nope }}',
      'template_render_error',
      'undefined variable: issue.nope, line:1, col:9',
    ],
  ])(
    'a failing %s (%s) skips the agent, runs after_run once the attempt began, and cleans up',
    async (name, command, code, error) => {
      let agentRan = false;
      const { events, options } = setup(
        // Only the sleeping hook should time out: a login shell under load can take 300 ms.
        {
          hooks: {
            ...ALL_HOOKS,
            [name]: command,
            timeout_ms: code === 'hook_timed_out' ? 200 : 30_000,
          },
        },
        [],
        { agent: async () => ((agentRan = true), { ok: true, turns: 1 }), hookKillGraceMs: 500 },
      );
      const summary = await runIssueLifecycle(options);
      expect(summary.succeeded).toBe(false);
      expect(summary.slots[0]).toMatchObject({ errorCode: code, error, turns: 0 });
      expect(agentRan).toBe(false);
      // The attempt begins with before_run: after_run follows it even when it failed.
      const attemptBegan = name === 'before_run';
      expect(types(events).includes('after_run:started')).toBe(attemptBegan);
      expect(types(events).slice(-4)).toEqual([
        'before_remove:started',
        'before_remove:completed',
        'workspace_removed',
        'run_completed',
      ]);
    },
  );

  it('ignores failing best-effort hooks and reports them on stderr', async () => {
    const { events, options } = setup({
      hooks: { after_run: 'echo bye; exit 3', before_remove: 'exit 1' },
    });
    const summary = await runIssueLifecycle(options);
    expect(summary.succeeded).toBe(true);
    const stderr = events.filter((event) => event.type === 'stderr').map((event) => event.message);
    expect(stderr).toEqual([
      'Ignoring after_run hook failure: hook failed with status 3: bye',
      'Ignoring before_remove hook failure: hook failed with status 1:',
    ]);
    expect(types(events)).toContain('workspace_removed');
  });

  it('runs an ensemble label as parallel slots, each in <root>/<id>/<slot> with its own hooks', async () => {
    const { events, options } = setup({ hooks: ALL_HOOKS }, ['ensemble:3'], { cleanup: false });
    const summary = await runIssueLifecycle(options);
    const workspaces = [0, 1, 2].map((slot) => join(root, 'ENG_9', String(slot)));
    expect(summary.slots.map((slot) => slot.workspace)).toEqual(workspaces);
    expect(summary.succeeded).toBe(true);
    expect((await readdir(join(root, 'ENG_9'))).sort()).toEqual(['0', '1', '2']);
    const lines = await logLines();
    for (const workspace of workspaces) {
      expect(
        lines.filter((line) => line.endsWith(` ${workspace}`)).map((l) => l.split(' ')[0]),
      ).toEqual(['after_create', 'before_run', 'after_run']);
    }
    const slotsOfHooks = events.flatMap((event) =>
      event.type === 'hook_execution' && event.message.status === 'completed'
        ? [event.message.slot]
        : [],
    );
    expect(slotsOfHooks.sort()).toEqual([0, 0, 0, 1, 1, 1, 2, 2, 2]);
  });

  it('removes an ensemble issue directory with its slots, leaving no empty <root>/<id>/', async () => {
    const { options } = setup({ hooks: ALL_HOOKS }, ['ensemble:2']);
    const summary = await runIssueLifecycle(options);
    expect(summary.succeeded).toBe(true);
    expect(existsSync(join(root, 'ENG_9'))).toBe(false);
    expect(existsSync(root)).toBe(true);
  });

  it('runs only the requested slots', async () => {
    const { options } = setup({ agent: { ensemble_size: 4 } }, [], { slots: [2], cleanup: false });
    const summary = await runIssueLifecycle(options);
    expect(summary.slots.map((slot) => slot.slot)).toEqual([2]);
    expect(await readdir(join(root, 'ENG_9'))).toEqual(['2']);
  });

  it('in shared mode uses the root itself, overlays skills there and never removes it', async () => {
    const skill = join(base, 'skills', 'lint');
    await mkdir(skill, { recursive: true });
    await writeFile(join(skill, 'SKILL.md'), 'lint');
    const seen: string[] = [];
    const { events, options } = setup(
      { workspace: { root, isolation: 'none' }, agent: { skills: [skill] } },
      [],
      { agent: async ({ workspace }) => (seen.push(workspace), { ok: true, turns: 1 }) },
    );
    const summary = await runIssueLifecycle(options);
    expect(summary.slots[0]).toMatchObject({ workspace: root, succeeded: true });
    expect(seen).toEqual([root]);
    expect(await readFile(join(root, '.lorenz', 'skills', 'lint', 'SKILL.md'), 'utf8')).toBe(
      'lint',
    );
    expect(types(events)).toEqual(['workspace_prepared', 'skills_synced', 'run_completed']);
    expect(events[1]).toEqual({
      type: 'skills_synced',
      message: { path: root, skills: ['lint'], slot: 0 },
    });
    expect(await executor.pathKind(root)).toBe('directory');
  });

  it('in shared mode an ensemble overlays the skills once and runs every slot in the root', async () => {
    const skill = join(base, 'skills', 'lint');
    await mkdir(skill, { recursive: true });
    await writeFile(join(skill, 'SKILL.md'), 'lint');
    const copies: string[] = [];
    const counting = {
      ...executor,
      copyTree: (from: string, to: string) => (copies.push(to), executor.copyTree(from, to)),
    };
    const { events, options } = setup(
      { workspace: { root, isolation: 'none' }, agent: { skills: [skill] } },
      ['ensemble:3'],
      { executor: counting },
    );
    const summary = await runIssueLifecycle(options);
    expect(summary.succeeded).toBe(true);
    expect(copies).toEqual([join(root, '.lorenz', 'skills', 'lint')]);
    expect(summary.slots.map((slot) => slot.workspace)).toEqual([root, root, root]);
    expect(types(events).filter((type) => type === 'skills_synced')).toHaveLength(3);
    expect(await readFile(join(root, '.lorenz', 'skills', 'lint', 'SKILL.md'), 'utf8')).toBe(
      'lint',
    );
  });

  it('a missing skill source fails the slot after after_create, before before_run', async () => {
    const { events, options } = setup({
      hooks: ALL_HOOKS,
      agent: { skills: [join(base, 'nope')] },
    });
    const summary = await runIssueLifecycle(options);
    expect(summary.slots[0]).toMatchObject({ errorCode: 'workspace_skill_source_missing' });
    expect(types(events)).toContain('after_create:completed');
    expect(types(events)).not.toContain('before_run:started');
  });

  it('refuses a symlinked root without creating anything', async () => {
    const real = join(base, 'real-root');
    await mkdir(real);
    await symlink(real, root);
    const { events, options } = setup({ hooks: ALL_HOOKS });
    const summary = await runIssueLifecycle(options);
    expect(summary.slots[0]).toMatchObject({
      errorCode: 'workspace_unsafe_symlink',
      error: `unsafe symlink in workspace path: ${root}`,
    });
    expect(types(events)).toEqual(['run_completed']);
    expect(await readdir(real)).toEqual([]);
  });

  it('refuses before_run in a workspace swapped for a symlink, and does not remove through it', async () => {
    const elsewhere = join(base, 'elsewhere');
    await mkdir(elsewhere);
    await writeFile(join(elsewhere, 'keep.txt'), 'keep');
    const workspace = join(root, 'ENG_9');
    const { events, options } = setup({
      hooks: {
        ...ALL_HOOKS,
        after_create: `cd .. && rmdir ENG_9 && ln -s '${elsewhere}' ENG_9`,
      },
    });
    const summary = await runIssueLifecycle(options);
    const refusal = `unsafe symlink in workspace path: ${workspace}`;
    expect(summary.slots[0]).toMatchObject({
      errorCode: 'workspace_unsafe_symlink',
      error: refusal,
    });
    expect(types(events)).not.toContain('before_run:started');
    expect(types(events)).not.toContain('workspace_removed');
    expect(events).toContainEqual({
      type: 'stderr',
      message: `Not removing workspace ${workspace}: ${refusal}`,
      slot: 0,
    });
    expect(await readFile(join(elsewhere, 'keep.txt'), 'utf8')).toBe('keep');
    expect(await logLines()).toEqual([]);
  });

  it('on cancellation stops the agent and still runs after_run', async () => {
    const controller = new AbortController();
    const agent: AgentStep = ({ signal }) =>
      new Promise((resolve) => {
        signal.addEventListener('abort', () =>
          resolve({ ok: false, code: 'cancelled', message: 'turn cancelled', turns: 1 }),
        );
        setTimeout(() => controller.abort(), 20);
      });
    const { events, options } = setup({ hooks: ALL_HOOKS }, [], {
      agent,
      signal: controller.signal,
    });
    const summary = await runIssueLifecycle(options);
    expect(summary.slots[0]).toMatchObject({ succeeded: false, errorCode: 'cancelled', turns: 1 });
    expect(types(events)).toContain('after_run:completed');
    expect(types(events)).toContain('workspace_removed');
  });
});
