// Runs admitted by the real Kueue (sigs.k8s.io/kueue, built from Go modules by hack/tools.sh,
// its webhooks on loopback): two teams in two namespaces whose ClusterQueues share a cohort.
// The quota is never exceeded, the team borrowing is preempted when the other needs its
// share (a failed attempt, Preempted, retried), queued attempts start when quota frees, an
// ensemble is admitted whole, a Workflow without queueName is not queued at all, and a
// LocalQueue that does not exist holds a run back, with no Pod, until it does.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { startKueue } from '../../hack/cluster/kueue.js';
import { KUEUE_TERMINATION_CONDITION, type IssueRun } from '../../src/api/index.js';
import {
  issueRunManifest,
  podTemplate,
  startTestController,
  until,
  useOperatorEnv,
  useStarted,
  type OperatorEnv,
} from './operator-harness.js';

const QUEUE_LABEL = 'kueue.x-k8s.io/queue-name';
/** Each run Pod's agent asks for this much cpu: the quotas below are counted in it. */
const POD_CPU = '100m';

/** A ClusterQueue of `cpu` (one flavor), in `cohort` when given, taking lent quota back. */
const clusterQueue = (name: string, cpu: string, cohort?: string) => ({
  apiVersion: 'kueue.x-k8s.io/v1beta2',
  kind: 'ClusterQueue',
  metadata: { name },
  spec: {
    ...(cohort ? { cohortName: cohort } : {}),
    namespaceSelector: {},
    preemption: { reclaimWithinCohort: 'Any', withinClusterQueue: 'Never' },
    resourceGroups: [
      {
        coveredResources: ['cpu'],
        flavors: [{ name: 'default-flavor', resources: [{ name: 'cpu', nominalQuota: cpu }] }],
      },
    ],
  },
});

const localQueue = (name: string, namespace: string, clusterQueueName: string) => ({
  apiVersion: 'kueue.x-k8s.io/v1beta2',
  kind: 'LocalQueue',
  metadata: { name, namespace },
  spec: { clusterQueue: clusterQueueName },
});

/** Two teams sharing the cohort `agents` (200m each), and a queue of its own for ensembles. */
const kueueObjects = [
  {
    apiVersion: 'kueue.x-k8s.io/v1beta2',
    kind: 'ResourceFlavor',
    metadata: { name: 'default-flavor' },
  },
  clusterQueue('cq-a', '200m', 'agents'),
  clusterQueue('cq-b', '200m', 'agents'),
  clusterQueue('cq-ensemble', '200m'),
  localQueue('lq-a', 'team-a', 'cq-a'),
  localQueue('lq-b', 'team-b', 'cq-b'),
  localQueue('lq-ensemble', 'team-b', 'cq-ensemble'),
]
  .map((object) => stringify(object))
  .join('---\n');

const cpuPodTemplate = {
  spec: {
    containers: podTemplate.spec.containers.map((container) => ({
      ...container,
      resources: { requests: { cpu: POD_CPU } },
    })),
  },
};

const api = (namespace: string, plural: string, name = '') =>
  `/apis/lorenz.dev/v1alpha1/namespaces/${namespace}/${plural}${name ? `/${name}` : ''}`;

async function createWorkflowIn(
  env: OperatorEnv,
  namespace: string,
  name: string,
  text: string,
  queueName?: string,
): Promise<void> {
  await env.admin.request({
    method: 'POST',
    path: api(namespace, 'workflows'),
    body: {
      apiVersion: 'lorenz.dev/v1alpha1',
      kind: 'Workflow',
      metadata: { name },
      spec: { workflow: text, podTemplate: cpuPodTemplate, ...(queueName ? { queueName } : {}) },
    },
  });
}

async function createRunIn(
  env: OperatorEnv,
  namespace: string,
  name: string,
  workflow: string,
  spec: object = {},
): Promise<void> {
  await env.admin.request({
    method: 'POST',
    path: api(namespace, 'issueruns'),
    body: issueRunManifest(
      name,
      workflow,
      { id: name, identifier: name.toUpperCase(), title: name },
      spec,
    ),
  });
}

const getRunIn = (env: OperatorEnv, namespace: string, name: string) =>
  env.admin.request<IssueRun>({ path: api(namespace, 'issueruns', name) });

const podsIn = async (env: OperatorEnv, namespace: string): Promise<V1Pod[]> =>
  (await env.admin.request<{ items: V1Pod[] }>({ path: `/api/v1/namespaces/${namespace}/pods` }))
    .items;

const gated = (pod: V1Pod) => (pod.spec?.schedulingGates ?? []).length > 0;
const terminal = (pod: V1Pod) =>
  pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
/**
 * Kueue has stopped it (preempted): marked TerminationTarget, or being deleted. Its quota is
 * Kueue's to give again at once, while the Pod still runs its grace period (after_run): Kueue
 * admitted the owner's Pod beside such a Pod, which counted as five holding quota of four.
 */
const stopping = (pod: V1Pod) =>
  pod.metadata?.deletionTimestamp !== undefined ||
  (pod.status?.conditions ?? []).some(
    (condition) => condition.type === KUEUE_TERMINATION_CONDITION && condition.status === 'True',
  );
/** A Pod Kueue let go and that has not ended nor been stopped by Kueue: it holds quota. */
const holdsQuota = (pod: V1Pod) =>
  pod.metadata?.labels?.[QUEUE_LABEL] !== undefined &&
  !gated(pod) &&
  !terminal(pod) &&
  !stopping(pod);

const finishedOk = (run: IssueRun) =>
  run.status?.conditions?.some((c) => c.type === 'Succeeded' && c.status === 'True');

/** The run once it has succeeded (`what`: the wait, as `until` names it). */
const succeeded = (env: OperatorEnv, namespace: string, name: string, what: string, ms: number) =>
  until(
    what,
    async () => {
      const run = await getRunIn(env, namespace, name);
      return finishedOk(run) ? run : undefined;
    },
    ms,
  );

describe('operator: run Pods admitted by Kueue', () => {
  const env = useOperatorEnv(false);
  const kueue = useStarted(
    'Kueue',
    () => startKueue(env.cp),
    (running) => running.stop(),
  );
  let objectsDir = '';
  /** The most Pods holding quota at once in the cohort, as a poll every 100 ms saw it. */
  let mostHolding = 0;
  let watching = true;
  let watcher: Promise<void> = Promise.resolve();

  beforeAll(async () => {
    expect(kueue.process.hasExited()).toBe(false);
    for (const namespace of ['team-a', 'team-b']) {
      await env.kubectl('create', 'namespace', namespace);
      // No serviceaccount controller runs here: ServiceAccount admission needs the default one.
      await env.kubectl('-n', namespace, 'create', 'serviceaccount', 'default');
    }
    objectsDir = await mkdtemp(join(tmpdir(), 'lorenz-kueue-it-'));
    const file = join(objectsDir, 'queues.yaml');
    await writeFile(file, kueueObjects);
    await env.kubectl('apply', '-f', file);
    // Watching the whole cluster (the chart without watchNamespace): both teams' namespaces.
    env.controller = await startTestController(env.controllerConfig, '', {});
    const long = env.workflowText({ prompt: '@sleep 600000', maxRetryBackoffMs: 500 });
    const short = env.workflowText({ prompt: '@sleep 12000\n@write done.txt ok' });
    await createWorkflowIn(env, 'team-a', 'wf-a', long, 'lq-a');
    await createWorkflowIn(env, 'team-b', 'wf-b', short, 'lq-b');
    await createWorkflowIn(env, 'team-a', 'wf-free', env.workflowText());
    watcher = (async () => {
      while (watching) {
        const pods = [...(await podsIn(env, 'team-a')), ...(await podsIn(env, 'team-b'))];
        const holding = pods.filter(
          (pod) => holdsQuota(pod) && pod.metadata?.labels?.[QUEUE_LABEL] !== 'lq-ensemble',
        ).length;
        mostHolding = Math.max(mostHolding, holding);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
  }, 240_000);

  afterAll(async () => {
    watching = false;
    await watcher.catch(() => undefined);
    if (objectsDir) await rm(objectsDir, { recursive: true, force: true });
  });

  it(
    'keeps the cohort to its quota, preempts the borrower for the owner, and starts queued attempts as quota frees',
    { timeout: 240_000 },
    async () => {
      // Five team-a runs of 100m: four fit the cohort (200m own, 200m borrowed), one waits.
      const teamA = ['a-1', 'a-2', 'a-3', 'a-4', 'a-5'];
      for (const name of teamA) await createRunIn(env, 'team-a', name, 'wf-a', { retries: 1 });
      const queued = await until(
        'one team-a run to be Queued, four Running',
        async () => {
          const runs = await Promise.all(teamA.map((name) => getRunIn(env, 'team-a', name)));
          const waiting = runs.filter((run) => run.status?.reason === 'Queued');
          const running = runs.filter((run) => run.status?.phase === 'Running');
          return waiting.length === 1 && running.length === 4 ? waiting[0] : undefined;
        },
        120_000,
      );
      // The slot names the LocalQueue and says what Kueue says.
      expect(queued.status?.phase).toBe('Pending');
      let said = '';
      await until(
        "the queued run to say Kueue's reason",
        async () => {
          const run = await getRunIn(env, 'team-a', queued.metadata.name ?? '');
          said = run.status?.slots?.[0]?.message ?? '';
          return /^queued in LocalQueue lq-a: .*insufficient unused quota for cpu/.test(said)
            ? run
            : undefined;
        },
        60_000,
      ).catch((error: unknown) => {
        throw new Error(`${String(error)}; the slot said: ${said}`);
      });

      // A Workflow without queueName is not queued: its run starts and ends though the
      // cohort is full, and its Pod never saw Kueue.
      await createRunIn(env, 'team-a', 'free-1', 'wf-free');
      const free = await succeeded(env, 'team-a', 'free-1', 'the unqueued run to succeed', 90_000);
      expect(free.status?.phase).toBe('Succeeded');
      const freePod = (await podsIn(env, 'team-a')).find(
        (pod) => pod.metadata?.labels?.['lorenz.dev/issuerun'] === 'free-1',
      );
      expect(freePod?.metadata?.labels?.[QUEUE_LABEL]).toBeUndefined();

      // Team b claims its own 200m: Kueue takes it back from team a's borrowed runs.
      for (const name of ['b-1', 'b-2']) await createRunIn(env, 'team-b', name, 'wf-b');
      const notes = await until(
        'two team-a attempts to fail Preempted and be retried',
        async () => {
          const { items } = await env.admin.request<{
            items: { reason?: string; note?: string }[];
          }>({ path: '/apis/events.k8s.io/v1/namespaces/team-a/events' });
          const retries = items
            .filter((event) => event.reason === 'RetryScheduled')
            .map((event) => event.note ?? '');
          return retries.length >= 2 ? retries : undefined;
        },
        120_000,
      );
      // "slot 0: attempt 1 failed (Preempted: Kueue stopped the attempt (WorkloadEvictedDueToPreempted): Preempted to …); …"
      expect(notes).toHaveLength(2);
      for (const note of notes) {
        expect(note).toMatch(
          /attempt 1 failed \(Preempted: Kueue stopped the attempt \(WorkloadEvictedDueToPreempted\): Preempted to/,
        );
      }
      await until(
        'two team-a runs on their second attempt',
        async () => {
          const runs = await Promise.all(teamA.map((name) => getRunIn(env, 'team-a', name)));
          const second = runs.filter((run) => run.status?.slots?.[0]?.podName?.endsWith('-0-2'));
          return second.length === 2 ? second : undefined;
        },
        60_000,
      );
      // Team b's runs run in the share they reclaimed, and end.
      for (const name of ['b-1', 'b-2']) {
        await succeeded(env, 'team-b', name, `team-b run ${name} to succeed`, 120_000);
      }
      // Their quota is free again: two of team a's three queued attempts start.
      await until(
        'four team-a runs to run again',
        async () => {
          const runs = await Promise.all(teamA.map((name) => getRunIn(env, 'team-a', name)));
          const running = runs.filter((run) => run.status?.phase === 'Running');
          const waiting = runs.filter((run) => run.status?.reason === 'Queued');
          return running.length === 4 && waiting.length === 1 ? running : undefined;
        },
        120_000,
      );
      // 400m across the cohort, 100m a Pod: never more than four at once.
      expect(mostHolding).toBeGreaterThanOrEqual(4);
      expect(mostHolding).toBeLessThanOrEqual(4);
    },
  );

  it(
    'admits an ensemble whole: none of its Pods runs until all of them fit',
    { timeout: 180_000 },
    async () => {
      const text = env.workflowText({ agent: '  ensemble_size: 3' });
      await createWorkflowIn(env, 'team-b', 'wf-ensemble', text, 'lq-ensemble');
      await createRunIn(env, 'team-b', 'e-1', 'wf-ensemble');
      // 3 × 100m against 200m: the group does not fit, so not one of its Pods is let go.
      const run = await until(
        'the ensemble to be Queued',
        async () => {
          const current = await getRunIn(env, 'team-b', 'e-1');
          const slots = current.status?.slots ?? [];
          return slots.length === 3 && slots.every((slot) => slot.reason === 'Queued')
            ? current
            : undefined;
        },
        90_000,
      );
      expect(run.status?.reason).toBe('Queued');
      await new Promise((resolve) => setTimeout(resolve, 5000));
      const pods = (await podsIn(env, 'team-b')).filter(
        (pod) => pod.metadata?.labels?.['lorenz.dev/issuerun'] === 'e-1',
      );
      expect(pods).toHaveLength(3);
      expect(pods.filter(gated)).toHaveLength(3);
      expect(
        new Set(pods.map((pod) => pod.metadata?.labels?.['kueue.x-k8s.io/pod-group-name'])).size,
      ).toBe(1);

      // Room for all three: they are admitted together, and the run succeeds.
      await env.kubectl(
        'patch',
        'clusterqueue',
        'cq-ensemble',
        '--type=json',
        '-p',
        JSON.stringify([
          {
            op: 'replace',
            path: '/spec/resourceGroups/0/flavors/0/resources/0/nominalQuota',
            value: '300m',
          },
        ]),
      );
      const done = await succeeded(env, 'team-b', 'e-1', 'the ensemble to succeed', 120_000);
      expect(done.status?.slots?.map((slot) => slot.phase)).toEqual([
        'Succeeded',
        'Succeeded',
        'Succeeded',
      ]);
    },
  );
  it(
    'makes no Pod for a LocalQueue that does not exist, and starts once it does',
    { timeout: 120_000 },
    async () => {
      await createWorkflowIn(env, 'team-b', 'wf-lost', env.workflowText(), 'lq-later');
      await createRunIn(env, 'team-b', 'lost-1', 'wf-lost');
      const stalled = await until(
        'the run to stall on the missing LocalQueue',
        async () => {
          const run = await getRunIn(env, 'team-b', 'lost-1');
          return run.status?.reason === 'LocalQueueNotFound' ? run : undefined;
        },
        60_000,
      );
      expect(stalled.status?.message).toBe(
        'waiting for LocalQueue lq-later in namespace team-b (spec.queueName of Workflow wf-lost): not found; no Pod is made until it exists',
      );
      expect(stalled.status?.conditions?.find((c) => c.type === 'Stalled')?.status).toBe('True');
      const pods = (await podsIn(env, 'team-b')).filter(
        (pod) => pod.metadata?.labels?.['lorenz.dev/issuerun'] === 'lost-1',
      );
      expect(pods).toEqual([]);
      const file = join(objectsDir, 'later.yaml');
      await writeFile(file, stringify(localQueue('lq-later', 'team-b', 'cq-b')));
      await env.kubectl('apply', '-f', file);
      await succeeded(
        env,
        'team-b',
        'lost-1',
        'the run to succeed once its LocalQueue exists',
        90_000,
      );
    },
  );
});
