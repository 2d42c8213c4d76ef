import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { UsageError } from './usage.js';

/**
 * `lorenz server`: the web view. Off-cluster (`local`), it binds 127.0.0.1 and acts as the
 * kubeconfig's user, like `kubectl proxy`; in a Pod (or with --auth=token) every request
 * brings a bearer token that TokenReview and SubjectAccessReview check (docs/web-view.md).
 */

const IN_CLUSTER_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

export interface ServerArgs {
  kubeconfig?: string;
  bindAddress: string;
  archiveDsn?: string;
  archiveUrl?: string;
  namespace?: string;
  webRoot?: string;
  auth: 'token' | 'local';
  allowRemote: boolean;
}

const LOOPBACK = /^(127(\.\d{1,3}){3}|::1|localhost)$/;

/** The flags `lorenz server` takes (its --help, cli/command-help.ts, lists the same). */
export const SERVER_OPTIONS = {
  kubeconfig: { type: 'string' },
  'bind-address': { type: 'string' },
  'archive-dsn': { type: 'string' },
  'archive-url': { type: 'string' },
  namespace: { type: 'string', short: 'n' },
  'web-root': { type: 'string' },
  auth: { type: 'string' },
  'allow-remote-bind': { type: 'boolean' },
} as const;

export function parseServerArgs(args: string[], env = process.env): ServerArgs {
  const { values, positionals } = parseArgs({
    args,
    strict: true,
    allowPositionals: false,
    options: SERVER_OPTIONS,
  });
  if (positionals.length > 0) throw new UsageError('lorenz server takes no arguments');
  if (values['archive-dsn'] && values['archive-url'])
    throw new UsageError('give --archive-dsn or --archive-url, not both');
  const inCluster =
    Boolean(env.KUBERNETES_SERVICE_HOST) && !values.kubeconfig && existsSync(IN_CLUSTER_TOKEN);
  const auth = values.auth ?? (inCluster ? 'token' : 'local');
  if (auth !== 'token' && auth !== 'local')
    throw new UsageError(`--auth must be token or local, got '${auth}'`);
  const bindAddress = values['bind-address'] ?? (auth === 'token' ? ':8090' : '127.0.0.1:8090');
  const host = bindAddress.slice(0, bindAddress.lastIndexOf(':')).replace(/^\[|\]$/g, '');
  const allowRemote = values['allow-remote-bind'] === true;
  if (auth === 'local' && !LOOPBACK.test(host) && !allowRemote)
    throw new UsageError(
      `--bind-address ${bindAddress}: in local mode (the kubeconfig's own credentials, no tokens) the server binds a loopback address only; use --auth=token, or --allow-remote-bind if you mean it`,
    );
  return {
    bindAddress,
    auth,
    allowRemote,
    ...(values.kubeconfig ? { kubeconfig: values.kubeconfig } : {}),
    ...(values['archive-dsn'] ? { archiveDsn: values['archive-dsn'] } : {}),
    ...(values['archive-url'] ? { archiveUrl: values['archive-url'] } : {}),
    ...(values.namespace ? { namespace: values.namespace } : {}),
    ...(values['web-root'] ? { webRoot: values['web-root'] } : {}),
  };
}

export async function serverCommand(
  args: string[],
  out: (text: string) => void,
  err: (text: string) => void,
): Promise<number> {
  const options = parseServerArgs(args);
  // The image's other long-running process: it keeps --optimize-for-size as it had it on the
  // ENTRYPOINT before the controller needed it off there (heap-flags.ts).
  const { applyControllerHeapFlags } = await import('../controller/runtime/heap-flags.js');
  applyControllerHeapFlags();
  const { startServer } = await import('../server/main.js');
  const running = await startServer(options);
  out(`lorenz server (${running.mode} mode) serving the web view at ${running.url}\n`);
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  err('lorenz server: stopping\n');
  await running.close();
  return 0;
}
