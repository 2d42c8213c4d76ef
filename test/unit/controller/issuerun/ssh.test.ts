// SSH workers on the operator side: every slot's attempt gets a host of worker.ssh_hosts
// (least loaded, ties by list order, never past the per-host cap), recorded in
// status.slots[].host before its Pod exists; the Pod mounts the key Secret into the runner
// only and names the host; a missing Secret or reference waits with a named reason.
import { describe, expect, it } from 'vitest';
import { Reasons, type IssueRun, type SlotStatus } from '../../../../src/api/index.js';
import {
  buildRunPod,
  type RunPodOptions,
} from '../../../../src/controller/issuerun/pod-builder.js';
import { podTemplateProblems } from '../../../../src/controller/shared/pod-template-check.js';
import {
  chooseHosts,
  liveHostLoad,
  type HostChoice,
  type HostChoiceInput,
} from '../../../../src/controller/issuerun/worker-host.js';
import {
  CREATE_INPUTS,
  CREATE_POD,
  RUN,
  STATUS,
  heldStalled,
  issueRun,
  playRun,
  podName,
  runConditions,
  runOnce,
  runPod,
  startedStatus,
  summary,
  withoutVolume,
  workflow,
  workflowText,
  type RunRow,
  type RunStep,
  type RunSummary,
  type Want,
} from '../../../support/fakes/run-table.js';
import { planSsh } from '../../../../src/controller/issuerun/ssh-placement.js';
import { eachNamedCase } from '../../../support/cases.js';

const A = 'w@host-a';
const B = 'w@host-b';
const C = 'w@host-c';

describe('the host of each slot', () => {
  const input = (fields: Partial<HostChoiceInput>): HostChoiceInput => ({
    hosts: [A, B],
    perHostCap: null,
    load: new Map(),
    slots: [{ slot: 0, attempt: 1 }],
    recorded: undefined,
    ...fields,
  });
  const placed = (
    hosts: Record<number, string>,
    fresh = Object.keys(hosts).map(Number),
  ): HostChoice => ({
    kind: 'placed',
    hosts: new Map(Object.entries(hosts).map(([slot, host]) => [Number(slot), host])),
    fresh,
  });
  const recorded = (host: string, attempt = 1): SlotStatus[] => [{ slot: 0, attempt, host }];

  eachNamedCase('%s', chooseHosts, [
    ['an idle pool: the first host', input({}), placed({ 0: A })],
    ['the least loaded host', input({ load: new Map([[A, 2]]) }), placed({ 0: B })],
    [
      'a tie: list order decides',
      input({
        hosts: [A, B, C],
        load: new Map([
          [A, 1],
          [B, 0],
          [C, 0],
        ]),
      }),
      placed({ 0: B }),
    ],
    [
      'an ensemble spreads, each slot counting the ones placed before it',
      input({
        hosts: [A, B, C],
        slots: [0, 1, 2, 3].map((slot) => ({ slot, attempt: 1 })),
        load: new Map([[C, 1]]),
      }),
      placed({ 0: A, 1: B, 2: A, 3: B }),
    ],
    [
      'the per-host cap: a full host is passed over however lightly the others load',
      input({
        perHostCap: 2,
        load: new Map([
          [A, 2],
          [B, 1],
        ]),
      }),
      placed({ 0: B }),
    ],
    [
      'every host full: no host, the slot waits',
      input({
        perHostCap: 1,
        load: new Map([
          [A, 1],
          [B, 1],
        ]),
      }),
      {
        kind: 'busy',
        message:
          'every SSH worker runs max_concurrent_agents_per_host agents (w@host-a 1/1, w@host-b 1/1); waiting for one to finish',
      },
    ],
    [
      'an ensemble that does not fit now: none of its slots is placed',
      input({
        perHostCap: 1,
        load: new Map([[A, 1]]),
        slots: [0, 1].map((slot) => ({ slot, attempt: 1 })),
      }),
      { kind: 'busy', message: expect.stringContaining('w@host-b 1/1') as unknown as string },
    ],
    [
      'an ensemble larger than the hosts take together: never',
      input({ perHostCap: 1, slots: [0, 1, 2].map((slot) => ({ slot, attempt: 1 })) }),
      {
        kind: 'never',
        message:
          '3 slots run at once, and worker.ssh_hosts (2) × max_concurrent_agents_per_host (1) take 2',
      },
    ],
    [
      'a retry after ssh_connect: another host than the one that failed',
      input({ slots: [{ slot: 0, attempt: 2, avoid: A }] }),
      placed({ 0: B }),
    ],
    [
      'a retry after ssh_connect: another host even when more loaded',
      input({ slots: [{ slot: 0, attempt: 2, avoid: A }], load: new Map([[B, 3]]) }),
      placed({ 0: B }),
    ],
    [
      'a retry after ssh_connect with no other host that has room: the same host',
      input({
        perHostCap: 1,
        slots: [{ slot: 0, attempt: 2, avoid: A }],
        load: new Map([[B, 1]]),
      }),
      placed({ 0: A }),
    ],
    [
      'a retry after ssh_connect with a single host: that host',
      input({ hosts: [A], slots: [{ slot: 0, attempt: 2, avoid: A }] }),
      placed({ 0: A }),
    ],
    [
      'a restart: the host recorded for the attempt is kept, not chosen again',
      input({ recorded: recorded(B), load: new Map([[B, 5]]) }),
      placed({ 0: B }, []),
    ],
    [
      'a restart: the recorded host is kept even over the cap (its Pod may be running)',
      input({ perHostCap: 1, recorded: recorded(B), load: new Map([[B, 1]]) }),
      placed({ 0: B }, []),
    ],
    [
      "a host recorded for an earlier attempt is not this attempt's",
      input({ slots: [{ slot: 0, attempt: 2 }], recorded: recorded(B, 1) }),
      placed({ 0: A }),
    ],
  ]);
});

describe('the load of each host', () => {
  const run = (
    name: string,
    slots: SlotStatus[],
    workflowName = 'wf',
    uid = `uid-${name}`,
  ): IssueRun => ({
    ...issueRun({ name, uid, status: { slots } }),
    spec: { ...issueRun().spec, workflowRef: { name: workflowName } },
  });
  it('counts the live slots with a host of the runs of the same Workflow', () => {
    const runs = [
      run('r1', [
        { slot: 0, phase: 'Running', host: A },
        { slot: 1, phase: 'Pending', reason: 'SshHostAssigned', host: B },
      ]),
      // Ended, waiting out a backoff, or with no host: nothing runs on a host.
      run('r2', [
        { slot: 0, phase: 'Succeeded', host: A },
        { slot: 1, phase: 'Failed', host: A },
        { slot: 2, phase: 'Pending', reason: 'RetryScheduled', host: A },
        { slot: 3, phase: 'Running' },
      ]),
      // Another Workflow's hosts are its own.
      run('r3', [{ slot: 0, phase: 'Running', host: A }], 'other'),
      // The slots being placed are left out; the run's other slots count.
      run('self', [
        { slot: 0, phase: 'Pending', host: A },
        { slot: 1, phase: 'Running', host: A },
      ]),
    ];
    expect(liveHostLoad(runs, 'wf', { uid: 'uid-self', placing: [0] })).toEqual(
      new Map([
        [A, 2],
        [B, 1],
      ]),
    );
  });
});

describe('the run Pod of a slot on an SSH worker', () => {
  const base: RunPodOptions = {
    run: { name: RUN, namespace: 'ns', uid: 'uid' },
    workflowName: 'wf',
    podTemplate: { spec: { containers: [{ name: 'agent', image: 'example.com/agent:1' }] } },
    slot: 0,
    attempt: 1,
    operatorImage: 'lorenz:test',
    inputsConfigMap: `${RUN}-inputs`,
    inputsDigest: 'sha256:x',
    issueState: 'Todo',
    hooksTimeoutMs: 60_000,
    activeDeadlineSeconds: 3600,
  };
  it.each([
    ['without SSH workers: no volume, no mount, no flags', undefined],
    ['with SSH workers', { secretName: 'worker-ssh', host: B }],
  ])('%s', (_name, ssh) => {
    const pod = buildRunPod({ ...base, ssh });
    const [agent] = pod.spec?.containers ?? [];
    const [init] = pod.spec?.initContainers ?? [];
    const volume = pod.spec?.volumes?.find((each) => each.name === 'lorenz-ssh');
    const mount = agent?.volumeMounts?.find((each) => each.name === 'lorenz-ssh');
    const command = agent?.command ?? [];
    if (!ssh) {
      expect([volume, mount]).toEqual([undefined, undefined]);
      expect(command.some((arg) => arg.startsWith('--ssh') || arg === '--known-hosts')).toBe(false);
      return;
    }
    // Read-only files, 0440 as the other Secrets: the runner's uid reads them by fsGroup.
    expect(volume).toEqual({
      name: 'lorenz-ssh',
      secret: { secretName: 'worker-ssh', defaultMode: 0o440 },
    });
    expect(mount).toEqual({ name: 'lorenz-ssh', mountPath: '/lorenz/ssh', readOnly: true });
    expect(command.slice(-6)).toEqual([
      '--ssh-key',
      '/lorenz/ssh/ssh-privatekey',
      '--known-hosts',
      '/lorenz/ssh/known_hosts',
      '--ssh-host',
      B,
    ]);
    // The agent container only, and never as variables.
    expect(init?.volumeMounts?.some((each) => each.name === 'lorenz-ssh')).toBe(false);
    expect(JSON.stringify(agent?.env ?? [])).not.toContain('worker-ssh');
    expect(agent?.envFrom).toBeUndefined();
  });

  it('reserves the mount path and the volume name from the podTemplate', () => {
    const problems = podTemplateProblems({
      spec: {
        containers: [
          { name: 'agent', volumeMounts: [{ name: 'lorenz-ssh', mountPath: '/lorenz/ssh/x' }] },
        ],
        volumes: [{ name: 'lorenz-ssh', emptyDir: {} }],
      },
    }).join('\n');
    expect(problems).toMatch(/reserved by Lorenz \(it is, is inside or is above \/lorenz\/ssh\)/);
    expect(problems).toContain('lorenz-ssh');
  });
});

/** The fakes' WORKFLOW.md with a worker section. */
const sshWorkflow = (cap: number | null, options: { ensembleSize?: number } = {}) =>
  workflowText(options).replace(
    'hooks:\n',
    `worker:\n  ssh_hosts: ["${A}", "${B}"]\n${cap === null ? '' : `  max_concurrent_agents_per_host: ${cap}\n`}hooks:\n`,
  );
const withKey = (spec: Partial<ReturnType<typeof workflow>['spec']> = {}) =>
  workflow({ worker: { sshKeySecretRef: { name: 'worker-ssh' } }, ...spec });
const GET_KEY = 'GET secrets/worker-ssh';
const KEY = { match: GET_KEY, answer: { body: { metadata: { name: 'worker-ssh' } } } };

/** Another run of the Workflow, its slot 0 live on `host`. */
const busyRun = (name: string, host: string): IssueRun =>
  issueRun({
    name,
    uid: `uid-${name}`,
    status: {
      ...startedStatus(1, 'Running'),
      slots: [{ slot: 0, attempt: 1, phase: 'Running', reason: 'Running', host }],
    },
  });
const onHost = (host: string) =>
  ({
    spec: {
      containers: [{ command: expect.arrayContaining(['--ssh-host', host]) as unknown }],
    },
  }) as const;
const failedOn = (host: string, errorCode: 'ssh_connect' | 'hook_failed') => ({
  run: issueRun({
    spec: { retries: 1 },
    status: {
      ...startedStatus(1, 'Running'),
      slots: [{ slot: 0, attempt: 1, phase: 'Running', podName: podName(0), host }],
    },
  }),
  pods: [
    runPod({
      phase: 'Failed',
      agent: summary({ succeeded: false, errorCode, error: `${errorCode}: ${host}` }),
    }),
  ],
});

/** A run whose slot `attempt` has its host stored and no Pod yet. */
const hostStored = (
  host: string,
  { attempt = 1, spec }: { attempt?: number; spec?: Partial<IssueRun['spec']> } = {},
): IssueRun =>
  issueRun({
    ...(spec ? { spec } : {}),
    status: {
      ...(attempt === 1 ? { phase: 'Pending' } : startedStatus(1, 'Pending')),
      slots: [
        {
          slot: 0,
          attempt,
          phase: 'Pending',
          reason: Reasons.SshHostAssigned,
          podName: podName(0, attempt),
          host,
        },
      ],
    },
  });
/** A single reconcile that finds the key Secret: GET it, then `actions`. */
const keyFound = (actions: string[], want: Omit<Want<RunSummary>, 'actions'>) =>
  runOnce({ actions: [GET_KEY, ...actions], ...want }, { answers: [KEY] });
/** The first reconcile of an SSH run, the key Secret found: the host is stored, then the Pod. */
const placedOnce = (want: Omit<Want<RunSummary>, 'actions'>, pods = [0]) =>
  keyFound([STATUS, CREATE_INPUTS, ...pods.map(CREATE_POD), STATUS], want);
/** A failed attempt's reconcile: a retry is scheduled. */
const retryScheduled = (status: Partial<RunSummary>): RunStep => ({
  logs: [{ slot: 0, completed: true }],
  want: {
    actions: [STATUS],
    status: { reason: Reasons.RetryScheduled, ...status },
    result: { requeueAfter: 10_000 },
  },
});
const RETRY_POD = `POST pods/${podName(0, 2)}`;
/** The second attempt's reconcile after the backoff: the host is stored, then its Pod. */
const retryPlaced = (want: Omit<Want<RunSummary>, 'actions'>): RunStep => ({
  advanceMs: 10_000,
  answers: [KEY],
  want: {
    actions: [GET_KEY, STATUS, `POST configmaps/${RUN}-inputs-2`, RETRY_POD, STATUS],
    ...want,
  },
});

const rows: RunRow[] = [
  {
    name: 'ssh_hosts without spec.worker.sshKeySecretRef: no Pod, the run says what is missing',
    run: issueRun(),
    snapshot: sshWorkflow(null),
    steps: [
      {
        want: heldStalled(
          Reasons.SshKeySecretRefMissing,
          'WORKFLOW.md sets worker.ssh_hosts but Workflow wf has no spec.worker.sshKeySecretRef: name a Secret with the keys ssh-privatekey and known_hosts',
          [],
          10_000,
        ),
      },
    ],
  },
  {
    name: 'the key Secret does not exist: no Pod, the run waits for it by name',
    run: issueRun(),
    snapshot: sshWorkflow(null),
    workflow: withKey(),
    steps: [
      {
        want: heldStalled(
          Reasons.SshKeyNotFound,
          'waiting for Secret worker-ssh (spec.worker.sshKeySecretRef of Workflow wf): not found',
          [GET_KEY],
          10_000,
        ),
      },
    ],
  },
  {
    name: 'first reconcile: the host is stored first, then the Pod mounts the key and names the host',
    run: issueRun(),
    snapshot: sshWorkflow(null),
    workflow: withKey(),
    steps: placedOnce({
      status: {
        inputsConfigMap: `${RUN}-inputs`,
        slots: [`${podName(0)} Pending/Pending`],
        hosts: [A],
      },
      bodies: {
        // The first write: the host, before the inputs or the Pod exist.
        [STATUS]: [
          {
            op: 'add',
            path: '/status',
            value: {
              phase: 'Pending',
              slots: [
                {
                  slot: 0,
                  attempt: 1,
                  host: A,
                  reason: Reasons.SshHostAssigned,
                  podName: podName(0),
                },
              ],
            },
          },
        ],
        [CREATE_POD(0)]: {
          spec: {
            containers: [
              {
                command: expect.arrayContaining([
                  '--ssh-key',
                  '/lorenz/ssh/ssh-privatekey',
                  '--known-hosts',
                  '/lorenz/ssh/known_hosts',
                  '--ssh-host',
                  A,
                ]) as unknown,
              },
            ],
            volumes: expect.arrayContaining([
              { name: 'lorenz-ssh', secret: { secretName: 'worker-ssh', defaultMode: 0o440 } },
            ]) as unknown,
          },
        },
      },
    }),
  },
  {
    name: 'without ssh_hosts: no key, no host, even with spec.worker',
    run: issueRun(),
    workflow: withKey(),
    steps: [
      {
        want: {
          actions: [CREATE_INPUTS, CREATE_POD(0), STATUS],
          status: { hosts: [null] },
          bodies: {
            [CREATE_POD(0)]: withoutVolume('lorenz-ssh'),
          },
        },
      },
    ],
  },
  {
    name: "the least loaded host: another run's slot holds the first",
    run: issueRun(),
    otherRuns: [busyRun('other', A)],
    snapshot: sshWorkflow(null),
    workflow: withKey(),
    steps: placedOnce({ status: { hosts: [B] }, bodies: { [CREATE_POD(0)]: onHost(B) } }),
  },
  {
    name: 'an ensemble: its slots spread over the hosts',
    run: issueRun(),
    snapshot: sshWorkflow(null, { ensembleSize: 2 }),
    workflow: withKey(),
    steps: placedOnce(
      {
        status: { hosts: [A, B] },
        bodies: { [CREATE_POD(0)]: onHost(A), [CREATE_POD(1)]: onHost(B) },
      },
      [0, 1],
    ),
  },
  {
    name: 'every host at max_concurrent_agents_per_host: no Pod, Pending SshHostsBusy, a requeue',
    run: issueRun(),
    otherRuns: [busyRun('other-a', A), busyRun('other-b', B)],
    snapshot: sshWorkflow(1),
    workflow: withKey(),
    steps: keyFound([STATUS], {
      status: {
        phase: 'Pending',
        reason: Reasons.SshHostsBusy,
        message: expect.stringContaining('w@host-a 1/1, w@host-b 1/1') as unknown as string,
        conditions: runConditions.progressing(Reasons.SshHostsBusy),
        slots: [],
      },
      result: { requeueAfter: 5000 },
    }),
  },
  {
    name: 'a restart after the host was stored: the Pod goes to that host, not chosen again',
    run: hostStored(B),
    snapshot: sshWorkflow(null),
    workflow: withKey(),
    steps: keyFound([CREATE_INPUTS, CREATE_POD(0), STATUS], {
      status: { hosts: [B], slots: [`${podName(0)} Pending/Pending`] },
      bodies: { [CREATE_POD(0)]: onHost(B) },
    }),
  },
  {
    name: 'a retry after ssh_connect: the next attempt goes to another host, stored first',
    ...failedOn(A, 'ssh_connect'),
    snapshot: sshWorkflow(null),
    workflow: withKey(),
    steps: [
      retryScheduled({ hosts: [A] }),
      retryPlaced({
        status: { hosts: [B], slots: [`${podName(0, 2)} Pending/Pending`] },
        bodies: {
          [STATUS]: [
            {
              value: {
                slots: [{ slot: 0, attempt: 2, host: B, reason: Reasons.SshHostAssigned }],
              },
            },
          ],
          [RETRY_POD]: onHost(B),
        },
      }),
    ],
  },
  {
    name: 'a retry after a hook failure: the host is chosen as any other (least loaded, list order)',
    ...failedOn(A, 'hook_failed'),
    snapshot: sshWorkflow(null),
    workflow: withKey(),
    steps: [
      retryScheduled({}),
      retryPlaced({ status: { hosts: [A] }, bodies: { [RETRY_POD]: onHost(A) } }),
    ],
  },
  {
    name: "a restart between a retry's stored host and its Pod: the Pod is made on that host, not counted deleted",
    run: hostStored(B, { attempt: 2, spec: { retries: 1 } }),
    pods: [
      runPod({ phase: 'Failed', agent: summary({ succeeded: false, errorCode: 'ssh_connect' }) }),
    ],
    snapshot: sshWorkflow(null),
    workflow: withKey(),
    steps: keyFound([`POST configmaps/${RUN}-inputs-2`, RETRY_POD, STATUS], {
      status: { hosts: [B], slots: [`${podName(0, 2)} Pending/Pending`] },
      bodies: { [RETRY_POD]: onHost(B) },
    }),
  },
  {
    name: 'cancelled with a host recorded and no Pod yet: the slot ends Cancelled with the run',
    run: hostStored(A, { spec: { cancelRequested: true } }),
    snapshot: sshWorkflow(null),
    workflow: withKey(),
    steps: [
      {
        want: {
          actions: [STATUS],
          status: {
            phase: 'Failed',
            reason: Reasons.Cancelled,
            slots: [`${podName(0)} Failed/Cancelled`],
            hosts: [A],
          },
        },
      },
    ],
  },
  {
    name: 'a run that ends before its Pod (a template error) ends the slots it had placed',
    run: hostStored(A),
    snapshot: sshWorkflow(null).replace('Work on', '{{ issue.nothing }} Work on'),
    workflow: withKey(),
    steps: keyFound([STATUS], {
      status: {
        phase: 'Failed',
        reason: Reasons.TemplateError,
        slots: [`${podName(0)} Failed/TemplateError`],
        hosts: [A],
      },
    }),
  },
];

describe('IssueRun reconciler: SSH workers', () => {
  it.each(rows.map((row) => [row.name, row] as const))('%s', async (_name, row) => {
    await playRun(row);
  });
});

describe('SSH placement, at scale', () => {
  // Listing the namespace's runs is O(runs): eagerly, every start of every run paid it, and
  // 10 000 runs took 55 ms of CPU each (bench:reconcile). Only SSH workers need the list.
  it('does not list the runs of a Workflow without SSH workers', async () => {
    let listed = 0;
    const plan = await planSsh({
      client: undefined as never,
      workflow: undefined as never,
      config: { worker: { sshHosts: [] } } as never,
      run: undefined as never,
      slots: [],
      runs: () => {
        listed += 1;
        return [];
      },
    });
    expect(plan).toEqual({ kind: 'local' });
    expect(listed).toBe(0);
  });
});
