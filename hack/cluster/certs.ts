// Cluster PKI made with the openssl CLI: a CA, leaf certificates signed by it, and the
// service-account signing key pair. EC P-256 keys: fast to generate on a small machine.
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

export interface KeyPair {
  certPath: string;
  keyPath: string;
}

export interface LeafCertRequest {
  /** File name stem: <dir>/<name>.crt and <dir>/<name>.key. */
  name: string;
  commonName: string;
  organizations?: string[];
  dnsNames?: string[];
  ipAddresses?: string[];
  usage: 'server' | 'client' | 'both';
  days?: number;
}

// A config with no default extensions: only what -addext names ends up in a certificate
// (the stock openssl.cnf would mark every `req -x509` certificate as a CA).
const MINIMAL_CONFIG = '[req]\ndistinguished_name = dn\nprompt = no\n[dn]\n';

async function openssl(args: string[]): Promise<void> {
  try {
    await execFileAsync('openssl', args);
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? '';
    throw new Error(`openssl ${args[0]} failed: ${stderr.trim() || String(error)}`, {
      cause: error,
    });
  }
}

// One config file per certificate: certificates are issued in parallel.
async function configPath(dir: string, name: string): Promise<string> {
  const path = join(dir, `${name}.cnf`);
  await writeFile(path, MINIMAL_CONFIG);
  return path;
}

const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

function subject(commonName: string, organizations: string[] = []): string {
  const escape = (value: string) => value.replace(/[/=\\]/g, (c) => `\\${c}`);
  return organizations.map((o) => `/O=${escape(o)}`).join('') + `/CN=${escape(commonName)}`;
}

export async function createCa(dir: string, commonName = 'lorenz-dev-ca'): Promise<KeyPair> {
  const pair = { certPath: join(dir, 'ca.crt'), keyPath: join(dir, 'ca.key') };
  await openssl([
    'req', '-x509', '-config', await configPath(dir, 'ca'), ...EC_KEY,
    '-keyout', pair.keyPath, '-out', pair.certPath, '-days', '3650',
    '-subj', subject(commonName),
    '-addext', 'basicConstraints=critical,CA:TRUE',
    '-addext', 'keyUsage=critical,keyCertSign,cRLSign,digitalSignature',
  ]); // prettier-ignore
  return pair;
}

export function extendedKeyUsage(usage: LeafCertRequest['usage']): string {
  if (usage === 'server') return 'serverAuth';
  if (usage === 'client') return 'clientAuth';
  return 'serverAuth,clientAuth';
}

export function subjectAltNames(request: LeafCertRequest): string | undefined {
  const names = [
    ...(request.dnsNames ?? []).map((name) => `DNS:${name}`),
    ...(request.ipAddresses ?? []).map((ip) => `IP:${ip}`),
  ];
  return names.length > 0 ? `subjectAltName=${names.join(',')}` : undefined;
}

/** Issues a certificate signed by the CA (OpenSSL 3: `req -x509 -CA`). */
export async function issueCert(
  dir: string,
  ca: KeyPair,
  request: LeafCertRequest,
): Promise<KeyPair> {
  const pair = {
    certPath: join(dir, `${request.name}.crt`),
    keyPath: join(dir, `${request.name}.key`),
  };
  const sans = subjectAltNames(request);
  await openssl([
    'req', '-x509', '-config', await configPath(dir, request.name), ...EC_KEY,
    '-CA', ca.certPath, '-CAkey', ca.keyPath,
    '-keyout', pair.keyPath, '-out', pair.certPath, '-days', String(request.days ?? 365),
    '-subj', subject(request.commonName, request.organizations),
    '-addext', 'basicConstraints=critical,CA:FALSE',
    '-addext', 'keyUsage=critical,digitalSignature,keyEncipherment',
    '-addext', `extendedKeyUsage=${extendedKeyUsage(request.usage)}`,
    ...(sans ? ['-addext', sans] : []),
  ]); // prettier-ignore
  return pair;
}

export interface ServiceAccountKeys {
  privateKeyPath: string;
  publicKeyPath: string;
}

export async function createServiceAccountKeys(dir: string): Promise<ServiceAccountKeys> {
  const keys = { privateKeyPath: join(dir, 'sa.key'), publicKeyPath: join(dir, 'sa.pub') };
  await openssl([
    'genpkey',
    '-algorithm',
    'EC',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-out',
    keys.privateKeyPath,
  ]);
  await openssl(['pkey', '-in', keys.privateKeyPath, '-pubout', '-out', keys.publicKeyPath]);
  return keys;
}

export interface ClusterPki {
  ca: KeyPair;
  apiserver: KeyPair;
  admin: KeyPair;
  kubeletClient: KeyPair;
  serviceAccount: ServiceAccountKeys;
}

/** Everything the control plane needs, written into `dir` (the state dir's certs/). */
export async function createClusterPki(dir: string): Promise<ClusterPki> {
  const ca = await createCa(dir);
  const [apiserver, admin, kubeletClient, serviceAccount] = await Promise.all([
    issueCert(dir, ca, {
      name: 'apiserver',
      commonName: 'kube-apiserver',
      dnsNames: ['localhost', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc'],
      ipAddresses: ['127.0.0.1', '10.0.0.1'],
      usage: 'server',
    }),
    issueCert(dir, ca, {
      name: 'admin',
      commonName: 'admin',
      organizations: ['system:masters'],
      usage: 'client',
    }),
    issueCert(dir, ca, {
      name: 'apiserver-kubelet-client',
      commonName: 'kube-apiserver-kubelet-client',
      organizations: ['system:masters'],
      usage: 'client',
    }),
    createServiceAccountKeys(dir),
  ]);
  return { ca, apiserver, admin, kubeletClient, serviceAccount };
}
