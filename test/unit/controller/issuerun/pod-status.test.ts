import { describe, expect, it } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import { mapPodStatus } from '../../../../src/controller/issuerun/pod-status.js';
import { encodeTerminationSummary } from '../../../../src/runner/summary.js';
import type { SlotErrorCode } from '../../../../src/workflow/errors.js';
import { agentStatus } from '../../../support/fakes/objects.js';

const created = new Date('2026-01-01T00:00:00Z');
const options = (afterMs: number) => ({
  now: new Date(created.getTime() + afterMs),
  imagePullGraceMs: 60_000,
  pendingTimeoutMs: 300_000,
});

const pod = (status: V1Pod['status']): V1Pod => ({
  metadata: { name: 'p', creationTimestamp: created },
  status,
});

const waiting = (reason: string, message = 'detail') =>
  pod({
    phase: 'Pending',
    containerStatuses: [agentStatus({ waiting: { reason, message } })],
  });

const terminatedAgent = (exitCode: number, message?: string, reason = 'Error') =>
  pod({
    phase: exitCode === 0 ? 'Succeeded' : 'Failed',
    containerStatuses: [agentStatus({ terminated: { exitCode, reason, message } })],
  });

const summary = (errorCode: SlotErrorCode, error: string) =>
  encodeTerminationSummary({
    v: 1,
    slot: 0,
    succeeded: false,
    errorCode,
    error,
    turns: 0,
    trail: [],
    records: 2,
  });

/** A Pod no node can take (the scheduler's condition). */
const unschedulable = pod({
  phase: 'Pending',
  conditions: [
    { type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/1 nodes' },
  ],
});

describe('pod status mapping', () => {
  it.each<[string, V1Pod, number, string, string, RegExp]>([
    ['created', pod({ phase: 'Pending' }), 0, 'Pending', 'Pending', /starting/],
    ['running', pod({ phase: 'Running' }), 0, 'Running', 'Running', /running/],
    ['succeeded', terminatedAgent(0), 0, 'Succeeded', 'Succeeded', /succeeded/],
    [
      'image pull within grace',
      waiting('ErrImagePull', 'no such image'),
      1000,
      'Pending',
      'Pending',
      /no such image/,
    ],
    [
      'image pull after grace',
      waiting('ImagePullBackOff', 'back-off pulling'),
      61_000,
      'Failed',
      'ImagePullFailed',
      /container agent: ImagePullBackOff: back-off pulling/,
    ],
    [
      'invalid image name at once',
      waiting('InvalidImageName', 'bad ref'),
      0,
      'Failed',
      'ImagePullFailed',
      /bad ref/,
    ],
    [
      'config error after grace',
      waiting('CreateContainerConfigError', 'secret "keys" not found'),
      61_000,
      'Failed',
      'CreateContainerConfigError',
      /secret "keys" not found/,
    ],
    ['unschedulable within timeout', unschedulable, 1000, 'Pending', 'Pending', /0\/1 nodes/],
    [
      'unschedulable after timeout',
      unschedulable,
      300_000,
      'Failed',
      'Unschedulable',
      /0\/1 nodes/,
    ],
    [
      'oom',
      terminatedAgent(137, undefined, 'OOMKilled'),
      0,
      'Failed',
      'OOMKilled',
      /container agent was OOMKilled \(exit code 137\)/,
    ],
    [
      // As the real node reports it (test/runtime): the kernel killed the hook, the biggest
      // process of the container's cgroup; the runner outlived it, left its summary and
      // exited 1; containerd still says OOMKilled. The OOM is the reason, not the summary.
      'oom of a hook, the runner outliving it',
      terminatedAgent(1, summary('hook_killed', 'hook killed by SIGKILL'), 'OOMKilled'),
      0,
      'Failed',
      'OOMKilled',
      /container agent was OOMKilled \(exit code 1\)/,
    ],
    [
      'evicted',
      pod({ phase: 'Failed', reason: 'Evicted', message: 'low on memory' }),
      0,
      'Failed',
      'PodEvicted',
      /low on memory/,
    ],
    [
      'deadline',
      pod({ phase: 'Failed', reason: 'DeadlineExceeded', message: 'too long' }),
      0,
      'Failed',
      'DeadlineExceeded',
      /too long/,
    ],
    [
      'hook failed',
      terminatedAgent(1, summary('hook_failed', 'hook failed with status 3: boom')),
      0,
      'Failed',
      'HookFailed',
      /status 3: boom/,
    ],
    [
      'hook timed out',
      terminatedAgent(1, summary('hook_timed_out', 'hook timed out after 100ms')),
      0,
      'Failed',
      'HookTimedOut',
      /after 100ms/,
    ],
    [
      'agent failed',
      terminatedAgent(1, summary('acp_turn_failed', 'acp_turn_failed: refusal')),
      0,
      'Failed',
      'AgentFailed',
      /refusal/,
    ],
    [
      'inputs tampered',
      terminatedAgent(1, summary('input_digest_mismatch', 'prompt-0.md')),
      0,
      'Failed',
      'InputsInvalid',
      /prompt-0.md/,
    ],
    [
      'a code this build does not know',
      terminatedAgent(
        1,
        JSON.stringify({ v: 1, succeeded: false, errorCode: 'newer_code', hooks: [] }),
      ),
      0,
      'Failed',
      'AgentFailed',
      /^newer_code$/,
    ],
    [
      'no summary',
      terminatedAgent(2, 'garbage'),
      0,
      'Failed',
      'PodFailed',
      /container agent exited with code 2: garbage/,
    ],
  ])('%s', (_case, input, afterMs, phase, reason, message) => {
    const outcome = mapPodStatus(input, options(afterMs));
    expect(outcome.phase).toBe(phase);
    expect(outcome.reason).toBe(reason);
    expect(outcome.message).toMatch(message);
    expect(outcome.finished).toBe(phase === 'Succeeded' || phase === 'Failed');
  });

  it('says when to look again while waiting out a grace', () => {
    expect(mapPodStatus(waiting('ErrImagePull'), options(20_000)).recheckAfterMs).toBe(40_000);
  });

  describe('a deleted Pod its node never stops (node lost)', () => {
    // Deleted with a 30 s grace at created + 10 s: its grace ends at created + 40 s.
    const deleted = (status: V1Pod['status']): V1Pod => ({
      metadata: {
        name: 'p',
        creationTimestamp: created,
        deletionTimestamp: new Date(created.getTime() + 40_000),
      },
      spec: { containers: [], nodeName: 'worker-7' },
      status,
    });
    const running = deleted({
      phase: 'Running',
      conditions: [{ type: 'DisruptionTarget', status: 'True', reason: 'DeletionByTaintManager' }],
    });

    it.each<[string, V1Pod, number, string, string]>([
      ['running, within its grace', running, 20_000, 'Running', 'Running'],
      ['running, 14 s past its grace', running, 54_000, 'Running', 'Running'],
      ['running, 15 s past its grace', running, 55_000, 'Failed', 'NodeLost'],
      ['pending, 15 s past its grace', deleted({ phase: 'Pending' }), 55_000, 'Failed', 'NodeLost'],
      [
        'ended before: its own verdict',
        deleted({ phase: 'Succeeded' }),
        90_000,
        'Succeeded',
        'Succeeded',
      ],
    ])('%s', (_case, input, afterMs, phase, reason) => {
      const outcome = mapPodStatus(input, options(afterMs));
      expect(outcome.phase).toBe(phase);
      expect(outcome.reason).toBe(reason);
    });

    it('names the node and the taint, and says when to look again until then', () => {
      const lost = mapPodStatus(running, options(60_000));
      expect(lost.message).toMatch(/node worker-7 has not stopped it 15 s later/);
      expect(lost.message).toMatch(/DeletionByTaintManager/);
      expect(lost.finished).toBe(true);
      expect(mapPodStatus(running, options(20_000)).recheckAfterMs).toBe(35_000);
    });
  });
});
