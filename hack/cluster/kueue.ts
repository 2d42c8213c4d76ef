// Kueue (sigs.k8s.io/kueue) against the local control plane, as its release runs on a cluster
// but as a child process: its CRDs, its manager with the plain-Pod integration, and its
// admission webhooks served on loopback with a certificate of their own. For the queueing
// tests (docs/queues.md); hack/tools.sh builds the binary and keeps the release's manifests.
import { execFile } from 'node:child_process';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseAllDocuments, stringify } from 'yaml';
import { createCa, issueCert } from './certs.js';
import { applyManifests, installCrds, type ControlPlane } from './control-plane.js';
import { waitFor } from './https-probe.js';
import { freePorts } from './ports.js';
import { describeFailure, startProcess, type ManagedProcess } from './processes.js';
import { toolsScriptPath } from './tools.js';

const execFileAsync = promisify(execFile);

export interface RunningKueue {
  process: ManagedProcess;
  /** Stops the manager (its webhook configurations stay: the control plane goes next). */
  stop(): Promise<void>;
}

/** The kueue binary (built on a cold cache: minutes) and the manifests of its release. */
export async function kueueTool(): Promise<{ binary: string; manifests: string }> {
  const { stdout } = await execFileAsync('bash', [toolsScriptPath(), 'path', 'kueue'], {
    maxBuffer: 1024 * 1024,
  });
  const binary = stdout.trim();
  return { binary, manifests: `${binary}.manifests` };
}

/** The label a run Pod handed to Kueue carries: only such Pods go through its webhooks. */
const QUEUE_LABEL = 'kueue.x-k8s.io/queue-name';

interface WebhookEntry {
  name?: string;
  clientConfig?: { service?: { path?: string }; url?: string; caBundle?: string };
  rules?: { apiGroups?: string[]; resources?: string[] }[];
  objectSelector?: object;
  namespaceSelector?: object;
}

/**
 * The release's webhook configurations, kept to what the plain-Pod integration and Kueue's
 * own kinds need, pointed at `https://127.0.0.1:<port>` with the CA that signed its
 * certificate. Pod webhooks see only Pods that carry a queue name: with failurePolicy Fail,
 * any other Pod must never wait on Kueue.
 */
export function kueueWebhookConfigurations(
  manifest: string,
  port: number,
  caBundle: string,
): object[] {
  return parseAllDocuments(manifest).flatMap((document) => {
    const config = document.toJS() as { webhooks?: WebhookEntry[] } | null;
    if (!config?.webhooks) return [];
    const webhooks = config.webhooks.filter((hook) =>
      (hook.rules ?? []).every((rule) =>
        (rule.apiGroups ?? []).every(
          (group) =>
            group === 'kueue.x-k8s.io' ||
            (group === '' && (rule.resources ?? []).every((resource) => resource === 'pods')),
        ),
      ),
    );
    return [
      {
        ...config,
        webhooks: webhooks.map((hook) => {
          const podHook = (hook.rules ?? []).some((rule) => rule.resources?.includes('pods'));
          return {
            ...hook,
            clientConfig: {
              url: `https://127.0.0.1:${port}${hook.clientConfig?.service?.path ?? '/'}`,
              caBundle,
            },
            ...(podHook
              ? {
                  objectSelector: {
                    matchExpressions: [{ key: QUEUE_LABEL, operator: 'Exists' }],
                  },
                }
              : {}),
          };
        }),
      },
    ];
  });
}

/**
 * Kueue without its own certificate management reads a metrics certificate from the fixed
 * path /etc/kueue/metrics/certs, even with no metrics server. Rather than write to this
 * machine's /etc, the manager runs in a mount namespace of its own (`unshare --mount`) where
 * /etc is an overlay on a tmpfs, and the webhook certificate is put there: $1 the overlay's
 * directory, $2 the certificates, then the command. Nothing is left behind outside.
 */
const WITH_METRICS_CERTS = [
  'set -e',
  'mount -t tmpfs tmpfs "$1"',
  'mkdir "$1/upper" "$1/work"',
  'mount -t overlay overlay -o "lowerdir=/etc,upperdir=$1/upper,workdir=$1/work" /etc',
  'mkdir -p /etc/kueue/metrics/certs',
  'cp "$2/tls.crt" "$2/tls.key" /etc/kueue/metrics/certs/',
  'shift 2',
  'exec "$@"',
].join('\n');

/** Kueue's Configuration: the plain-Pod integration only, everything on loopback. */
export function kueueConfiguration(ports: { webhook: number; health: number }, certDir: string) {
  return {
    apiVersion: 'config.kueue.x-k8s.io/v1beta2',
    kind: 'Configuration',
    health: { healthProbeBindAddress: `127.0.0.1:${ports.health}` },
    // "0": no metrics server (it would want a port and TokenReviews of its own).
    metrics: { bindAddress: '0' },
    webhook: { host: '127.0.0.1', port: ports.webhook, certDir },
    leaderElection: { leaderElect: false },
    internalCertManagement: { enable: false },
    integrations: { frameworks: ['pod'] },
  };
}

/**
 * Installs Kueue's CRDs and webhooks on the control plane and starts its manager; resolves
 * once its webhooks answer (/readyz). The manager runs as the admin (system:masters): its
 * RBAC is the release's concern, not what these tests check.
 */
export async function startKueue(cp: ControlPlane): Promise<RunningKueue> {
  const { binary, manifests } = await kueueTool();
  const crdDir = join(manifests, 'crds');
  const crds = (await readdir(crdDir)).filter((file) => file.endsWith('.yaml'));
  await installCrds(
    cp,
    crds.map((file) => join(crdDir, file)),
  );
  const dir = join(cp.dir, 'kueue');
  const certDir = join(dir, 'certs');
  await mkdir(certDir, { recursive: true });
  const ca = await createCa(certDir, 'kueue-webhook-ca');
  await issueCert(certDir, ca, {
    name: 'tls',
    commonName: 'kueue-webhook',
    ipAddresses: ['127.0.0.1'],
    usage: 'server',
  });
  const [webhook = 0, health = 0] = await freePorts(2);
  const configPath = join(dir, 'config.yaml');
  await writeFile(configPath, stringify(kueueConfiguration({ webhook, health }, certDir)));
  const overlay = join(dir, 'etc-overlay');
  await mkdir(overlay, { recursive: true });
  const process = startProcess(
    'kueue',
    'unshare',
    [
      '--mount',
      '--propagation',
      'private',
      'sh',
      '-c',
      WITH_METRICS_CERTS,
      'kueue',
      overlay,
      certDir,
      binary,
      `--config=${configPath}`,
      `--kubeconfig=${cp.kubeconfigPath}`,
      // The visibility API is an aggregated apiserver of its own: not needed here.
      '--feature-gates=VisibilityOnDemand=false',
    ],
    join(dir, 'kueue.log'),
  );
  try {
    await waitFor(
      'the Kueue manager to be ready',
      async () => (await fetch(`http://127.0.0.1:${health}/readyz`)).ok,
      {
        timeoutMs: 60_000,
        intervalMs: 250,
        abort: async () =>
          process.hasExited() ? describeFailure(process, 'exited before it was ready') : undefined,
      },
    );
    const caBundle = Buffer.from(await readFile(ca.certPath)).toString('base64');
    const configurations = kueueWebhookConfigurations(
      await readFile(join(manifests, 'webhook.yaml'), 'utf8'),
      webhook,
      caBundle,
    );
    const webhooksPath = join(dir, 'webhooks.yaml');
    await writeFile(webhooksPath, configurations.map((entry) => stringify(entry)).join('---\n'));
    await applyManifests(cp, [webhooksPath]);
  } catch (error) {
    await process.stop();
    throw error;
  }
  return { process, stop: () => process.stop() };
}
