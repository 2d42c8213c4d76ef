// Kubeconfig files with embedded certificate data, so they work from any directory and
// outlive nothing but the cluster they point at.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { issueCert } from './certs.js';

export interface KubeconfigSpec {
  server: string;
  caCertPath: string;
  certPath: string;
  keyPath: string;
  userName: string;
  clusterName?: string;
}

const base64 = async (path: string) => (await readFile(path)).toString('base64');

export async function renderKubeconfig(spec: KubeconfigSpec): Promise<string> {
  const cluster = spec.clusterName ?? 'lorenz-dev';
  const context = `${spec.userName}@${cluster}`;
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: cluster,
        cluster: {
          server: spec.server,
          'certificate-authority-data': await base64(spec.caCertPath),
        },
      },
    ],
    users: [
      {
        name: spec.userName,
        user: {
          'client-certificate-data': await base64(spec.certPath),
          'client-key-data': await base64(spec.keyPath),
        },
      },
    ],
    contexts: [{ name: context, context: { cluster, user: spec.userName, namespace: 'default' } }],
    'current-context': context,
    preferences: {},
  });
}

export async function writeKubeconfig(path: string, spec: KubeconfigSpec): Promise<string> {
  await writeFile(path, await renderKubeconfig(spec), { mode: 0o600 });
  return path;
}

/** The parts of a running control plane needed to mint credentials for it. */
export interface CredentialAuthority {
  dir: string;
  server: string;
  caCertPath: string;
  caKeyPath: string;
}

/**
 * A kubeconfig for a user authenticated by a client certificate (CN = name, O = groups)
 * signed by the cluster CA: what RBAC tests need to act as someone without system:masters.
 */
export async function createKubeconfigFor(
  authority: CredentialAuthority,
  user: { name: string; groups?: string[] },
): Promise<string> {
  const safeName = user.name.replace(/[^A-Za-z0-9_.-]/g, '_');
  const dir = join(authority.dir, 'users');
  await mkdir(dir, { recursive: true });
  const pair = await issueCert(
    dir,
    { certPath: authority.caCertPath, keyPath: authority.caKeyPath },
    { name: safeName, commonName: user.name, organizations: user.groups ?? [], usage: 'client' },
  );
  return writeKubeconfig(join(dir, `${safeName}.kubeconfig`), {
    server: authority.server,
    caCertPath: authority.caCertPath,
    certPath: pair.certPath,
    keyPath: pair.keyPath,
    userName: user.name,
  });
}
