import { describe, expect, it } from 'vitest';
import {
  EVENT_NOTE_LIMIT,
  createRecordParser,
  gitEvent,
  hookEventNote,
  hookEventReason,
  hookStatusEntry,
  mergeHookEntries,
  type GitRecord,
  type HookRecord,
} from '../../../../src/controller/events/records.js';
import {
  createEventRecorder,
  type GitEventInput,
} from '../../../../src/controller/events/recorder.js';
import type {
  GitWorkspaceMessage,
  HookExecutionMessage,
  LorenzEvent,
} from '../../../../src/workflow/events.js';
import { FakeKubeClient, conflict } from '../../../support/fakes/controller.js';
import {
  KubeApiError,
  type KubeClient,
  type RequestOptions,
} from '../../../../src/controller/runtime/client.js';
import { eachNamedCase } from '../../../support/cases.js';

const started: HookExecutionMessage = {
  status: 'started',
  hookName: 'after_create',
  command: 'git clone x .',
  cwd: '/w',
};
const completed: HookExecutionMessage = {
  ...started,
  status: 'completed',
  exitCode: 0,
  output: 'ok',
  outputTruncated: false,
  error: null,
  errorTruncated: false,
  durationMs: 12,
};
const line = (event: LorenzEvent) => `${JSON.stringify(event)}\n`;

describe('runner record stream', () => {
  it('splits chunks into lines, skips noise, and numbers hook records', () => {
    const hooks: HookRecord[] = [];
    const all: string[] = [];
    const parser = createRecordParser({
      onHook: (hook) => hooks.push(hook),
      onRecord: (record) => all.push(record.type),
    });
    const text = `noise\n${line({ type: 'hook_execution', message: started })}{"broken"\n${line({ type: 'stderr', message: 'x' })}${line({ type: 'hook_execution', message: completed })}`;
    for (let at = 0; at < text.length; at += 7) parser.push(text.slice(at, at + 7));
    parser.end();
    expect(all).toEqual(['hook_execution', 'stderr', 'hook_execution']);
    expect(hooks.map((hook) => [hook.seq, hook.message.status])).toEqual([
      [0, 'started'],
      [1, 'completed'],
    ]);
    expect(parser.hookCount).toBe(2);
  });

  it('keeps one status entry per slot and hook, the latest winning, in lifecycle order', () => {
    const merged = mergeHookEntries(
      [hookStatusEntry({ ...started, hookName: 'before_run' }, 0), hookStatusEntry(started, 0)],
      [hookStatusEntry(completed, 0), hookStatusEntry(started, 1)],
    );
    expect(merged.map((entry) => `${entry.slot}/${entry.name}/${entry.status}`)).toEqual([
      '0/after_create/completed',
      '0/before_run/started',
      '1/after_create/started',
    ]);
    expect(merged[0]).toMatchObject({ exitCode: 0, output: 'ok', durationMs: 12 });
  });

  eachNamedCase('maps a %s record to its Event reason', hookEventReason, [
    ['started', started, 'HookStarted'],
    ['completed', completed, 'HookSucceeded'],
    [
      'failed',
      { ...completed, status: 'failed', exitCode: 1, error: 'hook failed with status 1: x' },
      'HookFailed',
    ],
    [
      'timed out',
      { ...completed, status: 'failed', exitCode: null, error: 'hook timed out after 50ms' },
      'HookTimedOut',
    ],
  ]);

  it('writes notes of at most 1 KiB', () => {
    const big = { ...completed, output: 'é'.repeat(5000) };
    const note = hookEventNote(big, 0);
    expect(Buffer.byteLength(note)).toBeLessThanOrEqual(1024);
    expect(note.startsWith('after_create completed in slot 0 (exit 0, 12 ms): éé')).toBe(true);
    expect(hookEventNote(started, 0)).toBe('after_create started in slot 0: git clone x .');
  });
});

describe('git_workspace records', () => {
  const clone: GitWorkspaceMessage = {
    step: 'clone',
    status: 'completed',
    branch: 'lorenz/eng-1-fix',
    detail: 'cloned https://git.example.com/acme/app.git on lorenz/eng-1-fix (new branch)',
    durationMs: 800,
    slot: 0,
  };

  /** Record `seq` of attempt 1 of slot 0 of the run eng-1, as the log reader hands it over. */
  const gitInput = (seq: number, message: GitWorkspaceMessage): GitEventInput => ({
    run: { name: 'eng-1', namespace: 'ns', uid: '3f2b9c1e-5d4a' },
    podName: 'eng-1-0-1',
    slot: 0,
    attempt: 1,
    seq,
    message,
    now: new Date('2026-03-01T10:00:00Z'),
  });

  it('are numbered on their own count, apart from hook records', () => {
    const gits: GitRecord[] = [];
    const hooks: HookRecord[] = [];
    const parser = createRecordParser({
      onGit: (git) => gits.push(git),
      onHook: (hook) => hooks.push(hook),
    });
    parser.push(line({ type: 'git_workspace', message: clone }));
    parser.push(line({ type: 'hook_execution', message: started }));
    parser.push(line({ type: 'git_workspace', message: { ...clone, step: 'merge_up' } }));
    // Not a git message: ignored.
    parser.push('{"type":"git_workspace","message":{"step":"rm -rf","status":"completed"}}\n');
    parser.end();
    expect(gits.map((git) => [git.seq, git.message.step])).toEqual([
      [0, 'clone'],
      [1, 'merge_up'],
    ]);
    expect(hooks.map((hook) => hook.seq)).toEqual([0]);
  });

  it.each<[string, Partial<GitWorkspaceMessage>, ReturnType<typeof gitEvent>]>([
    [
      'a step done is Normal',
      {},
      {
        reason: 'GitWorkspace',
        type: 'Normal',
        note: 'clone completed: cloned https://git.example.com/acme/app.git on lorenz/eng-1-fix (new branch)',
      },
    ],
    [
      'a step undone is a Warning',
      { step: 'merge_up', status: 'warning', detail: 'merging main conflicted; undone' },
      {
        reason: 'GitWorkspaceWarning',
        type: 'Warning',
        note: 'merge_up warning: merging main conflicted; undone',
      },
    ],
    [
      'a failed step is a Warning',
      {
        step: 'setup',
        status: 'failed',
        detail: '  npm ci exited 1  ',
        code: 'workspace_setup_failed',
      },
      { reason: 'GitWorkspaceWarning', type: 'Warning', note: 'setup failed: npm ci exited 1' },
    ],
    [
      'no detail: the step and status alone',
      { step: 'teardown', detail: '' },
      { reason: 'GitWorkspace', type: 'Normal', note: 'teardown completed' },
    ],
  ])('%s', (_name, fields, want) => {
    expect(gitEvent({ ...clone, ...fields })).toEqual(want);
  });

  it('cuts a long detail to the Event note limit', () => {
    const note = gitEvent({ ...clone, detail: 'x'.repeat(5000) }).note;
    expect(Buffer.byteLength(note)).toBeLessThanOrEqual(EVENT_NOTE_LIMIT);
    expect(note.startsWith('clone completed: xxx')).toBe(true);
  });

  it('become Events with a deterministic name, written once', async () => {
    const client = new FakeKubeClient();
    const recorder = createEventRecorder({ client, reportingInstance: 'r1' });
    const input = gitInput(2, { ...clone, status: 'warning', detail: 'merge undone' });
    expect(await recorder.recordGit(input)).toBe(true);
    expect(client.actions[0]?.body).toMatchObject({
      metadata: { name: 'eng-1.3f2b9c1e.0-1-git-2', namespace: 'ns' },
      action: 'GitWorkspace',
      reason: 'GitWorkspaceWarning',
      type: 'Warning',
      note: 'clone warning: merge undone',
      regarding: { kind: 'IssueRun', name: 'eng-1', uid: '3f2b9c1e-5d4a' },
      related: { kind: 'Pod', name: 'eng-1-0-1' },
    });
    client.answer(conflict('POST events/*'));
    expect(await recorder.recordGit(input)).toBe(false);
  });

  // The apiserver restarting (or etcd away) under a Pod's log must not cost its Events: the
  // chaos suite's restarts scenario lost two before writes were tried again.
  describe('an Event write the apiserver cannot take yet', () => {
    const input = gitInput(0, clone);
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6443'), {
      code: 'ECONNREFUSED',
    });
    const unavailable = new KubeApiError(503, { kind: 'Status' }, 'POST', '/apis/events');
    /** Fails with each of `failures` in turn, then answers as the fake does. */
    function flaky(failures: Error[]): { client: KubeClient; posts: () => number } {
      const fake = new FakeKubeClient();
      let calls = 0;
      const client: KubeClient = {
        request: <T>(options: RequestOptions) => {
          const failure = failures[calls];
          calls += 1;
          return failure === undefined ? fake.request<T>(options) : Promise.reject(failure);
        },
        stream: (options) => fake.stream(options),
        close: () => fake.close(),
      };
      return { client, posts: () => calls };
    }
    const retry = { baseMs: 1, maxMs: 4, deadlineMs: 2000 };

    it.each([
      ['connection refused, then 503, then written', [refused, unavailable], true, 3],
      ['429 Too Many Requests, then written', [new KubeApiError(429, {}, 'POST', '/')], true, 2],
      [
        '409 after a write that went through before the cut: not doubled',
        [refused, new KubeApiError(409, { reason: 'AlreadyExists' }, 'POST', '/')],
        false,
        2,
      ],
    ])('%s', async (_name, failures, written, posts) => {
      const { client, posts: count } = flaky(failures);
      const recorder = createEventRecorder({ client, reportingInstance: 'r1', retry });
      expect(await recorder.recordGit(input)).toBe(written);
      expect(count()).toBe(posts);
    });

    it('a refusal that retrying cannot change (403) fails at once', async () => {
      const { client, posts } = flaky([new KubeApiError(403, {}, 'POST', '/')]);
      const recorder = createEventRecorder({ client, reportingInstance: 'r1', retry });
      await expect(recorder.recordGit(input)).rejects.toThrow(/403/);
      expect(posts()).toBe(1);
    });

    it('gives up once the deadline has passed', async () => {
      const { client, posts } = flaky(Array.from({ length: 1000 }, () => unavailable));
      const recorder = createEventRecorder({
        client,
        reportingInstance: 'r1',
        retry: { baseMs: 5, maxMs: 5, deadlineMs: 40 },
      });
      const started = performance.now();
      await expect(recorder.recordGit(input)).rejects.toThrow(/503/);
      // Retried, then stopped by the deadline rather than by running out of answers. How
      // many tries fit in 40 ms depends on the machine's load, so only the bounds are held.
      expect(posts()).toBeGreaterThanOrEqual(2);
      expect(posts()).toBeLessThan(1000);
      expect(performance.now() - started).toBeGreaterThanOrEqual(35);
    });
  });
});
