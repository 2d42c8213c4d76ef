import { describe, expect, it } from 'vitest';
import type { IssueRun, SlotStatus } from '../../../../src/api/index.js';
import { createRedactor } from '../../../../src/runner/redact.js';
import {
  archivedObject,
  attemptOutcome,
  attemptRecord,
  eventRecords,
  pushedCommitLines,
  runRecord,
} from '../../../../src/controller/archive/mapping.js';
import { secretForms, secretRefs } from '../../../../src/controller/archive/redaction.js';
import type { PodObject } from '../../../../src/controller/shared/resources.js';

const SECRET = 'lin_api_SECRETVALUE123';
const TOKEN = 'lzt1.default.run.1.abcdefghijkl';
const redactor = createRedactor([SECRET, TOKEN]);
const none = createRedactor([]);

function run(status: IssueRun['status'] = {}): IssueRun {
  return {
    apiVersion: 'lorenz.dev/v1alpha1',
    kind: 'IssueRun',
    metadata: {
      name: 'board-eng-42',
      namespace: 'default',
      uid: 'uid-1',
      creationTimestamp: '2026-01-02T03:04:05Z',
      annotations: { 'lorenz.dev/issue-id': 'issue-id-1', note: `key ${SECRET}` },
      managedFields: [{ manager: 'lorenz', operation: 'Update' }],
    },
    spec: {
      workflowRef: { name: 'board' },
      issue: {
        id: 'issue-id-1',
        identifier: 'ENG-42',
        title: `Fix it (${SECRET})`,
        state: 'Done',
        url: 'https://example.test/ENG-42',
      },
    },
    status,
  };
}

describe('runRecord: an IssueRun as archived', () => {
  it.each([
    {
      name: 'a finished run',
      status: {
        phase: 'Succeeded' as const,
        reason: 'IssueCompleted',
        message: `done, key was ${SECRET}`,
        attempt: 2,
        startTime: '2026-01-02T03:04:06Z',
        completionTime: '2026-01-02T03:05:00Z',
        git: { branch: 'lorenz/eng-42' },
        usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 },
      },
      expected: {
        phase: 'Succeeded',
        reason: 'IssueCompleted',
        message: 'done, key was [redacted]',
        attempts: 2,
        startedAt: '2026-01-02T03:04:06Z',
        finishedAt: '2026-01-02T03:05:00Z',
        branch: 'lorenz/eng-42',
        usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 },
      },
    },
    {
      name: 'a run with no status yet',
      status: undefined,
      expected: {
        phase: 'Pending',
        attempts: 0,
        usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
      },
    },
  ])('$name', ({ status, expected }) => {
    const record = runRecord(run(status), redactor, '2026-01-02T04:00:00Z');
    expect(record).toMatchObject({
      uid: 'uid-1',
      namespace: 'default',
      name: 'board-eng-42',
      workflow: 'board',
      issueId: 'issue-id-1',
      issueIdentifier: 'ENG-42',
      issueTitle: 'Fix it ([redacted])',
      issueState: 'Done',
      issueUrl: 'https://example.test/ENG-42',
      createdAt: '2026-01-02T03:04:05Z',
      deletedAt: '2026-01-02T04:00:00Z',
      ...expected,
    });
    // The object: no managedFields, no secret anywhere.
    expect(JSON.stringify(record)).not.toContain(SECRET);
    expect((record.object.metadata as Record<string, unknown>).managedFields).toBeUndefined();
    expect((record.object.metadata as Record<string, unknown>).annotations).toMatchObject({
      note: 'key [redacted]',
    });
  });

  it('keeps spec and status whole in the object', () => {
    const object = archivedObject(run({ phase: 'Failed', hooks: [] }));
    expect(object).toMatchObject({
      spec: { workflowRef: { name: 'board' } },
      status: { phase: 'Failed' },
    });
  });
});

describe('attemptOutcome: what ended one attempt', () => {
  const slot = (fields: Partial<SlotStatus>): SlotStatus => ({ slot: 0, attempt: 1, ...fields });
  it.each([
    {
      name: 'the slot ended on this attempt',
      status: slot({ phase: 'Failed', reason: 'HookFailed', message: 'before_run exited 1' }),
      expected: { phase: 'Failed', reason: 'HookFailed', message: 'before_run exited 1' },
    },
    {
      name: 'a retry is scheduled: the earlier attempt failed, as the message says',
      status: slot({
        phase: 'Pending',
        reason: 'RetryScheduled',
        message:
          'attempt 1 failed (HookFailed: after_create exited 3); attempt 2 starts at 2026-01-02T03:04:05Z',
      }),
      expected: { phase: 'Failed', reason: 'HookFailed', message: 'after_create exited 3' },
    },
    {
      name: 'a continuation is scheduled: the attempt succeeded',
      status: slot({
        phase: 'Pending',
        reason: 'ContinuationScheduled',
        message: 'attempt 1 succeeded and the issue is still active; attempt 2 starts at x',
      }),
      expected: { phase: 'Succeeded', reason: 'ContinuationScheduled' },
    },
    {
      name: 'only a running status was seen: the Pod phase says',
      status: slot({ phase: 'Running', reason: 'Running' }),
      podPhase: 'Succeeded',
      expected: { phase: 'Succeeded' },
    },
    {
      name: 'nothing known: failed',
      status: undefined,
      expected: { phase: 'Failed' },
    },
  ])('$name', ({ status, podPhase, expected }) => {
    expect(attemptOutcome(status, 1, podPhase)).toMatchObject(expected);
  });
});

describe('attemptRecord', () => {
  it('takes the Pod, the slot status and the log facts, redacted', () => {
    const record = attemptRecord({
      runUid: 'uid-1',
      slot: 0,
      attempt: 1,
      status: {
        slot: 0,
        attempt: 1,
        phase: 'Failed',
        reason: 'HookFailed',
        host: 'worker-1',
        turns: 2,
      },
      pod: {
        name: 'pod-a',
        uid: 'pod-uid',
        slot: 0,
        attempt: 1,
        node: 'node-1',
        image: 'lorenz:1',
      },
      log: {
        hooks: [{ hookName: 'before_run', status: 'failed', output: `token ${TOKEN}` }],
        gitBranch: 'lorenz/eng-42',
        pushedCommits: [`${'c'.repeat(40)} Use ${TOKEN} no more`],
        turns: 3,
        usage: { inputTokens: 1, outputTokens: 2, totalTokens: 3 },
      },
      redactor,
    });
    expect(record).toEqual({
      runUid: 'uid-1',
      slot: 0,
      attempt: 1,
      podName: 'pod-a',
      podUid: 'pod-uid',
      node: 'node-1',
      image: 'lorenz:1',
      host: 'worker-1',
      phase: 'Failed',
      reason: 'HookFailed',
      turns: 3,
      usage: { inputTokens: 1, outputTokens: 2, totalTokens: 3 },
      hooks: [{ hookName: 'before_run', status: 'failed', output: 'token [redacted]' }],
      git: {
        branch: 'lorenz/eng-42',
        pushedCommits: [`${'c'.repeat(40)} Use [redacted] no more`],
      },
    });
  });

  it.each([
    {
      name: 'sha and subject, newest first',
      commits: [
        { sha: 'b'.repeat(40), subject: 'second' },
        { sha: 'a'.repeat(40), subject: 'first' },
      ],
      lines: [`${'b'.repeat(40)} second`, `${'a'.repeat(40)} first`],
    },
    {
      name: 'a subject with a newline in one line, cut at 200 characters',
      commits: [{ sha: 'a'.repeat(40), subject: `two\nlines ${'x'.repeat(300)}` }],
      lines: [`${'a'.repeat(40)} ${`two lines ${'x'.repeat(300)}`.slice(0, 200)}`],
    },
    {
      name: 'entries without a hex sha dropped',
      commits: [{ sha: 'not a sha', subject: 's' }, null, 'x', { subject: 'no sha' }],
      lines: [],
    },
    { name: 'no list', commits: { sha: 'a'.repeat(40) }, lines: [] },
    {
      name: 'at most 50',
      commits: Array.from({ length: 70 }, (_, i) => ({
        sha: i.toString(16).padStart(40, '0'),
        subject: `c${i}`,
      })),
      lines: Array.from({ length: 50 }, (_, i) => `${i.toString(16).padStart(40, '0')} c${i}`),
    },
  ])('keeps the commits of a push record: $name', ({ commits, lines }) => {
    expect(pushedCommitLines(commits)).toEqual(lines);
  });

  it('ignores a slot status of another attempt (the slot moved on)', () => {
    const record = attemptRecord({
      runUid: 'uid-1',
      slot: 0,
      attempt: 1,
      status: { slot: 0, attempt: 2, phase: 'Succeeded', reason: 'Succeeded' },
      pod: { name: 'pod-a', uid: 'pod-uid', slot: 0, attempt: 1, phase: 'Failed' },
      log: undefined,
      redactor: none,
    });
    expect(record).toMatchObject({ phase: 'Failed', hooks: [], turns: 0 });
    expect(record.reason).toBeUndefined();
  });
});

describe('eventRecords', () => {
  it.each([
    {
      name: 'a core Event',
      event: {
        metadata: { uid: 'e1' },
        involvedObject: { kind: 'Pod', name: 'pod-a' },
        type: 'Warning',
        reason: 'BackOff',
        message: `pulling with ${SECRET}`,
        count: 3,
        firstTimestamp: '2026-01-02T03:04:05Z',
        lastTimestamp: '2026-01-02T03:05:05Z',
      },
      expected: {
        uid: 'e1',
        involvedKind: 'Pod',
        involvedName: 'pod-a',
        type: 'Warning',
        reason: 'BackOff',
        message: 'pulling with [redacted]',
        count: 3,
        firstTime: '2026-01-02T03:04:05Z',
        lastTime: '2026-01-02T03:05:05Z',
      },
    },
    {
      name: 'an events.k8s.io Event read through core (eventTime, series)',
      event: {
        metadata: { uid: 'e2' },
        involvedObject: { kind: 'IssueRun', name: 'board-eng-42' },
        type: 'Normal',
        reason: 'HookSucceeded',
        note: 'after_create exited 0',
        eventTime: '2026-01-02T03:04:05.000000Z',
        series: { count: 2, lastObservedTime: '2026-01-02T03:06:00.000000Z' },
      },
      expected: {
        uid: 'e2',
        involvedKind: 'IssueRun',
        message: 'after_create exited 0',
        count: 2,
        firstTime: '2026-01-02T03:04:05.000000Z',
        lastTime: '2026-01-02T03:06:00.000000Z',
      },
    },
  ])('$name', ({ event, expected }) => {
    expect(eventRecords('uid-1', [event], redactor)).toEqual([
      expect.objectContaining({ runUid: 'uid-1', ...expected }),
    ]);
  });

  it('skips an Event without a uid', () => {
    expect(eventRecords('uid-1', [{ reason: 'x' }], none)).toEqual([]);
  });
});

describe('the secrets a run references', () => {
  it("are its Pods' Secret-sourced variables and volumes, and its Workflow's", () => {
    const pod = {
      spec: {
        containers: [
          {
            name: 'agent',
            env: [
              { name: 'A', value: 'plain' },
              {
                name: 'LORENZ_TOOLS_TOKEN',
                valueFrom: { secretKeyRef: { name: 'tok', key: 'token' } },
              },
            ],
            envFrom: [{ secretRef: { name: 'bulk' } }, { configMapRef: { name: 'cm' } }],
          },
        ],
        volumes: [{ name: 'git', secret: { secretName: 'git-creds' } }],
      },
    } as PodObject;
    const workflow = {
      metadata: { name: 'board' },
      spec: {
        trackerSecretRef: { name: 'tracker' },
        git: { credentialsSecretRef: { name: 'gc' } },
      },
    } as never;
    expect(secretRefs([pod], workflow)).toEqual([
      { name: 'tok', key: 'token' },
      { name: 'bulk' },
      { name: 'git-creds' },
      { name: 'tracker', key: 'api_key' },
      { name: 'gc' },
    ]);
  });

  it.each([
    { value: 'ghp_abcdef', forms: ['ghp_abcdef'] },
    { value: ' ghp_abcdef\n', forms: [' ghp_abcdef\n', 'ghp_abcdef', ' ghp_abcdef'] },
    { value: 'x-access-token:ghp_abcdef', forms: ['x-access-token:ghp_abcdef', 'ghp_abcdef'] },
    { value: 'abc', forms: [] },
  ])('the forms of $value that are masked', ({ value, forms }) => {
    expect(new Set(secretForms(value))).toEqual(new Set(forms));
  });
});
