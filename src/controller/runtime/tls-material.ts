import type https from 'node:https';
import type tls from 'node:tls';

/** The TLS settings a connection to the apiserver takes from the kubeconfig. */
export type TlsMaterial = Pick<
  tls.ConnectionOptions,
  'ca' | 'cert' | 'key' | 'pfx' | 'passphrase' | 'rejectUnauthorized'
>;

/**
 * The kubeconfig's CA, client certificate and key (or PKCS#12 bundle) and whether to check the
 * server, out of the request options it applies them to. The HTTP/1.1 agent and the HTTP/2 pool
 * connect with the same material; the server name is left to each, since the pool sends a host
 * name for SNI only (never an address). rejectUnauthorized is left out when unset, so the
 * default (check) stands.
 */
export function tlsMaterial(options: https.RequestOptions): TlsMaterial {
  return {
    ca: options.ca,
    cert: options.cert,
    key: options.key,
    pfx: options.pfx,
    passphrase: options.passphrase,
    ...(options.rejectUnauthorized !== undefined
      ? { rejectUnauthorized: options.rejectUnauthorized }
      : {}),
  };
}
