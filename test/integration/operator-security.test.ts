// A run whose hooks print their whole environment and every file the Pod can read must not
// put a service-account token, or the value of a Secret it was given, into its status, its
// Events or its log. Real apiserver, real run Pod on the process node, real Secrets.
import { describe, expect, it } from 'vitest';
import type { IssueRun, Workflow } from '../../src/api/index.js';
import {
  NAMESPACE,
  agentPodTemplate,
  podTemplate,
  until,
  useOperatorEnv,
} from './operator-harness.js';

/** A JWT as the apiserver issues them for service accounts: header.payload.signature. */
const JWT = /eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/;
const API_KEY = 'sk-integration-4b1d7e90c2';
const FROM_TOKEN = 'ghp_integration_83f0aa12';

/** Prints every readable file the run Pod has mounted (after_create prints `env`). */
const PRINT_FILES = [
  // The Pod's own mounts (on the process node, $HOME and / are the host's, not the Pod's).
  'for dir in /lorenz /lorenz-bin /var/run/secrets /run/secrets /workspace; do',
  '  [ -d "$dir" ] || continue',
  '  find "$dir" -type f -readable -size -64k 2>/dev/null | while read -r file; do',
  '    case "$file" in *.js|*.mjs) continue ;; esac',
  '    echo "== $file"; cat "$file"',
  '  done',
  'done',
].join('\n');

describe('secrets in what a run reports', () => {
  const env = useOperatorEnv();

  it('recognizes a real service-account token (the check below can fail)', async () => {
    const token = await env.admin.request<{ status: { token: string } }>({
      method: 'POST',
      path: `/api/v1/namespaces/${NAMESPACE}/serviceaccounts/default/token`,
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {} },
    });
    expect(token.status.token).toMatch(JWT);
  });

  it('puts no service-account token and no Secret value into status, Events or logs', async () => {
    for (const [name, data] of [
      ['agent-keys', { API_KEY }],
      ['agent-more', { FROM_TOKEN }],
    ] as const) {
      await env.createSecret(name, data);
    }
    await env.createWorkflow(
      'leaky',
      {
        hooks: { after_create: 'env', before_run: PRINT_FILES, timeout_ms: 60000 },
      },
      {
        podTemplate: agentPodTemplate({
          env: [
            {
              name: 'API_KEY',
              valueFrom: { secretKeyRef: { name: 'agent-keys', key: 'API_KEY' } },
            },
          ],
          envFrom: [{ secretRef: { name: 'agent-more' } }],
        }),
      },
    );
    await env.createIssueRun('leaky-1', 'leaky', { identifier: 'SEC-1', title: 'Print it all' });
    const run: IssueRun = await env.finished('leaky-1');
    expect(run.status?.phase, JSON.stringify(run.status?.conditions)).toBe('Succeeded');

    const output = run.status?.hooks?.find((hook) => hook.name === 'after_create')?.output ?? '';
    // The hook did print its environment: the Secret-sourced variables are there, redacted,
    // and the runner's copies of them are not.
    expect(output).toContain('API_KEY=[redacted]');
    expect(output).toContain('FROM_TOKEN=[redacted]');
    expect(output).not.toContain('LORENZ_REDACT_');
    const files = run.status?.hooks?.find((hook) => hook.name === 'before_run')?.output ?? '';
    expect(files).toMatch(/== \/lorenz\/inputs\/\S*manifest\.json/);

    const events = JSON.stringify(await env.hookEvents('leaky-1'));
    const [pod] = await env.runPodNames('leaky-1');
    const logs = await env.kubectl('logs', '-n', NAMESPACE, pod ?? '', '-c', 'agent');
    expect(events).toContain('[redacted]');
    for (const [where, text] of [
      ['status', JSON.stringify(run.status)],
      ['Events', events],
      ['the Pod log', logs],
    ] as const) {
      expect(text, where).not.toMatch(JWT);
      expect(text, where).not.toContain(API_KEY);
      expect(text, where).not.toContain(FROM_TOKEN);
    }
  });

  it('refuses, with the field, what admission lets through: mounts inside or above Lorenz paths, other service accounts, unrestricted volumes', async () => {
    const [agent] = podTemplate.spec.containers;
    await env.createWorkflow(
      'sneaky',
      {},
      {
        podTemplate: {
          spec: {
            serviceAccountName: 'admin',
            volumes: [
              { name: 'cache', emptyDir: {} },
              { name: 'share', nfs: { server: 'nfs.example', path: '/' } },
            ],
            containers: [
              {
                ...agent,
                volumeMounts: [
                  { name: 'cache', mountPath: '/lorenz-bin/.' },
                  { name: 'cache', mountPath: '//lorenz/inputs' },
                  { name: 'cache', mountPath: '/lorenz' },
                ],
              },
            ],
          },
        },
      },
    );
    const invalid = await until('the Workflow to report its pod template', async () => {
      const workflow = await env.admin.request<Workflow>({
        path: `/apis/lorenz.dev/v1alpha1/namespaces/${NAMESPACE}/workflows/sneaky`,
      });
      return workflow.status?.conditions?.find(
        (c) => c.type === 'ConfigValid' && c.status === 'False',
      );
    });
    expect(invalid.reason).toBe('WorkflowInvalid');
    for (const part of [
      'the mount path /lorenz-bin/. is reserved by Lorenz',
      'the mount path //lorenz/inputs is reserved by Lorenz',
      'the mount path /lorenz is reserved by Lorenz (it is, is inside or is above /lorenz/inputs)',
      'serviceAccountName: admin is not allowed for run Pods (allowed: default;',
      'volumes[share]: nfs volumes are refused',
    ]) {
      expect(invalid.message).toContain(part);
    }
  });
});
