// The Helm chart and the kustomize config, checked with the real tools (helm and kubectl
// from hack/tools.sh) and a real kube-apiserver: helm lint, helm template with its options,
// kubectl kustomize, and the rendered objects applied server-side (RBAC for real, then
// checked with `kubectl auth can-i` as the controller's ServiceAccount; the Deployment with
// dry-run=server, as nothing would run its Pod here; the samples for real, validated by the
// CRDs' schemas).
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import {
  ensureTools,
  installCrds,
  startControlPlane,
  type ControlPlane,
  type ToolPaths,
} from '../../hack/cluster/control-plane.js';
import {
  CONTROLLER_RULES,
  LEADER_ELECTION_RULES,
  NAMESPACED_CONTROLLER_RULES,
  REVIEW_RULES,
} from '../../src/controller/runtime/rbac.js';
import { createKubeClient } from '../../src/controller/runtime/client.js';
import { kubeAuthorizer } from '../../src/server/auth.js';
import { podReader, resolveOperatorImage } from '../../src/controller/shared/operator-image.js';
import { impersonating } from './operator-harness.js';

const execFileAsync = promisify(execFile);
const root = join(import.meta.dirname, '..', '..');
const chart = join(root, 'charts', 'lorenz');
const RELEASE_NAMESPACE = 'lorenz-system';

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; annotations?: Record<string, string> };
  [key: string]: unknown;
}

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { fieldRef?: { fieldPath: string } };
}

interface ControllerContainer {
  image: string;
  args: string[];
  env: EnvVar[];
  securityContext: Record<string, unknown>;
  livenessProbe: { httpGet: { path: string } };
  readinessProbe: { httpGet: { path: string } };
  volumeMounts?: { name: string; mountPath: string }[];
}

interface DeploymentManifest extends Manifest {
  spec: {
    replicas: number;
    strategy?: Record<string, unknown>;
    template: {
      metadata?: { labels?: Record<string, string> };
      spec: {
        serviceAccountName: string;
        securityContext: Record<string, unknown>;
        imagePullSecrets?: { name: string }[];
        containers: ControllerContainer[];
        volumes?: Record<string, unknown>[];
      };
    };
  };
}

let tools: ToolPaths;
let scratch: string;

async function run(command: string, args: string[]): Promise<{ stdout: string; stderr: string }> {
  try {
    return await execFileAsync(command, args, { cwd: root, maxBuffer: 32 * 1024 * 1024 });
  } catch (error) {
    const failed = error as Error & { stdout?: string; stderr?: string };
    throw new Error(
      `${command} ${args.join(' ')} failed:\n${failed.stderr ?? ''}${failed.stdout ?? ''}`,
      {
        cause: error,
      },
    );
  }
}

/** Runs a command that must fail; returns what it printed. */
async function runFailing(command: string, args: string[]): Promise<string> {
  try {
    await execFileAsync(command, args, { cwd: root });
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string };
    return `${failed.stdout ?? ''}${failed.stderr ?? ''}`;
  }
  throw new Error(`${command} ${args.join(' ')} succeeded; it should have failed`);
}

const parseManifests = (text: string): Manifest[] =>
  parseAllDocuments(text)
    .map((doc) => doc.toJS() as Manifest | null)
    .filter((doc): doc is Manifest => doc !== null);

/** `helm template <release> <chart> --namespace <release namespace> <args…>`, its objects. */
async function helmRender(args: string[], release = 'lorenz'): Promise<Manifest[]> {
  const { stdout } = await run(tools.helm, [
    'template',
    release,
    chart,
    '--namespace',
    RELEASE_NAMESPACE,
    ...args,
  ]);
  return parseManifests(stdout);
}

/** `--set` before each value. */
const setArgs = (...values: string[]): string[] => values.flatMap((value) => ['--set', value]);

const helmTemplate = (...values: string[]): Promise<Manifest[]> => helmRender(setArgs(...values));

/** An overlay of config/default that sets the image, as `kustomize edit set image` does. */
async function imageOverlay(prefix: string): Promise<string> {
  const overlay = await mkdtemp(join(scratch, prefix));
  await writeFile(
    join(overlay, 'kustomization.yaml'),
    [
      'apiVersion: kustomize.config.k8s.io/v1beta1',
      'kind: Kustomization',
      'resources:',
      // kustomize takes a base by relative path only.
      `  - ${relative(overlay, join(root, 'config', 'default'))}`,
      'images:',
      '  - name: ghcr.io/lorenz-dev/lorenz',
      '    newName: registry.example/lorenz',
      '    newTag: 9.9.9',
      '',
    ].join('\n'),
  );
  return overlay;
}

const kustomize = async (dir: string): Promise<Manifest[]> =>
  parseManifests((await run(tools.kubectl, ['kustomize', dir])).stdout);

/**
 * How config/default may differ from the chart's default render (`helm template lorenz
 * --namespace lorenz-system --include-crds`), each difference on purpose. Anything else the
 * chart renders, config/ must have, alike.
 */
interface Differences {
  /** Object names (`Kind/name`) as the other side calls them. */
  names: Record<string, string>;
  /** Controller args and env variables only this side has. */
  args: string[];
  env: string[];
}
const CHART_DIFFERENCES: Differences = {
  // config/ names its objects after the controller (lorenz-controller…, the names config/rbac
  // is generated with and the Lease has), the chart after its release. Objects named alike in
  // both (Service/lorenz-tools: the controller's default --tools-url; NetworkPolicy/
  // lorenz-controller; the CRDs) are not listed.
  names: {
    'ClusterRole/lorenz': 'ClusterRole/lorenz-controller',
    'ClusterRoleBinding/lorenz': 'ClusterRoleBinding/lorenz-controller',
    'Deployment/lorenz': 'Deployment/lorenz-controller',
    'Role/lorenz-leader-election': 'Role/lorenz-controller-leader-election',
    'RoleBinding/lorenz-leader-election': 'RoleBinding/lorenz-controller-leader-election',
    'Service/lorenz-metrics': 'Service/lorenz-controller-metrics',
    'ServiceAccount/lorenz': 'ServiceAccount/lorenz-controller',
  },
  args: [],
  // The chart knows its image when it renders (and, with watchNamespace, could not read its
  // own Pod); config/ reads it from its Pod, so that `kustomize edit set image` reaches run Pods.
  env: ['LORENZ_OPERATOR_IMAGE'],
};
const CONFIG_DIFFERENCES: Differences = {
  names: {},
  // Leader election always on: a rolling update has two controllers for a while. The chart
  // turns it on with replicaCount > 1 or leaderElection.enabled.
  args: ['--leader-elect', `--leader-election-namespace=${RELEASE_NAMESPACE}`],
  // The downward API's names of the Pod whose image the controller reads (see above).
  env: ['POD_NAME', 'POD_NAMESPACE'],
};
/** Objects only config/ has: helm installs into a namespace that exists (--create-namespace). */
const CONFIG_ONLY = [`Namespace/${RELEASE_NAMESPACE}`];
/** Objects only the chart has: none (the web view, server.enabled, is config/server's too). */
const CHART_ONLY: string[] = [];

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Each object as `Kind/name` (in config/'s names) → its content as both sides must agree on:
 * labels dropped (the chart adds Helm's), label selectors replaced by whether they select the
 * controller's Pods, the names of bound objects renamed, the allowed args and env removed.
 */
function comparable(manifests: Manifest[], differences: Differences): Map<string, unknown> {
  const rename = (kind: string, name: string): string => {
    const key = differences.names[`${kind}/${name}`] ?? `${kind}/${name}`;
    return key.slice(key.indexOf('/') + 1);
  };
  const deployment = find<DeploymentManifest>(manifests, 'Deployment')[0];
  const podLabels: Json = deployment?.spec.template.metadata?.labels ?? {};
  const selects = (selector: unknown): unknown =>
    isObject(selector) &&
    Object.keys(selector).length > 0 &&
    Object.entries(selector).every(([key, value]) => podLabels[key] === value)
      ? 'the controller Pods'
      : selector;
  const normalize = (value: unknown, path: string): unknown => {
    if (Array.isArray(value)) return value.map((item) => normalize(item, `${path}[]`));
    if (!isObject(value)) return value;
    const out: Json = {};
    for (const [key, child] of Object.entries(value)) {
      const at = `${path}.${key}`;
      if (key === 'labels' && path.endsWith('metadata')) continue;
      if (
        at.endsWith('.selector.matchLabels') ||
        // A Service's selector is the label map itself; a Deployment's has matchLabels.
        (at === '.spec.selector' && isObject(child) && !('matchLabels' in child)) ||
        at.endsWith('podSelector.matchLabels')
      ) {
        out[key] = selects(child);
      } else if (at === '.spec.template.spec.containers[].args') {
        out[key] = (child as string[]).filter((arg) => !differences.args.includes(arg));
      } else if (at === '.spec.template.spec.containers[].env') {
        out[key] = (child as { name: string }[]).filter((e) => !differences.env.includes(e.name));
      } else if (at === '.spec.template.spec.serviceAccountName') {
        out[key] = rename('ServiceAccount', child as string);
      } else if (at === '.roleRef') {
        const ref = child as { kind: string; name: string };
        out[key] = { ...ref, name: rename(ref.kind, ref.name) };
      } else if (at === '.subjects') {
        out[key] = (child as { kind: string; name: string }[]).map((subject) => ({
          ...subject,
          name: rename(subject.kind, subject.name),
        }));
      } else {
        out[key] = normalize(child, at);
      }
    }
    return out;
  };
  const result = new Map<string, unknown>();
  for (const manifest of manifests) {
    const { metadata, ...rest } = manifest;
    const name = rename(manifest.kind, metadata.name);
    result.set(`${manifest.kind}/${name}`, {
      namespace: metadata.namespace,
      annotations: metadata.annotations,
      ...(normalize(rest, '') as Json),
    });
  }
  return result;
}

const isServer = (manifest: Manifest): boolean =>
  (manifest.metadata as { labels?: Record<string, string> }).labels?.[
    'app.kubernetes.io/component'
  ] === 'server';
/** The controller's objects of a kind (the web view server's are looked at by serverOf). */
const find = <T extends Manifest = Manifest>(manifests: Manifest[], kind: string): T[] =>
  manifests.filter((manifest) => manifest.kind === kind && !isServer(manifest)) as T[];
const serverObjects = (manifests: Manifest[]): Manifest[] => manifests.filter(isServer);
const serverOf = (manifests: Manifest[]) => {
  const deployment = serverObjects(manifests).find((m) => m.kind === 'Deployment') as
    DeploymentManifest | undefined;
  return { deployment, container: deployment?.spec.template.spec.containers[0] };
};
const controllerOf = (manifests: Manifest[]): ControllerContainer =>
  find<DeploymentManifest>(manifests, 'Deployment')[0]!.spec.template.spec.containers[0]!;

beforeAll(async () => {
  // ensureTools builds helm from the Go module proxy when the cache lacks it, and throws a
  // message naming what is missing (e.g. no `go`) when it cannot: no test is skipped.
  tools = await ensureTools();
  scratch = await mkdtemp(join(tmpdir(), 'lorenz-chart-'));
});
afterAll(async () => {
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

describe('helm lint', () => {
  it('passes with --strict', async () => {
    const { stdout } = await run(tools.helm, ['lint', '--strict', chart]);
    expect(stdout).toContain('1 chart(s) linted, 0 chart(s) failed');
  });

  it.each([
    ['replicaCount=-1', 'replicaCount'],
    ['bogus=1', 'bogus'],
    ['image.pullPolicy=Sometimes', 'pullPolicy'],
    ['archive.dsn=mysql://db', 'dsn'],
    ['watchNamespace=Not_A_Namespace', 'watchNamespace'],
  ])('rejects --set %s through values.schema.json', async (set, key) => {
    const output = await runFailing(tools.helm, ['lint', chart, '--set', set]);
    expect(output).toContain("values don't meet the specifications of the schema");
    expect(output).toContain(key);
  });
});

describe('helm template', () => {
  it('renders a restricted controller: one replica, no leader election, probes, every namespace', async () => {
    const manifests = await helmTemplate();
    expect(manifests.map((m) => `${m.kind}/${m.metadata.name}`).sort()).toEqual([
      'ClusterRole/lorenz',
      'ClusterRole/lorenz-server',
      'ClusterRole/lorenz-server-reviews',
      'ClusterRoleBinding/lorenz',
      'ClusterRoleBinding/lorenz-server',
      'ClusterRoleBinding/lorenz-server-reviews',
      'ConfigMap/lorenz-prices',
      'Deployment/lorenz',
      'Deployment/lorenz-server',
      'NetworkPolicy/lorenz-controller',
      'PersistentVolumeClaim/lorenz-archive',
      'Role/lorenz-archive-reader',
      'Role/lorenz-leader-election',
      'RoleBinding/lorenz-archive-reader',
      'RoleBinding/lorenz-leader-election',
      'Service/lorenz-archive',
      'Service/lorenz-metrics',
      'Service/lorenz-server',
      'Service/lorenz-tools',
      'ServiceAccount/lorenz',
      'ServiceAccount/lorenz-server',
    ]);
    const deployment = find<DeploymentManifest>(manifests, 'Deployment')[0]!;
    expect(deployment.spec.replicas).toBe(1);
    const pod = deployment.spec.template.spec;
    expect(pod.serviceAccountName).toBe('lorenz');
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 65532,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    const container = controllerOf(manifests);
    expect(container.image).toBe('ghcr.io/lorenz-dev/lorenz:0.1.0');
    expect(container.args).toEqual([
      'controller',
      '--metrics-bind-address=:8080',
      '--health-probe-bind-address=:8081',
      '--allowed-service-accounts=default',
      '--tools-bind-address=:8090',
      '--tools-url=http://lorenz-tools.lorenz-system.svc:8090/mcp',
      '--archive-api-bind-address=:8091',
      '--archive-dsn=sqlite:/var/lib/lorenz/archive.db',
      '--archive-log-cap=32Mi',
      '--archive-give-up-after=24h',
      '--price-table=lorenz-prices',
    ]);
    // The archive's SQLite file on its volume: one writer, so never two Pods at once.
    expect(deployment.spec.strategy).toEqual({ type: 'Recreate' });
    expect(pod.volumes).toContainEqual({
      name: 'archive',
      persistentVolumeClaim: { claimName: 'lorenz-archive' },
    });
    expect(container.volumeMounts).toContainEqual({
      name: 'archive',
      mountPath: '/var/lib/lorenz',
    });
    expect(container.env.find((e) => e.name === 'LORENZ_OPERATOR_IMAGE')?.value).toBe(
      'ghcr.io/lorenz-dev/lorenz:0.1.0',
    );
    expect(container.securityContext).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      privileged: false,
      capabilities: { drop: ['ALL'] },
    });
    expect(container.livenessProbe.httpGet.path).toBe('/healthz');
    expect(container.readinessProbe.httpGet.path).toBe('/readyz');
  });

  it('grants exactly the rules of src/controller/runtime/rbac.ts', async () => {
    const manifests = await helmTemplate();
    expect(find(manifests, 'ClusterRole')[0]!.rules).toEqual(CONTROLLER_RULES);
    const leaderElection = find(manifests, 'Role').find(
      (role) => role.metadata.name === 'lorenz-leader-election',
    )!;
    expect(leaderElection.metadata.namespace).toBe(RELEASE_NAMESPACE);
    expect(leaderElection.rules).toEqual(LEADER_ELECTION_RULES);
  });

  // The read API's TokenReviews and SubjectAccessReviews are cluster-scoped: with
  // watchNamespace they need a ClusterRole, and that ClusterRole grants nothing else.
  it.each([
    {
      sets: [] as string[],
      clusterRoles: { lorenz: CONTROLLER_RULES },
      bindings: ['ClusterRoleBinding/lorenz → ClusterRole/lorenz'],
      roles: { 'lorenz-system/lorenz-leader-election': LEADER_ELECTION_RULES },
    },
    {
      sets: ['watchNamespace=team-a'],
      clusterRoles: { 'lorenz-reviews': REVIEW_RULES },
      bindings: ['ClusterRoleBinding/lorenz-reviews → ClusterRole/lorenz-reviews'],
      roles: {
        'team-a/lorenz': NAMESPACED_CONTROLLER_RULES,
        'lorenz-system/lorenz-leader-election': LEADER_ELECTION_RULES,
        // The price table, read where the controller runs (docs/budgets.md).
        'lorenz-system/lorenz-prices': [
          { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] },
        ],
      },
    },
  ])('RBAC with --set $sets', async ({ sets, clusterRoles, bindings, roles }) => {
    const manifests = await helmTemplate(...sets);
    type Role = Manifest & { rules: unknown };
    type Binding = Manifest & { roleRef: { kind: string; name: string } };
    const rulesOf = (kind: string, key: (m: Manifest) => string) =>
      Object.fromEntries(find<Role>(manifests, kind).map((m) => [key(m), m.rules]));
    expect(rulesOf('ClusterRole', (m) => m.metadata.name)).toEqual(clusterRoles);
    expect(
      find<Binding>(manifests, 'ClusterRoleBinding').map(
        (m) => `ClusterRoleBinding/${m.metadata.name} → ${m.roleRef.kind}/${m.roleRef.name}`,
      ),
    ).toEqual(bindings);
    const controllerRoles = rulesOf('Role', (m) => `${m.metadata.namespace}/${m.metadata.name}`);
    // The read API's own Role (services in the release namespace) is not the controller's.
    delete controllerRoles[`${RELEASE_NAMESPACE}/lorenz-archive-reader`];
    expect(controllerRoles).toEqual(roles);
  });

  it.each([
    [
      // With SQLite one replica writes the file, whatever replicaCount says.
      ['replicaCount=3'],
      (m: Manifest[]) =>
        find<DeploymentManifest>(m, 'Deployment')[0]?.spec.replicas === 1 &&
        !controllerOf(m).args.includes('--leader-elect'),
    ],
    [
      ['replicaCount=2', 'archive.dsn=postgres://lorenz@db/lorenz'],
      (m: Manifest[]) =>
        find<DeploymentManifest>(m, 'Deployment')[0]?.spec.replicas === 2 &&
        find(m, 'PersistentVolumeClaim').length === 0 &&
        controllerOf(m).args.includes('--archive-dsn=postgres://lorenz@db/lorenz') &&
        controllerOf(m).args.includes('--leader-elect') &&
        controllerOf(m).args.includes(`--leader-election-namespace=${RELEASE_NAMESPACE}`),
    ],
    [
      ['leaderElection.enabled=true'],
      (m: Manifest[]) => controllerOf(m).args.includes('--leader-elect'),
    ],
    [
      ['watchNamespace=team-a'],
      (m: Manifest[]) =>
        controllerOf(m).args.includes('--namespace=team-a') &&
        find(m, 'ClusterRole')
          .map((role) => role.metadata.name)
          .join() === 'lorenz-reviews' &&
        find(m, 'Role').some((role) => role.metadata.namespace === 'team-a'),
    ],
    [
      ['metrics.serviceMonitor.enabled=true'],
      (m: Manifest[]) => find(m, 'ServiceMonitor').length === 1,
    ],
    [
      ['metrics.prometheusRule.enabled=true', 'metrics.prometheusRule.stuckAfterSeconds=60'],
      (m: Manifest[]) => {
        const [rule] = find<
          Manifest & { spec: { groups: Array<{ rules: Array<{ alert: string; expr: string }> }> } }
        >(m, 'PrometheusRule');
        const rules = rule?.spec.groups.flatMap((group) => group.rules) ?? [];
        return (
          rules.map((r) => r.alert).join(',') ===
            'LorenzReconcileStuck,LorenzWorkqueueBacklog,LorenzReconcileErrors,LorenzControllerDown,' +
              'LorenzTrackerUnreachable,LorenzRunFailureRatioHigh,LorenzArchiveLagging,LorenzArchiveFailing' &&
          rules[0]!.expr.endsWith('> 60') &&
          rules.every((r) => r.expr.includes('job="lorenz-metrics"'))
        );
      },
    ],
    [
      ['image.digest=sha256:' + 'b'.repeat(64)],
      (m: Manifest[]) =>
        controllerOf(m).image === `ghcr.io/lorenz-dev/lorenz@sha256:${'b'.repeat(64)}`,
    ],
    [
      ['runnerImage=registry.example/lorenz:9.9.9'],
      (m: Manifest[]) =>
        controllerOf(m).env.some(
          (e) => e.name === 'LORENZ_OPERATOR_IMAGE' && e.value === 'registry.example/lorenz:9.9.9',
        ),
    ],
    [
      ['imagePullSecrets[0].name=regcred'],
      (m: Manifest[]) =>
        find<DeploymentManifest>(m, 'Deployment')[0]!.spec.template.spec.imagePullSecrets?.[0]
          ?.name === 'regcred',
    ],
    [
      ['rbac.create=false', 'serviceAccount.create=false', 'serviceAccount.name=mine'],
      (m: Manifest[]) =>
        m
          .filter((x) => !isServer(x))
          .every((x) => !x.kind.includes('Role') && x.kind !== 'ServiceAccount') &&
        // The server keeps its own ServiceAccount; without rbac.create it has no roles.
        serverObjects(m).every((x) => !x.kind.includes('Role')),
    ],
    [
      // The web view server: SQLite archive read through the controller's read API.
      [],
      (m: Manifest[]) =>
        serverOf(m).container?.args.join(' ') ===
          'server --auth=token --bind-address=:8090 --archive-url=http://lorenz-archive.lorenz-system.svc:8091' &&
        serverOf(m).deployment?.spec.template.spec.serviceAccountName === 'lorenz-server' &&
        // Restricted, as the controller: non-root, no privilege, read-only root filesystem.
        serverOf(m).deployment?.spec.template.spec.securityContext?.runAsNonRoot === true &&
        serverOf(m).container?.securityContext.readOnlyRootFilesystem === true &&
        serverOf(m).container?.readinessProbe.httpGet.path === '/readyz' &&
        JSON.stringify(
          serverObjects(m).find(
            (x) => x.kind === 'ClusterRole' && x.metadata.name === 'lorenz-server',
          ),
        ).includes('"verbs":["get","list","watch"]') &&
        !JSON.stringify(serverObjects(m)).match(/"verbs":\[[^\]]*"(patch|update|delete)"/),
    ],
    [
      ['archive.dsn=postgres://lorenz@db/lorenz'],
      (m: Manifest[]) =>
        serverOf(m).container?.args.includes('--archive-dsn=postgres://lorenz@db/lorenz') === true,
    ],
    [
      ['archive.dsnSecretRef.name=archive-db'],
      (m: Manifest[]) =>
        serverOf(m).container?.args.includes('--archive-dsn=$(LORENZ_ARCHIVE_DSN)') === true &&
        JSON.stringify(serverOf(m).container?.env).includes('"name":"archive-db"'),
    ],
    [
      ['watchNamespace=team-a'],
      (m: Manifest[]) =>
        serverOf(m).container?.args.includes('--namespace=team-a') === true &&
        serverObjects(m).some((x) => x.kind === 'Role' && x.metadata.namespace === 'team-a') &&
        !serverObjects(m).some(
          (x) => x.kind === 'ClusterRole' && x.metadata.name === 'lorenz-server',
        ),
    ],
    [['server.enabled=false'], (m: Manifest[]) => serverObjects(m).length === 0],
    [
      // Webhooks off by default: no flag, no port, no Service, no Ingress.
      [],
      (m: Manifest[]) =>
        !controllerOf(m).args.some((arg) => arg.startsWith('--webhook-bind-address')) &&
        !JSON.stringify(m).includes('webhooks'),
    ],
    [
      ['webhooks.enabled=true'],
      (m: Manifest[]) => {
        const service = find(m, 'Service').find((x) => x.metadata.name === 'lorenz-webhooks');
        const policy = JSON.stringify(find(m, 'NetworkPolicy'));
        return (
          controllerOf(m).args.includes('--webhook-bind-address=:8092') &&
          JSON.stringify(service).includes('"targetPort":"webhooks"') &&
          JSON.stringify(find(m, 'Deployment')).includes(
            '{"name":"webhooks","containerPort":8092',
          ) &&
          policy.includes('{"port":"webhooks","protocol":"TCP"}') &&
          find(m, 'Ingress').length === 0
        );
      },
    ],
    [
      [
        'webhooks.enabled=true',
        'webhooks.ingress.enabled=true',
        'webhooks.ingress.host=hooks.example.com',
        'webhooks.ingress.tlsSecretName=hooks-tls',
        'webhooks.ingress.className=nginx',
      ],
      (m: Manifest[]) => {
        const [ingress] = find<
          Manifest & {
            spec: {
              ingressClassName: string;
              tls: { secretName: string; hosts: string[] }[];
              rules: {
                host: string;
                http: {
                  paths: {
                    path: string;
                    backend: { service: { name: string; port: { name: string } } };
                  }[];
                };
              }[];
            };
          }
        >(m, 'Ingress');
        const rule = ingress?.spec.rules[0];
        return (
          ingress?.spec.ingressClassName === 'nginx' &&
          ingress.spec.tls[0]?.secretName === 'hooks-tls' &&
          ingress.spec.tls[0]?.hosts[0] === 'hooks.example.com' &&
          rule?.host === 'hooks.example.com' &&
          rule.http.paths[0]?.path === '/webhooks/' &&
          rule.http.paths[0]?.backend.service.name === 'lorenz-webhooks' &&
          rule.http.paths[0]?.backend.service.port.name === 'webhooks'
        );
      },
    ],
  ])('--set %j', async (sets, holds) => {
    expect(holds(await helmTemplate(...sets))).toBe(true);
  });

  it.each([
    ['a ServiceMonitor is', 'metrics.serviceMonitor.enabled'],
    ['alerts are', 'metrics.prometheusRule.enabled'],
  ])('fails clearly when %s asked for without the metrics Service', async (_what, key) => {
    const output = await runFailing(tools.helm, [
      'template',
      'lorenz',
      chart,
      ...setArgs(`${key}=true`, 'metrics.service.enabled=false'),
    ]);
    expect(output).toContain(`${key} needs metrics.service.enabled`);
  });
});

describe('kubectl kustomize', () => {
  it('renders config/default: CRDs, RBAC, the controller, its Services and NetworkPolicy, the web view, in lorenz-system', async () => {
    const manifests = await kustomize(join(root, 'config', 'default'));
    expect(manifests.map((m) => `${m.kind}/${m.metadata.name}`).sort()).toEqual([
      'ClusterRole/lorenz-controller',
      'ClusterRole/lorenz-server',
      'ClusterRole/lorenz-server-reviews',
      'ClusterRoleBinding/lorenz-controller',
      'ClusterRoleBinding/lorenz-server',
      'ClusterRoleBinding/lorenz-server-reviews',
      'ConfigMap/lorenz-prices',
      'CustomResourceDefinition/issueruns.lorenz.dev',
      'CustomResourceDefinition/workflows.lorenz.dev',
      'Deployment/lorenz-controller',
      'Deployment/lorenz-server',
      'Namespace/lorenz-system',
      'NetworkPolicy/lorenz-controller',
      'PersistentVolumeClaim/lorenz-archive',
      'Role/lorenz-archive-reader',
      'Role/lorenz-controller-leader-election',
      'RoleBinding/lorenz-archive-reader',
      'RoleBinding/lorenz-controller-leader-election',
      'Service/lorenz-archive',
      'Service/lorenz-controller-metrics',
      'Service/lorenz-server',
      'Service/lorenz-tools',
      'ServiceAccount/lorenz-controller',
      'ServiceAccount/lorenz-server',
    ]);
    for (const manifest of manifests) {
      const clusterScoped = [
        'Namespace',
        'ClusterRole',
        'ClusterRoleBinding',
        'CustomResourceDefinition',
      ];
      if (!clusterScoped.includes(manifest.kind))
        expect(manifest.metadata.namespace).toBe(RELEASE_NAMESPACE);
    }
  });

  it("has every object of the chart's default render, with its ports, args, env, probes and rules", async () => {
    const chartRender = await helmRender(['--include-crds']);
    const configRender = await kustomize(join(root, 'config', 'default'));
    const fromChart = comparable(chartRender, CHART_DIFFERENCES);
    const fromConfig = comparable(configRender, CONFIG_DIFFERENCES);
    // Object by object, so a failure names what config/ lacks or has otherwise.
    const missing = [...fromChart.keys()].filter(
      (key) => !fromConfig.has(key) && !CHART_ONLY.includes(key),
    );
    const extra = [...fromConfig.keys()].filter(
      (key) => !fromChart.has(key) && !CONFIG_ONLY.includes(key),
    );
    expect({ missing, extra }).toEqual({ missing: [], extra: [] });
    const keys = [...fromChart.keys()].filter((key) => !CHART_ONLY.includes(key)).sort();
    expect(keys.length).toBeGreaterThanOrEqual(11);
    for (const key of keys) {
      expect(fromConfig.get(key), `config/default's ${key}`).toEqual(fromChart.get(key));
    }
  });

  it('`images:` of an overlay (kustomize edit set image) reaches the controller and leaves no other image named', async () => {
    const overlay = await imageOverlay('overlay-');
    const deployment = find<DeploymentManifest>(await kustomize(overlay), 'Deployment')[0]!;
    const text = JSON.stringify(deployment);
    expect(controllerOf([deployment]).image).toBe('registry.example/lorenz:9.9.9');
    // Run Pods get the controller's own image (read from its Pod): nothing pins the old one.
    expect(text).not.toContain('ghcr.io/lorenz-dev/lorenz');
  });

  it('renders config/samples', async () => {
    const { stdout } = await run(tools.kubectl, ['kustomize', join(root, 'config', 'samples')]);
    expect(
      parseManifests(stdout)
        .map((m) => m.kind)
        .sort(),
    ).toEqual(['ConfigMap', 'IssueRun', 'Workflow', 'Workflow', 'Workflow']);
  });
});

describe('on a real kube-apiserver', () => {
  let cp: ControlPlane;
  const kubectl = (...args: string[]) =>
    run(tools.kubectl, ['--kubeconfig', cp.kubeconfigPath, ...args]);
  const applyText = async (name: string, text: string, ...flags: string[]) => {
    const file = join(scratch, name);
    await writeFile(file, text);
    return kubectl('apply', '--server-side', '--field-manager=lorenz-test', ...flags, '-f', file);
  };
  const canI = async (serviceAccount: string, ...args: string[]) => {
    try {
      await kubectl('auth', 'can-i', '--as', `system:serviceaccount:${serviceAccount}`, ...args);
      return true;
    } catch {
      return false;
    }
  };
  // A SubjectAccessReview names the group and resource itself, so it answers for resources
  // the apiserver does not serve (Kueue's, in a cluster without Kueue): `kubectl auth can-i`
  // resolves the type through discovery first and denies what it cannot find.
  const reviewAccess = async (
    serviceAccount: string,
    attributes: { verb: string; group: string; resource: string; subresource?: string | undefined },
  ) => {
    const file = join(scratch, 'access-review.json');
    await writeFile(
      file,
      JSON.stringify({
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: {
          user: `system:serviceaccount:${serviceAccount}`,
          groups: [
            'system:serviceaccounts',
            `system:serviceaccounts:${serviceAccount.split(':')[0]}`,
          ],
          resourceAttributes: { namespace: 'team-a', ...attributes },
        },
      }),
    );
    const { stdout } = await kubectl('create', '-f', file, '-o', 'jsonpath={.status.allowed}');
    return stdout.trim() === 'true';
  };

  beforeAll(async () => {
    cp = await startControlPlane({ controllers: [] });
    await installCrds(cp, [
      join(chart, 'crds', 'lorenz.dev_issueruns.yaml'),
      join(chart, 'crds', 'lorenz.dev_workflows.yaml'),
    ]);
    await kubectl('create', 'namespace', RELEASE_NAMESPACE);
    await kubectl('create', 'namespace', 'team-a');
  });
  afterAll(async () => {
    await cp?.stop();
  });

  it('accepts the chart: RBAC, ServiceAccount and Service for real, the Deployment on dry run', async () => {
    const manifests = await helmTemplate();
    const text = (list: Manifest[]) => list.map((m) => JSON.stringify(m)).join('\n---\n');
    await applyText('chart.yaml', text(manifests.filter((m) => m.kind !== 'Deployment')));
    const dryRun = await applyText(
      'deployment.yaml',
      text(find(manifests, 'Deployment')),
      '--dry-run=server',
    );
    expect(dryRun.stdout).toContain('deployment.apps/lorenz serverside-applied (server dry run)');
    expect(
      (
        await kubectl('-n', RELEASE_NAMESPACE, 'get', 'serviceaccount', 'lorenz', '-o', 'name')
      ).stdout.trim(),
    ).toBe('serviceaccount/lorenz');
  });

  it.each([
    [['create', 'pods', '-n', 'default'], true],
    [['delete', 'pods', '-n', 'team-a'], true],
    [['get', 'pods/log', '-n', 'default'], true],
    [['patch', 'issueruns.lorenz.dev/status', '-n', 'default'], true],
    [['create', 'events.events.k8s.io', '-n', 'default'], true],
    [['create', 'configmaps', '-n', 'default'], true],
    [['update', 'leases.coordination.k8s.io', '-n', RELEASE_NAMESPACE], true],
    [['update', 'leases.coordination.k8s.io', '-n', 'default'], false],
    // The dispatcher creates IssueRuns, and reads the one Secret a Workflow names
    // (spec.trackerSecretRef) by name: it can neither list nor watch Secrets. It creates
    // and deletes the per-attempt agent-tools token Secrets, and never updates one.
    [['create', 'issueruns.lorenz.dev', '-n', 'default'], true],
    [['get', 'secrets', '-n', 'default'], true],
    [['create', 'secrets', '-n', 'default'], true],
    [['delete', 'secrets', '-n', 'default'], true],
    [['list', 'secrets', '-n', 'default'], false],
    [['watch', 'secrets', '-n', 'default'], false],
    [['update', 'secrets', '-n', 'default'], false],
    [['patch', 'secrets', '-n', 'default'], false],
    [['deletecollection', 'secrets', '-n', 'default'], false],
    [['update', 'pods', '-n', 'default'], false],
    [['create', 'deployments.apps', '-n', 'default'], false],
  ])("the chart's ServiceAccount: can-i %j = %s", async (args, expected) => {
    expect(await canI(`${RELEASE_NAMESPACE}:lorenz`, ...args)).toBe(expected);
  });

  it('grants every verb of every rule in src/controller/runtime/rbac.ts, and no other verb on those resources', async () => {
    const verbs = [
      'get',
      'list',
      'watch',
      'create',
      'update',
      'patch',
      'delete',
      'deletecollection',
    ];
    const answers: string[] = [];
    const expected: string[] = [];
    for (const rule of CONTROLLER_RULES) {
      for (const group of rule.apiGroups) {
        for (const resource of rule.resources) {
          // `kubectl auth can-i VERB TYPE/NAME` reads `issueruns/status` as an object named
          // status: a subresource goes in --subresource.
          const [plural = '', subresource] = resource.split('/');
          const type = group === '' ? plural : `${plural}.${group}`;
          const name = subresource ? `${type}/${subresource}` : type;
          for (const verb of verbs) {
            // A verb granted by another rule for the same resource (events in two groups) counts.
            const granted = CONTROLLER_RULES.some(
              (other) =>
                other.apiGroups.includes(group) &&
                other.resources.includes(resource) &&
                other.verbs.includes(verb),
            );
            expected.push(`${verb} ${name}: ${granted}`);
            answers.push(
              `${verb} ${name}: ${await reviewAccess(`${RELEASE_NAMESPACE}:lorenz`, { verb, group, resource: plural, subresource })}`,
            );
          }
        }
      }
    }
    expect(answers).toEqual(expected);
    expect(answers.filter((answer) => answer.endsWith('true')).length).toBeGreaterThan(20);
  });

  it('the run Pods’ egress policy is a valid NetworkPolicy in each namespace it names', async () => {
    const policies = await helmRender([
      ...setArgs(
        'runPods.egress.enabled=true',
        'runPods.egress.namespaces={default,team-a}',
        'runPods.egress.allow[0].cidr=140.82.112.0/20',
        'runPods.egress.allow[0].ports={443}',
      ),
      '--show-only',
      'templates/run-pod-egress.yaml',
    ]);
    expect(policies.map((m) => `${m.kind} ${m.metadata.namespace}`)).toEqual([
      'NetworkPolicy default',
      'NetworkPolicy team-a',
    ]);
    const applied = await applyText(
      'egress.yaml',
      policies.map((m) => JSON.stringify(m)).join('\n---\n'),
      '--dry-run=server',
    );
    expect(applied.stdout).toContain('networkpolicy.networking.k8s.io/lorenz-run-pods-egress');
    const spec = (
      policies[1] as unknown as { spec: { egress: Array<{ to: unknown[]; ports?: unknown[] }> } }
    ).spec;
    // DNS, the tools gateway, the allow-list: nothing else.
    expect(spec.egress).toHaveLength(3);
    expect(spec.egress[2]).toEqual({
      to: [{ ipBlock: { cidr: '140.82.112.0/20' } }],
      ports: [{ port: 443, protocol: 'TCP' }],
    });
  });

  it('with watchNamespace, grants the controller rules in that namespace only', async () => {
    const manifests = (await helmRender(setArgs('watchNamespace=team-a'), 'scoped')).filter(
      (m) => m.kind !== 'Deployment',
    );
    await applyText('scoped.yaml', manifests.map((m) => JSON.stringify(m)).join('\n---\n'));
    const sa = `${RELEASE_NAMESPACE}:scoped-lorenz`;
    expect(await canI(sa, 'create', 'pods', '-n', 'team-a')).toBe(true);
    expect(await canI(sa, 'create', 'pods', '-n', 'default')).toBe(false);
    // Cluster-wide: the two reviews of the read API, and nothing else.
    expect(await canI(sa, 'create', 'tokenreviews.authentication.k8s.io')).toBe(true);
    expect(await canI(sa, 'create', 'subjectaccessreviews.authorization.k8s.io')).toBe(true);
    expect(await canI(sa, 'list', 'issueruns.lorenz.dev', '--all-namespaces')).toBe(false);
    expect(await canI(sa, 'get', 'secrets', '-n', 'default')).toBe(false);
    expect(await canI(sa, 'create', 'localsubjectaccessreviews.authorization.k8s.io')).toBe(false);

    // The read API's checks, made as that ServiceAccount: a reader's token is known, and
    // what it may list is answered (before the reviews ClusterRole, both were 403 → 503).
    await kubectl('-n', 'team-a', 'create', 'serviceaccount', 'scoped-reader');
    await kubectl(
      '-n',
      'team-a',
      'create',
      'role',
      'scoped-reader',
      '--verb=list',
      '--resource=issueruns.lorenz.dev',
    );
    await kubectl(
      '-n',
      'team-a',
      'create',
      'rolebinding',
      'scoped-reader',
      '--role=scoped-reader',
      '--serviceaccount=team-a:scoped-reader',
    );
    const token = (
      await kubectl('-n', 'team-a', 'create', 'token', 'scoped-reader', '--duration=1h')
    ).stdout.trim();
    const asController = impersonating(cp, `system:serviceaccount:${sa}`);
    const authorizer = kubeAuthorizer(createKubeClient(asController), { cacheMs: 0 });
    const caller = await authorizer.authenticate(token);
    expect(caller.username).toBe('system:serviceaccount:team-a:scoped-reader');
    expect(await authorizer.mayList(caller, 'team-a')).toBe(true);
    expect(await authorizer.mayList(caller, 'default')).toBe(false);
  });

  it("config/default's controller reads the image an overlay gave it from its own Pod, as its ServiceAccount", async () => {
    const overlay = await imageOverlay('own-image-');
    const manifests = await kustomize(overlay);
    const text = (list: Manifest[]) => list.map((m) => JSON.stringify(m)).join('\n---\n');
    await applyText(
      'own-image.yaml',
      text(manifests.filter((m) => m.kind !== 'Deployment')),
      '--force-conflicts',
    );
    // The Pod the Deployment would make (nothing runs it here: no kubelet).
    const deployment = find<DeploymentManifest>(manifests, 'Deployment')[0]!;
    const podName = 'lorenz-controller-5c8d7-x2k9q';
    await applyText(
      'own-pod.yaml',
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          ...deployment.spec.template.metadata,
          name: podName,
          namespace: RELEASE_NAMESPACE,
        },
        spec: deployment.spec.template.spec,
      }),
    );
    // As the controller: config/rbac's ServiceAccount, with the downward API's variables.
    const asController = impersonating(
      cp,
      `system:serviceaccount:${RELEASE_NAMESPACE}:lorenz-controller`,
    );
    const env = Object.fromEntries(
      deployment.spec.template.spec.containers[0]!.env.map((e) => [
        e.name,
        e.valueFrom?.fieldRef?.fieldPath === 'metadata.name'
          ? podName
          : e.valueFrom?.fieldRef?.fieldPath === 'metadata.namespace'
            ? RELEASE_NAMESPACE
            : e.value,
      ]),
    );
    expect(await resolveOperatorImage({ env, readPod: podReader(asController) })).toEqual({
      image: 'registry.example/lorenz:9.9.9',
      source: `container controller of Pod ${RELEASE_NAMESPACE}/${podName}`,
    });
  });

  it('accepts config/default on a server dry run', async () => {
    const { stdout } = await run(tools.kubectl, ['kustomize', join(root, 'config', 'default')]);
    const result = await applyText('default.yaml', stdout, '--dry-run=server', '--force-conflicts');
    expect(result.stdout).toContain(
      'deployment.apps/lorenz-controller serverside-applied (server dry run)',
    );
  });

  it('installs with helm (no --wait: nothing runs Pods here) and NOTES.txt says what to run next', async () => {
    const helm = (...args: string[]) =>
      run(tools.helm, ['--kubeconfig', cp.kubeconfigPath, ...args]);
    const { stdout } = await helm(
      'install',
      'trial',
      chart,
      '--namespace',
      'lorenz-trial',
      '--create-namespace',
    );
    expect(stdout).toContain('STATUS: deployed');
    const notes = stdout.slice(stdout.indexOf('NOTES:'));
    expect(notes).toContain('kubectl -n lorenz-trial rollout status deployment/trial-lorenz');
    expect(notes).toContain('kubectl apply -k config/samples');
    expect(notes).toContain('kubectl wait --for=condition=Finished issuerun/demo-1');
    const deployment = await kubectl(
      '-n',
      'lorenz-trial',
      'get',
      'deployment',
      'trial-lorenz',
      '-o',
      'name',
    );
    expect(deployment.stdout.trim()).toBe('deployment.apps/trial-lorenz');
    await helm('uninstall', 'trial', '--namespace', 'lorenz-trial');
  });

  it('stores the samples, validated by the CRDs', async () => {
    await kubectl(
      'apply',
      '--server-side',
      '--field-manager=lorenz-test',
      '-n',
      'default',
      '-k',
      join(root, 'config', 'samples'),
    );
    const { stdout } = await kubectl('-n', 'default', 'get', 'workflows,issueruns', '-o', 'name');
    expect(stdout.trim().split('\n').sort()).toEqual([
      'issuerun.lorenz.dev/demo-1',
      'workflow.lorenz.dev/board',
      'workflow.lorenz.dev/demo',
      'workflow.lorenz.dev/demo-from-configmap',
    ]);
  });
});
