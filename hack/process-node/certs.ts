import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface ServingCert {
  key: Buffer;
  cert: Buffer;
  /** The cluster CA: the apiserver's client certificate for kubelet calls is checked against it. */
  ca: Buffer;
}

/**
 * Signs a serving certificate for the node's kubelet endpoint with the cluster CA. The
 * apiserver dials 127.0.0.1 (InternalIP) and verifies with --kubelet-certificate-authority,
 * so the SAN must carry that IP.
 */
export async function issueServingCert(
  dir: string,
  nodeName: string,
  caCertPath: string,
  caKeyPath: string,
): Promise<ServingCert> {
  const keyPath = join(dir, 'kubelet.key');
  const csrPath = join(dir, 'kubelet.csr');
  const certPath = join(dir, 'kubelet.crt');
  const extPath = join(dir, 'kubelet.ext');
  await writeFile(
    extPath,
    [
      'basicConstraints=CA:FALSE',
      'keyUsage=critical,digitalSignature,keyEncipherment',
      'extendedKeyUsage=serverAuth',
      `subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:${nodeName}`,
      '',
    ].join('\n'),
  );
  await run('openssl', [
    'req',
    '-new',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    keyPath,
    '-out',
    csrPath,
    '-subj',
    `/O=system:nodes/CN=system:node:${nodeName}`,
  ]);
  await run('openssl', [
    'x509',
    '-req',
    '-in',
    csrPath,
    '-CA',
    caCertPath,
    '-CAkey',
    caKeyPath,
    '-CAcreateserial',
    '-CAserial',
    join(dir, 'ca.srl'),
    '-days',
    '365',
    '-extfile',
    extPath,
    '-out',
    certPath,
  ]);
  const [key, cert, ca] = await Promise.all([
    readFile(keyPath),
    readFile(certPath),
    readFile(caCertPath),
  ]);
  return { key, cert, ca };
}
