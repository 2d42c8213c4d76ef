// The agent tools on the run side: every attempt gets a token Secret of its own, made before
// the Pods that mount it, and a finished run's tokens are deleted (revoked) once.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  TOOLS_TOKEN_PREFIX,
  mintToolsToken,
  toolsTokenSecret,
} from '../../../../src/controller/issuerun/tools-token.js';
import { controllerNamespace, parseControllerArgs } from '../../../../src/controller/main.js';
import { failWith } from '../../../support/fakes/controller.js';
import {
  CREATE_INPUTS,
  CREATE_POD,
  RUN,
  RUN_UID,
  STATUS,
  afterLogRead,
  finishedStatus,
  issueRun,
  playRun,
  podName,
  runOnce as once,
  runPod,
  startedStatus,
  summary,
  workflow,
  type RunRow,
} from '../../../support/fakes/run-table.js';

const URL = 'http://lorenz-tools.lorenz-system.svc:8090/mcp';
const createToken = (attempt: number) => `POST secrets/${RUN}-tools-${attempt}`;
const getToken = (attempt: number) => `GET secrets/${RUN}-tools-${attempt}`;
const deleteToken = (attempt: number) => `DELETE secrets/${RUN}-tools-${attempt}`;
const ownedToken = (attempt: number, owner = RUN_UID) => ({
  match: getToken(attempt),
  answer: {
    body: {
      metadata: {
        name: `${RUN}-tools-${attempt}`,
        uid: `secret-${attempt}`,
        ownerReferences: [{ uid: owner, controller: true }],
      },
    },
  },
});

const TOKEN = /^lzt1\.ns\.eng-1\.(\d+)\.[A-Za-z0-9_-]{43}$/;

describe('tools tokens', () => {
  it('have the format the gateway parses: lzt1.<namespace>.<run>.<attempt>.<32 bytes base64url>', () => {
    const token = mintToolsToken('ns', 'eng-1', 3, (size) => Buffer.alloc(size, 0xff));
    expect(token).toBe(`${TOOLS_TOKEN_PREFIX}.ns.eng-1.3.${'_'.repeat(42)}8`);
    expect(mintToolsToken('ns', 'eng-1', 1)).toMatch(TOKEN);
    expect(mintToolsToken('ns', 'eng-1', 1)).not.toBe(mintToolsToken('ns', 'eng-1', 1));
  });

  it('are stored with their sha256 beside them, owned by the run', () => {
    const token = mintToolsToken('ns', 'eng-1', 1);
    const secret = toolsTokenSecret({
      run: { name: 'eng-1', namespace: 'ns', uid: RUN_UID },
      attempt: 1,
      token,
    });
    expect(secret.metadata).toMatchObject({
      name: 'eng-1-tools-1',
      labels: { 'app.kubernetes.io/component': 'tools-token' },
      annotations: {
        'lorenz.dev/token-sha256': createHash('sha256').update(token).digest('hex'),
      },
      ownerReferences: [{ kind: 'IssueRun', uid: RUN_UID, controller: true }],
    });
    expect(Buffer.from(secret.data?.token ?? '', 'base64').toString()).toBe(token);
  });
});

const failed = (attempt: number) =>
  runPod({
    phase: 'Failed',
    attempt,
    agent: summary({ succeeded: false, errorCode: 'hook_failed', error: 'boom' }),
  });
const tokenBody = {
  metadata: {
    labels: { 'app.kubernetes.io/component': 'tools-token' },
    annotations: { 'lorenz.dev/token-sha256': expect.stringMatching(/^[0-9a-f]{64}$/) as unknown },
  },
};
const mountsToken = (attempt: number) => ({
  spec: {
    volumes: expect.arrayContaining([
      {
        name: 'lorenz-tools',
        secret: { secretName: `${RUN}-tools-${attempt}`, defaultMode: 0o440 },
      },
    ]) as unknown,
    containers: [{ command: expect.arrayContaining(['--tools-url', URL]) as unknown }],
  },
});

const rows: RunRow[] = [
  {
    name: 'a new run: the token Secret goes before the Pod (beside the inputs), the Pod mounts it',
    run: issueRun(),
    toolsUrl: URL,
    steps: once({
      actions: [CREATE_INPUTS, createToken(1), CREATE_POD(0), STATUS],
      status: { phase: 'Pending' },
      bodies: { [createToken(1)]: tokenBody, [CREATE_POD(0)]: mountsToken(1) },
    }),
  },
  {
    name: 'the token Secret refused: no Pod is created without it',
    run: issueRun(),
    toolsUrl: URL,
    steps: once(
      {
        actions: [CREATE_INPUTS, createToken(1), STATUS],
        status: { phase: 'Pending', reason: 'InputsCreateFailed' },
        result: { requeueAfter: 1000 },
      },
      { answers: [failWith('POST secrets/*', 403, 'Forbidden')] },
    ),
  },
  {
    name: 'the Workflow turns tools off: no Secret, no tools flags',
    run: issueRun(),
    workflow: workflow({ tools: { enabled: false } }),
    toolsUrl: URL,
    steps: once({ actions: [CREATE_INPUTS, CREATE_POD(0), STATUS], status: { phase: 'Pending' } }),
  },
  {
    name: 'the controller serves no tools: no Secret',
    run: issueRun(),
    steps: once({ actions: [CREATE_INPUTS, CREATE_POD(0), STATUS], status: { phase: 'Pending' } }),
  },
  {
    name: 'a retry: attempt 2 gets its own token, made with its inputs before its Pod',
    run: issueRun({ spec: { retries: 1 }, status: startedStatus(1, 'Running') }),
    pods: [failed(1)],
    toolsUrl: URL,
    steps: [
      afterLogRead({
        actions: [STATUS],
        status: { reason: 'RetryScheduled' },
        result: { requeueAfter: 10_000 },
      }),
      {
        advanceMs: 10_000,
        want: {
          actions: [
            `POST configmaps/${RUN}-inputs-2`,
            createToken(2),
            `POST pods/${podName(0, 2)}`,
            STATUS,
          ],
          status: { phase: 'Pending' },
          bodies: { [createToken(2)]: tokenBody, [`POST pods/${podName(0, 2)}`]: mountsToken(2) },
        },
      },
    ],
  },
  {
    name: 'a finished run: its tokens are deleted once, pinned to the Secret read',
    run: issueRun({ status: { ...finishedStatus(60_000), attempt: 2 } }),
    toolsUrl: URL,
    steps: [
      {
        answers: [ownedToken(1), ownedToken(2)],
        want: {
          actions: [getToken(1), getToken(2), deleteToken(1), deleteToken(2)],
          bodies: { [deleteToken(1)]: { preconditions: { uid: 'secret-1' } } },
        },
      },
      // A resync of the finished run: nothing more to revoke.
      { want: { actions: [] } },
    ],
  },
  {
    name: 'a finished run whose token name is taken by a Secret not its own: left alone',
    run: issueRun({ status: finishedStatus(60_000) }),
    toolsUrl: URL,
    steps: once({ actions: [getToken(1)] }, { answers: [ownedToken(1, 'someone-else')] }),
  },
  {
    name: 'a finished run with no token Secret (tools were off): nothing deleted',
    run: issueRun({ status: finishedStatus(60_000) }),
    toolsUrl: URL,
    steps: once({ actions: [getToken(1)] }),
  },
];

describe('IssueRun reconciler: agent-tools tokens', () => {
  it.each(rows.map((row) => [row.name, row] as const))('%s', async (_name, row) => {
    await playRun(row);
  });
});

describe('controller tools flags', () => {
  it('serve tools on :8090 by default, at the lorenz-tools Service of its namespace', () => {
    const inCluster = controllerNamespace(undefined, () => 'ops\n');
    expect(inCluster).toBe('ops');
    expect(controllerNamespace('lorenz', () => '')).toBe('lorenz');
    const defaults = parseControllerArgs(['--leader-election-namespace', 'lorenz']);
    expect(defaults.toolsBindAddress).toBe(':8090');
    expect(defaults.toolsUrl).toMatch(/^http:\/\/lorenz-tools\.[a-z0-9-]+\.svc:8090\/mcp$/);
    expect(parseControllerArgs(['--tools-url', 'http://gw:1/mcp']).toolsUrl).toBe(
      'http://gw:1/mcp',
    );
    // 0 turns tools off: no gateway, no tokens, no runner flags.
    const off = parseControllerArgs(['--tools-bind-address', '0', '--tools-url', 'http://x']);
    expect(off).toMatchObject({ toolsBindAddress: '0' });
    expect(off.toolsUrl).toBeUndefined();
  });
});
