import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { generatedFiles } from '../../../hack/manifests.js';
import {
  buildCrds,
  elapsed,
  issueRunSchema,
  toStructuralSchema,
  workflowSchema,
  type JSONSchemaProps,
} from '../../../src/api/index.js';
import { eachCase, eachNamedCase } from '../../support/cases.js';

const root = join(import.meta.dirname, '../../..');

/** Every schema node with its path, for whole-tree assertions. */
function* nodes(node: JSONSchemaProps, path = ''): Generator<[string, JSONSchemaProps]> {
  yield [path, node];
  for (const [key, child] of Object.entries(node.properties ?? {}))
    yield* nodes(child, `${path}.${key}`);
  if (node.items) yield* nodes(node.items, `${path}[]`);
  if (typeof node.additionalProperties === 'object')
    yield* nodes(node.additionalProperties, `${path}{}`);
}

describe('generated files', () => {
  it('crds/ and config/rbac/ are up to date with src (run npm run crds)', async () => {
    for (const file of generatedFiles()) {
      const onDisk = await readFile(join(root, file.path), 'utf8').catch(() => '<missing>');
      expect(onDisk, `${file.path} is stale: run npm run crds`).toBe(file.content);
    }
  });
});

describe('CRD schemas', () => {
  const crds = buildCrds();

  it('are structural: a type on every node, no $ref or unions, no properties beside additionalProperties', () => {
    for (const crd of crds) {
      const schema = crd.spec.versions[0]!.schema.openAPIV3Schema;
      for (const [path, node] of nodes(schema)) {
        expect(node.type, `${crd.metadata.name}${path}`).toBeTypeOf('string');
        for (const key of ['$ref', 'anyOf', 'oneOf', 'allOf'])
          expect(node, `${crd.metadata.name}${path}`).not.toHaveProperty(key);
        if (node.properties) expect(node.additionalProperties).toBeUndefined();
      }
    }
  });

  it('preserves unknown fields only on the documented upstream structures', () => {
    const preserved = crds.flatMap((crd) =>
      [...nodes(crd.spec.versions[0]!.schema.openAPIV3Schema)]
        .filter(([, node]) => node['x-kubernetes-preserve-unknown-fields'] === true)
        .map(([path, node]) => {
          expect(node.description).toMatch(/x-kubernetes-preserve-unknown-fields/);
          return `${crd.spec.names.plural}${path}`;
        }),
    );
    expect(preserved.sort()).toEqual(
      [
        'workflows.spec.podTemplate.spec.affinity',
        'workflows.spec.podTemplate.spec.containers[].env[].valueFrom',
        'workflows.spec.podTemplate.spec.containers[].resources',
        'workflows.spec.podTemplate.spec.tolerations[]',
        'workflows.spec.podTemplate.spec.volumes[]',
        'workflows.spec.podTemplate.spec.volumes[].projected',
        'workflows.spec.podTemplate.spec.volumes[].projected.sources[]',
        'workflows.spec.podTemplate.spec.volumes[].projected.sources[].serviceAccountToken',
        'workflows.spec.workspace.volumeClaimTemplate.spec',
      ].sort(),
    );
  });

  it('declares the unsafe pod template fields and refuses them with CEL on the field itself', () => {
    const workflow = crds.find((crd) => crd.spec.names.kind === 'Workflow')!;
    const rules = new Map(
      [...nodes(workflow.spec.versions[0]!.schema.openAPIV3Schema)]
        .filter(([path]) => path.startsWith('.spec.podTemplate.spec'))
        .flatMap(([path, node]) =>
          ((node['x-kubernetes-validations'] ?? []) as { rule: string }[]).map(
            (rule) => [path.slice('.spec.podTemplate.spec'.length), rule.rule] as const,
          ),
        ),
    );
    expect(Object.fromEntries(rules)).toMatchObject({
      '.hostNetwork': '!self',
      '.hostPID': '!self',
      '.hostIPC': '!self',
      '.automountServiceAccountToken': '!self',
      '.securityContext.runAsUser': 'self != 0',
      '.volumes[]': '!has(self.hostPath)',
      '.volumes[].name':
        "!(self in ['lorenz-bin', 'lorenz-inputs', 'lorenz-podinfo', 'workspace', 'lorenz-tools', 'lorenz-git-credentials', 'lorenz-ssh'])",
      '.containers[].name': "self != 'install-runner'",
      '.containers[].securityContext.privileged': '!self',
      '.containers[].securityContext.allowPrivilegeEscalation': '!self',
      '.containers[].securityContext.capabilities.add': 'size(self) == 0',
      '.volumes[].projected':
        '!has(self.sources) || self.sources.all(s, !has(s.serviceAccountToken))',
      '.securityContext.appArmorProfile': "self.type in ['RuntimeDefault', 'Localhost']",
      '.containers[].securityContext.seccompProfile':
        "self.type in ['RuntimeDefault', 'Localhost']",
      '.securityContext.sysctls[].name': expect.stringContaining(
        "self in ['kernel.shm_rmid_forced'",
      ),
      '.containers[].securityContext.seLinuxOptions': expect.stringContaining(
        "!has(self.user) && !has(self.role) && (!has(self.type) || self.type in ['container_t'",
      ),
    });
    const parsed = workflowSchema.parse({
      metadata: { name: 'w' },
      spec: {
        workflow: 'x',
        podTemplate: {
          spec: {
            volumes: [{ name: 'cache', emptyDir: { medium: 'Memory' } }],
            containers: [{ name: 'agent', volumeMounts: [{ name: 'cache', mountPath: '/c' }] }],
          },
        },
      },
    });
    expect(parsed.spec.podTemplate?.spec?.volumes?.[0]).toEqual({
      name: 'cache',
      emptyDir: { medium: 'Memory' },
    });
  });

  it('keys conditions by type and turns nullable into nullable: true', () => {
    const issueRun = crds.find((crd) => crd.spec.names.kind === 'IssueRun')!;
    const schema = issueRun.spec.versions[0]!.schema.openAPIV3Schema;
    const conditions = schema.properties!.status!.properties!.conditions!;
    expect(conditions['x-kubernetes-list-type']).toBe('map');
    expect(conditions['x-kubernetes-list-map-keys']).toEqual(['type']);
    const description = schema.properties!.spec!.properties!.issue!.properties!.description!;
    expect(description).toMatchObject({ type: 'string', nullable: true });
  });

  it('refuses a union that apiextensions cannot express', () => {
    expect(() => toStructuralSchema(z.object({ a: z.union([z.string(), z.int()]) }))).toThrow(
      /\.a: unions are not structural/,
    );
  });
});

describe('what kubectl get shows', () => {
  const crds = buildCrds();
  const names = (kind: string) => crds.find((crd) => crd.spec.names.kind === kind)!.spec.names;
  /** Each printer column as `name jsonPath` with ` (wide)` when only -o wide shows it. */
  const columns = (kind: string) =>
    crds
      .find((crd) => crd.spec.names.kind === kind)!
      .spec.versions[0]!.additionalPrinterColumns.map(
        (column) => `${column.name} ${column.jsonPath}${column.priority ? ' (wide)' : ''}`,
      );

  it.each([
    // Argo Workflows also has a kind Workflow: lwf is never ambiguous.
    ['Workflow', ['lwf']],
    ['IssueRun', ['ir']],
  ])('%s has the short names %j and the category lorenz (kubectl get lorenz)', (kind, short) => {
    expect(names(kind).shortNames).toEqual(short);
    expect(names(kind).categories).toEqual(['lorenz']);
  });

  eachNamedCase('%s', columns, [
    [
      'Workflow: Ready and ConfigValid side by side; -o wide says which generation runs and what today cost',
      'Workflow',
      [
        'Ready .status.conditions[?(@.type=="Ready")].status',
        'ConfigValid .status.conditions[?(@.type=="ConfigValid")].status',
        'Suspended .spec.suspend',
        'Active .status.runs.active',
        'Tracker .status.conditions[?(@.type=="TrackerReachable")].status',
        'Candidates .status.dispatch.candidates',
        'Age .metadata.creationTimestamp',
        'Generation .metadata.generation (wide)',
        'Config-Generation .status.configGeneration (wide)',
        'Config .status.lastGoodConfigMap (wide)',
        'Tokens-Today .status.budget.tokens (wide)',
        'Cost-Today .status.budget.cost (wide)',
        'Message .status.conditions[?(@.type=="ConfigValid")].message (wide)',
      ],
    ],
    [
      'IssueRun: Started and Duration; -o wide adds the branch, the PR, the end and the message',
      'IssueRun',
      [
        'Issue .spec.issue.identifier',
        'Workflow .spec.workflowRef.name',
        'Phase .status.phase',
        'Reason .status.reason',
        'Attempt .status.attempt',
        'Turn .status.turn',
        'Started .status.startTime',
        'Duration .status.duration',
        'Age .metadata.creationTimestamp',
        'Branch .status.git.branch (wide)',
        'PR .status.git.pullRequest.url (wide)',
        'Completed .status.completionTime (wide)',
        'Message .status.conditions[?(@.type=="Succeeded")].message (wide)',
      ],
    ],
  ]);

  describe('status.duration', () => {
    const START = '2024-05-01T10:00:00Z';
    eachCase(`from ${START} to %s is %s`, (end: string) => elapsed(START, end), [
      ['2024-05-01T10:00:45Z', '45s'],
      ['2024-05-01T10:04:12Z', '4m12s'],
      ['2024-05-01T11:00:05Z', '1h0m5s'],
      ['2024-05-02T12:30:00Z', '26h30m0s'],
      [START, '0s'],
    ]);

    it('is unset when the end is before the start, or either time does not parse', () => {
      expect(elapsed('2024-05-01T10:00:05Z', START)).toBeUndefined();
      expect(elapsed('not a time', START)).toBeUndefined();
      expect(elapsed(START, 'not a time')).toBeUndefined();
    });
  });
});

describe('zod schemas', () => {
  it('parse a minimal Workflow and IssueRun', () => {
    expect(
      workflowSchema.parse({ metadata: { name: 'w' }, spec: { workflow: '---\n---\nhi' } }).spec
        .workflow,
    ).toBe('---\n---\nhi');
    const run = issueRunSchema.parse({
      metadata: { name: 'r', namespace: 'ns' },
      spec: {
        workflowRef: { name: 'w' },
        issue: { identifier: 'ENG-1', title: 'Fix', description: null },
      },
    });
    expect(run.spec.issue.identifier).toBe('ENG-1');
  });

  it('reject an empty identifier', () => {
    const result = issueRunSchema.safeParse({
      metadata: {},
      spec: { workflowRef: { name: 'w' }, issue: { identifier: '', title: 'x' } },
    });
    expect(result.success).toBe(false);
  });
});
