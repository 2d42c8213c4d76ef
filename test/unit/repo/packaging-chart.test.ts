// The chart and config/ stay in step with their sources: CRD copies byte-identical to
// crds/, RBAC rules equal to src/controller/runtime/rbac.ts, image names and versions equal
// to the ones the pod builder and package.json use, and values.yaml documented key by key
// in values.schema.json.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import {
  CHART_RBAC_RULES,
  CRD_COPY_DIRS,
  planSync,
  staleFiles,
} from '../../../hack/sync-chart-plan.js';
import {
  DEFAULT_OPERATOR_IMAGE,
  OPERATOR_IMAGE_REPOSITORY,
  OPERATOR_IMAGE_TAG,
} from '../../../src/controller/shared/constants.js';
import { OPERATOR_IMAGE_ENV } from '../../../src/controller/shared/operator-image.js';
import {
  CONTROLLER_RULES,
  DEFAULT_RBAC,
  LEADER_ELECTION_RULES,
  NAMESPACED_CONTROLLER_RULES,
  REVIEW_RULES,
} from '../../../src/controller/runtime/rbac.js';

const root = join(import.meta.dirname, '../../..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');

interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  additionalProperties?: boolean | JsonSchema;
  $ref?: string;
  definitions?: Record<string, JsonSchema>;
}

describe('synced copies (hack/sync-chart.ts)', () => {
  it('are up to date: run `make crds` when this fails', async () => {
    const plan = await planSync(root);
    expect(await staleFiles(root, plan)).toEqual([]);
  });

  it.each(CRD_COPY_DIRS)('%s holds byte-identical copies of every file in crds/', async (dir) => {
    const plan = await planSync(root);
    const copies = plan.files.filter((file) => file.path.startsWith(`${dir}/`));
    expect(copies.map((file) => file.path.slice(dir.length + 1)).sort()).toEqual([
      'lorenz.dev_issueruns.yaml',
      'lorenz.dev_workflows.yaml',
    ]);
    for (const copy of copies) {
      expect(read(copy.path)).toBe(read(`crds/${copy.path.slice(dir.length + 1)}`));
    }
  });

  it('gives the chart the RBAC rules of src/controller/runtime/rbac.ts', () => {
    const rules = parse(read(CHART_RBAC_RULES)) as Record<string, unknown>;
    expect(rules).toEqual({
      controller: CONTROLLER_RULES,
      namespaced: NAMESPACED_CONTROLLER_RULES,
      reviews: REVIEW_RULES,
      leaderElection: LEADER_ELECTION_RULES,
    });
    // With watchNamespace the Role and the reviews ClusterRole together grant every rule.
    expect([...NAMESPACED_CONTROLLER_RULES, ...REVIEW_RULES]).toEqual(CONTROLLER_RULES);
  });

  it('names a stale copy and a copy whose source is gone', async () => {
    const plan = await planSync(root);
    const tampered = {
      files: plan.files.map((file) =>
        file.path === CHART_RBAC_RULES ? { ...file, content: `${file.content}# edited\n` } : file,
      ),
      extraneous: ['charts/lorenz/crds/removed.yaml'],
    };
    expect(await staleFiles(root, tampered)).toEqual([
      CHART_RBAC_RULES,
      'charts/lorenz/crds/removed.yaml',
    ]);
  });
});

describe('image names and versions', () => {
  const chart = parse(read('charts/lorenz/Chart.yaml')) as { version: string; appVersion: string };
  const values = parse(read('charts/lorenz/values.yaml')) as {
    image: { repository: string; tag: string };
  };
  const pkg = JSON.parse(read('package.json')) as { version: string };

  it('chart appVersion = package version = the operator image tag the pod builder uses', () => {
    expect(chart.appVersion).toBe(pkg.version);
    expect(chart.appVersion).toBe(OPERATOR_IMAGE_TAG);
    expect(values.image.repository).toBe(OPERATOR_IMAGE_REPOSITORY);
    // Empty: the tag follows appVersion, so a chart release pins its own image.
    expect(values.image.tag).toBe('');
  });

  it('config/manager runs the same image, as the ServiceAccount config/rbac binds', () => {
    const docs = parseAllDocuments(read('config/manager/manager.yaml')).map(
      (doc) => doc.toJS() as Record<string, unknown>,
    );
    const deployment = docs.find((doc) => doc.kind === 'Deployment') as {
      metadata: { namespace: string };
      spec: {
        template: {
          spec: {
            serviceAccountName: string;
            containers: {
              image: string;
              args: string[];
              env: {
                name: string;
                value?: string;
                valueFrom?: { fieldRef?: { fieldPath: string } };
              }[];
            }[];
          };
        };
      };
    };
    const pod = deployment.spec.template.spec;
    expect(pod.containers[0]!.image).toBe(DEFAULT_OPERATOR_IMAGE);
    // No LORENZ_OPERATOR_IMAGE: `kustomize edit set image` rewrites the container's image
    // only, so the controller reads that image from its own Pod (src/controller/shared/
    // operator-image.ts), which the downward API names.
    const env = pod.containers[0]!.env;
    expect(env.map((e) => e.name)).not.toContain(OPERATOR_IMAGE_ENV.image);
    expect(
      env
        .filter((e) => e.valueFrom?.fieldRef)
        .map((e) => `${e.name}=${e.valueFrom!.fieldRef!.fieldPath}`),
    ).toEqual([
      `${OPERATOR_IMAGE_ENV.podName}=metadata.name`,
      `${OPERATOR_IMAGE_ENV.podNamespace}=metadata.namespace`,
    ]);
    // The tools gateway's URL is the Service config/manager makes.
    expect(pod.containers[0]!.args).toContain(
      `--tools-url=http://lorenz-tools.${DEFAULT_RBAC.namespace}.svc:8090/mcp`,
    );
    expect(pod.serviceAccountName).toBe(DEFAULT_RBAC.serviceAccountName);
    // The Lease lives where config/rbac grants the leader election Role.
    expect(pod.containers[0]!.args).toContain(
      `--leader-election-namespace=${DEFAULT_RBAC.namespace}`,
    );
    expect(deployment.metadata.namespace).toBe(DEFAULT_RBAC.namespace);
    const kustomization = parse(read('config/default/kustomization.yaml')) as {
      namespace: string;
    };
    expect(kustomization.namespace).toBe(DEFAULT_RBAC.namespace);
  });
});

describe('values.schema.json', () => {
  const schema = JSON.parse(read('charts/lorenz/values.schema.json')) as JsonSchema;
  const values = parse(read('charts/lorenz/values.yaml')) as Record<string, unknown>;
  const resolve = (node: JsonSchema): JsonSchema =>
    node.$ref ? schema.definitions![node.$ref.replace('#/definitions/', '')]! : node;

  /** Problems of `value` against `node`: undeclared keys, wrong types, undocumented keys. */
  function check(value: unknown, node: JsonSchema, path: string): string[] {
    const resolved = resolve(node);
    const types = [resolved.type ?? []].flat();
    const actual = Array.isArray(value) ? 'array' : value === null ? 'null' : typeof value;
    const matches =
      types.length === 0 ||
      types.some((t) => t === actual || (t === 'integer' && Number.isInteger(value)));
    if (!matches) return [`${path}: ${actual} is not ${types.join('|')}`];
    if (actual !== 'object' || !resolved.properties) return [];
    const object = value as Record<string, unknown>;
    const problems: string[] = [];
    for (const [key, child] of Object.entries(object)) {
      const declared = resolved.properties[key];
      if (declared) problems.push(...check(child, declared, `${path}.${key}`));
      else if (resolved.additionalProperties === false)
        problems.push(`${path}.${key}: not in the schema`);
    }
    if (resolved.additionalProperties === false) {
      for (const key of Object.keys(resolved.properties)) {
        if (!(key in object)) problems.push(`${path}.${key}: in the schema but not in values.yaml`);
      }
    }
    return problems;
  }

  it('declares every key of values.yaml with its type, and nothing values.yaml lacks', () => {
    expect(check(values, schema, 'values')).toEqual([]);
  });

  it.each([
    [{ ...values, replicas: 2 }, 'values.replicas: not in the schema'],
    [{ ...values, replicaCount: '2' }, 'values.replicaCount: string is not integer'],
    [
      { ...values, metrics: { ...(values.metrics as object), port: 1.5 } },
      'values.metrics.port: number is not integer',
    ],
  ])('catches a drifted values file (%#)', (drifted, problem) => {
    expect(check(drifted, schema, 'values')).toContain(problem);
  });
});
