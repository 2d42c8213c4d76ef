import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  ApiException,
  CoreV1Api,
  PatchStrategy,
  setHeaderOptions,
  type V1ContainerStatus,
  type V1Pod,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControlPlane, type ControlPlane } from '../../hack/cluster/control-plane.js';
import { startProcessNode, type ProcessNode } from '../../hack/process-node/index.js';

const run = promisify(execFile);
const namespace = 'default';
// Every container command carries this marker, so the last test can look for leftovers.
// It is unique per run: mount points are made on the shared root, and another run of this
// file (another developer's `npm test`) must neither see our processes nor lose its paths.
const MARK = `/pn-test-${process.pid}-run`;

describe('process-backed node', () => {
  let cp: ControlPlane;
  let node: ProcessNode;
  let core: CoreV1Api;
  let dataDir: string;

  const kubectl = async (...args: string[]) =>
    (await run(cp.tools.kubectl, ['--kubeconfig', cp.kubeconfigPath, '-n', namespace, ...args]))
      .stdout;

  const readPod = (name: string) => core.readNamespacedPod({ namespace, name });

  async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 60_000) {
    const deadline = Date.now() + ms;
    for (;;) {
      const value = await probe().catch(() => undefined);
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  const podWhere = (name: string, ok: (pod: V1Pod) => boolean) =>
    until(`pod ${name}`, async () => {
      const pod = await readPod(name);
      return ok(pod) ? pod : undefined;
    });
  const phaseIs = (phase: string) => (pod: V1Pod) => pod.status?.phase === phase;
  const status = (pod: V1Pod, container: string): V1ContainerStatus | undefined =>
    [...(pod.status?.containerStatuses ?? []), ...(pod.status?.initContainerStatuses ?? [])].find(
      (s) => s.name === container,
    );
  const sh = (script: string) => ({ command: ['sh', '-c', `${script} # ${MARK}`] });
  const hostVolume = (pod: V1Pod, volume: string) =>
    join(dataDir, 'pods', pod.metadata?.uid ?? '', 'volumes', volume);

  const createPod = (name: string, spec: V1Pod['spec'], meta: V1Pod['metadata'] = {}) =>
    core.createNamespacedPod({
      namespace,
      body: {
        metadata: { name, ...meta },
        spec: { automountServiceAccountToken: false, restartPolicy: 'Never', ...spec! },
      },
    });

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'lorenz-pn-test-'));
    const imageDir = join(dataDir, 'image-content');
    await mkdir(imageDir);
    await writeFile(join(imageDir, 'bundle.txt'), 'from the image map\n');
    cp = await startControlPlane();
    core = cp.kubeConfig.makeApiClient(CoreV1Api);
    node = await startProcessNode({
      controlPlane: cp,
      dataDir,
      imageMap: { 'example.com/pn-image': { [`${MARK}/opt`]: imageDir } },
      log: (l) => process.stderr.write(`[node] ${l}\n`),
    });
  });

  afterAll(async () => {
    await node?.stop();
    await cp?.stop();
    await rm(dataDir, { recursive: true, force: true });
    // Mount points the containers created on the shared root (empty once they are gone).
    await rm(MARK, { recursive: true, force: true });
  });

  it('registers a Ready node with the kubelet endpoint on 127.0.0.1', async () => {
    const n = await core.readNode({ name: node.name });
    expect(n.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    expect(n.status?.addresses).toContainEqual({ type: 'InternalIP', address: '127.0.0.1' });
    expect(n.status?.daemonEndpoints?.kubeletEndpoint?.Port).toBeGreaterThan(0);
    expect(n.status?.capacity?.pods).toBe('110');
  });

  it('runs init then containers with emptyDir/configMap/downwardAPI volumes, env and refreshed annotations', async () => {
    await core.createNamespacedConfigMap({
      namespace,
      body: { metadata: { name: 'pn-config' }, data: { greeting: 'hello', mode: 'fast' } },
    });
    await core.createNamespacedSecret({
      namespace,
      body: { metadata: { name: 'pn-secret' }, stringData: { token: 's3cret' } },
    });
    const volumeMounts = [
      { name: 'work', mountPath: `${MARK}/work` },
      { name: 'config', mountPath: `${MARK}/config`, readOnly: true },
      { name: 'info', mountPath: `${MARK}/info` },
    ];
    await createPod(
      'pn-volumes',
      {
        volumes: [
          { name: 'work', emptyDir: {} },
          {
            name: 'config',
            configMap: { name: 'pn-config', items: [{ key: 'greeting', path: 'greet.txt' }] },
          },
          {
            name: 'info',
            downwardAPI: {
              items: [{ path: 'annotations', fieldRef: { fieldPath: 'metadata.annotations' } }],
            },
          },
        ],
        initContainers: [
          {
            name: 'prepare',
            image: 'busybox',
            ...sh(`echo from-init > ${MARK}/work/init.txt`),
            volumeMounts,
          },
        ],
        containers: [
          {
            name: 'writer',
            image: 'busybox',
            ...sh(
              [
                `echo "init saw: $(cat ${MARK}/work/init.txt)"`,
                `cat ${MARK}/config/greet.txt > ${MARK}/work/out.txt`,
                `touch ${MARK}/config/x 2>/dev/null || echo config-read-only`,
                'echo "env: $GREETING $TOKEN $POD_NAME $APP $CFG_mode $(pwd)"',
                `until grep -q 'phase="two"' ${MARK}/info/annotations; do sleep 0.2; done`,
                `echo seen > ${MARK}/work/annotation-seen`,
              ].join('; '),
            ),
            workingDir: `${MARK}/work`,
            volumeMounts,
            env: [
              {
                name: 'GREETING',
                valueFrom: { configMapKeyRef: { name: 'pn-config', key: 'greeting' } },
              },
              { name: 'TOKEN', valueFrom: { secretKeyRef: { name: 'pn-secret', key: 'token' } } },
              { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
              { name: 'APP', valueFrom: { fieldRef: { fieldPath: "metadata.labels['app']" } } },
            ],
            envFrom: [{ prefix: 'CFG_', configMapRef: { name: 'pn-config' } }],
          },
          {
            name: 'reader',
            image: 'busybox',
            ...sh(
              `until [ -s ${MARK}/work/out.txt ]; do sleep 0.2; done; echo "reader saw: $(cat ${MARK}/work/out.txt)"`,
            ),
            volumeMounts: [{ name: 'work', mountPath: `${MARK}/work` }],
          },
        ],
      },
      { labels: { app: 'pn' }, annotations: { phase: 'one' } },
    );
    const running = await podWhere(
      'pn-volumes',
      (p) => status(p, 'writer')?.state?.running !== undefined,
    );
    expect(status(running, 'prepare')?.state?.terminated?.reason).toBe('Completed');
    const work = hostVolume(running, 'work');
    await until('out.txt in the emptyDir', async () =>
      existsSync(join(work, 'out.txt')) ? true : undefined,
    );
    expect(await readFile(join(work, 'out.txt'), 'utf8')).toBe('hello');
    // The mountPath exists only inside the containers' private mount namespaces.
    expect(existsSync(`${MARK}/work/out.txt`)).toBe(false);

    await core.patchNamespacedPod(
      { namespace, name: 'pn-volumes', body: { metadata: { annotations: { phase: 'two' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const done = await podWhere('pn-volumes', phaseIs('Succeeded'));
    expect(await readFile(join(work, 'annotation-seen'), 'utf8')).toBe('seen\n');
    expect(status(done, 'writer')?.state?.terminated).toMatchObject({
      exitCode: 0,
      reason: 'Completed',
    });
    const conditions = Object.fromEntries(
      (done.status?.conditions ?? []).map((c) => [c.type, c.status]),
    );
    expect(conditions).toMatchObject({ PodScheduled: 'True', Initialized: 'True', Ready: 'False' });
    expect(done.status?.podIP).toBe('127.0.0.1');

    expect(await kubectl('logs', 'pn-volumes', '-c', 'writer')).toBe(
      [
        'init saw: from-init',
        'config-read-only',
        `env: hello s3cret pn-volumes pn fast ${MARK}/work`,
        '',
      ].join('\n'),
    );
    expect(await kubectl('logs', 'pn-volumes', '-c', 'reader')).toBe('reader saw: hello\n');
  });

  it('streams kubectl logs -f until the container ends; --tail and --timestamps work', async () => {
    await createPod('pn-logs', {
      containers: [
        {
          name: 'ticker',
          image: 'busybox',
          ...sh('for i in 1 2 3; do echo line-$i; sleep 0.7; done'),
        },
      ],
    });
    await podWhere('pn-logs', (p) => status(p, 'ticker')?.state?.running !== undefined);
    const follow = spawn(cp.tools.kubectl, [
      '--kubeconfig',
      cp.kubeconfigPath,
      '-n',
      namespace,
      'logs',
      '-f',
      'pn-logs',
    ]);
    let streamed = '';
    let firstChunkAt = 0;
    follow.stdout.on('data', (chunk: Buffer) => {
      firstChunkAt ||= Date.now();
      streamed += chunk.toString();
    });
    const code = await new Promise<number | null>((resolve) => follow.on('close', resolve));
    const endedAt = Date.now();
    expect(code).toBe(0);
    expect(streamed).toBe('line-1\nline-2\nline-3\n');
    // Output arrived while the container was still running, not in one piece at the end.
    expect(endedAt - firstChunkAt).toBeGreaterThan(500);
    expect(await kubectl('logs', 'pn-logs', '--tail=1')).toBe('line-3\n');
    expect(await kubectl('logs', 'pn-logs', '--timestamps', '--tail=1')).toMatch(
      /^\d{4}-\d\d-\d\dT\S+Z line-3\n$/,
    );
  });

  it('reports exit code and termination message; OnFailure restarts; runAsUser applies', async () => {
    await createPod('pn-fail', {
      containers: [
        { name: 'main', image: 'busybox', ...sh('echo boom > /dev/termination-log; exit 3') },
      ],
    });
    await createPod('pn-retry', {
      restartPolicy: 'OnFailure',
      volumes: [{ name: 'work', emptyDir: {} }],
      containers: [
        {
          name: 'main',
          image: 'busybox',
          ...sh(`if [ -f ${MARK}/w/again ]; then exit 0; fi; touch ${MARK}/w/again; exit 1`),
          volumeMounts: [{ name: 'work', mountPath: `${MARK}/w` }],
        },
      ],
    });
    await createPod('pn-user', {
      securityContext: { runAsUser: 1234, runAsNonRoot: true },
      containers: [{ name: 'main', image: 'busybox', ...sh('id -u; echo $HOME') }],
    });
    const failed = await podWhere('pn-fail', phaseIs('Failed'));
    expect(status(failed, 'main')?.state?.terminated).toMatchObject({
      exitCode: 3,
      reason: 'Error',
      message: 'boom\n',
    });
    const retried = await podWhere('pn-retry', phaseIs('Succeeded'));
    expect(status(retried, 'main')?.restartCount).toBe(1);
    expect(status(retried, 'main')?.lastState?.terminated?.exitCode).toBe(1);
    await podWhere('pn-user', phaseIs('Succeeded'));
    expect(await kubectl('logs', 'pn-user')).toBe('1234\n/\n');
  });

  it('deletion sends SIGTERM, honours the grace period, then SIGKILLs; a PVC dir survives', async () => {
    await core.createNamespacedPersistentVolumeClaim({
      namespace,
      body: {
        metadata: { name: 'pn-claim' },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
      },
    });
    const volumeMounts = [{ name: 'keep', mountPath: `${MARK}/keep` }];
    const pod = await createPod('pn-grace', {
      volumes: [{ name: 'keep', persistentVolumeClaim: { claimName: 'pn-claim' } }],
      containers: [
        {
          name: 'polite',
          image: 'busybox',
          ...sh(
            `trap 'echo term > ${MARK}/keep/got-term; sleep 1; echo bye > ${MARK}/keep/finished; exit 0' TERM; echo up > ${MARK}/keep/up; while true; do sleep 0.1; done`,
          ),
          volumeMounts,
        },
        {
          name: 'stubborn',
          image: 'busybox',
          ...sh(`trap '' TERM; while true; do sleep 0.1; done`),
        },
      ],
    });
    await podWhere(
      'pn-grace',
      (p) =>
        p.status?.phase === 'Running' &&
        (p.status.containerStatuses ?? []).every((s) => s.state?.running),
    );
    const claim = await core.readNamespacedPersistentVolumeClaim({ namespace, name: 'pn-claim' });
    expect(claim.status?.phase).toBe('Bound');
    const pvDir = join(dataDir, 'pvs', claim.spec?.volumeName ?? '');
    await until('the container wrote to the claim', async () =>
      existsSync(join(pvDir, 'up')) ? true : undefined,
    );

    const started = Date.now();
    await core.deleteNamespacedPod({ namespace, name: 'pn-grace', gracePeriodSeconds: 3 });
    await until('pod gone', async () => {
      // Only a 404 (or a new Pod of the same name) is gone: any other error is not.
      const gone = await readPod('pn-grace').then(
        (p) => p.metadata?.uid !== pod.metadata?.uid,
        (error: unknown) => {
          if (error instanceof ApiException && error.code === 404) return true;
          throw error;
        },
      );
      return gone ? true : undefined;
    });
    const elapsed = Date.now() - started;
    expect(await readFile(join(pvDir, 'got-term'), 'utf8')).toBe('term\n');
    expect(await readFile(join(pvDir, 'finished'), 'utf8')).toBe('bye\n');
    // The stubborn container ignored SIGTERM: the pod went away only at the grace deadline.
    expect(elapsed).toBeGreaterThanOrEqual(2800);
    expect(elapsed).toBeLessThan(15_000);
  });

  it('mounts the service-account token, projected sources and image-map paths', async () => {
    const pod = await createPod(
      'pn-projected',
      {
        automountServiceAccountToken: true,
        volumes: [
          {
            name: 'bundle',
            projected: {
              sources: [
                { configMap: { name: 'pn-config', items: [{ key: 'mode', path: 'mode' }] } },
                { secret: { name: 'pn-secret' } },
                {
                  downwardAPI: {
                    items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }],
                  },
                },
              ],
            },
          },
        ],
        containers: [
          {
            name: 'main',
            image: 'example.com/pn-image:v1@sha256:' + '0'.repeat(64),
            ...sh(
              [
                'ls /var/run/secrets/kubernetes.io/serviceaccount',
                'cut -c1-3 /var/run/secrets/kubernetes.io/serviceaccount/token',
                `cat ${MARK}/b/mode; echo; cat ${MARK}/b/token; echo; cat ${MARK}/b/labels; echo`,
                `cat ${MARK}/opt/bundle.txt`,
              ].join('; '),
            ),
            volumeMounts: [{ name: 'bundle', mountPath: `${MARK}/b` }],
          },
        ],
      },
      { labels: { team: 'x' } },
    );
    expect(pod.spec?.volumes?.some((v) => v.name.startsWith('kube-api-access-'))).toBe(true);
    await podWhere('pn-projected', phaseIs('Succeeded'));
    expect(await kubectl('logs', 'pn-projected')).toBe(
      [
        'ca.crt',
        'namespace',
        'token',
        'eyJ',
        'fast',
        's3cret',
        'team="x"',
        'from the image map',
        '',
      ].join('\n'),
    );
  });

  it('activeDeadlineSeconds fails the pod with DeadlineExceeded', async () => {
    await createPod('pn-deadline', {
      activeDeadlineSeconds: 2,
      terminationGracePeriodSeconds: 1,
      containers: [{ name: 'main', image: 'busybox', ...sh('sleep 60') }],
    });
    const pod = await podWhere('pn-deadline', phaseIs('Failed'));
    expect(pod.status?.reason).toBe('DeadlineExceeded');
    expect(status(pod, 'main')?.state?.terminated?.exitCode).toBe(143);
  });

  it('bad input becomes a container reason, and a missing ConfigMap heals once created', async () => {
    await createPod('pn-nfs', {
      volumes: [{ name: 'remote', nfs: { server: 'nfs.invalid', path: '/x' } }],
      containers: [
        {
          name: 'main',
          image: 'busybox',
          ...sh('true'),
          volumeMounts: [{ name: 'remote', mountPath: '/r' }],
        },
      ],
    });
    await createPod('pn-missing', {
      volumes: [{ name: 'cfg', configMap: { name: 'pn-absent' } }],
      containers: [
        {
          name: 'main',
          image: 'busybox',
          ...sh(`cat ${MARK}/c/k`),
          volumeMounts: [{ name: 'cfg', mountPath: `${MARK}/c` }],
        },
      ],
    });
    await createPod('pn-nocommand', { containers: [{ name: 'main', image: 'busybox' }] });

    const waitingReason = (name: string, reason: string) =>
      podWhere(name, (p) => status(p, 'main')?.state?.waiting?.reason === reason);
    const nfs = await waitingReason('pn-nfs', 'CreateContainerConfigError');
    expect(status(nfs, 'main')?.state?.waiting?.message).toContain(
      'volume type nfs is not supported',
    );
    const missing = await waitingReason('pn-missing', 'CreateContainerConfigError');
    expect(status(missing, 'main')?.state?.waiting?.message).toBe(
      'configmap "pn-absent" not found',
    );
    expect(missing.status?.conditions?.find((c) => c.type === 'Ready')?.reason).toBe(
      'ContainersNotReady',
    );
    const noCommand = await podWhere('pn-nocommand', phaseIs('Failed'));
    expect(status(noCommand, 'main')?.state?.terminated?.reason).toBe('ContainerCannotRun');

    await core.createNamespacedConfigMap({
      namespace,
      body: { metadata: { name: 'pn-absent' }, data: { k: 'now here' } },
    });
    await podWhere('pn-missing', phaseIs('Succeeded'));
    expect(await kubectl('logs', 'pn-missing')).toBe('now here\n');
  });

  it('stop kills every container process and deregisters the node', async () => {
    await createPod('pn-long', {
      containers: [{ name: 'main', image: 'busybox', ...sh('sleep 300') }],
    });
    await podWhere('pn-long', phaseIs('Running'));
    const leftovers = async () =>
      (await run('ps', ['-eo', 'pid,ppid,pgid,stat,etimes,args'])).stdout
        .split('\n')
        .filter((l) => l.includes(MARK));
    expect((await leftovers()).length).toBeGreaterThan(0);
    await node.stop();
    expect(await leftovers()).toEqual([]);
    // Deregistered means the Node is not found; any other error says nothing either way.
    const readError = await core.readNode({ name: node.name }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(readError).toBeInstanceOf(ApiException);
    expect((readError as ApiException<unknown>).code, String(readError)).toBe(404);
  });
});
