import { existsSync } from 'node:fs';
import { defaultArchivePath, openArchive } from '../../archive/dsn.js';
import type { ArchiveStore } from '../../archive/types.js';
import {
  apiReader,
  proxyTransport,
  storeReader,
  urlTransport,
  type ArchiveReader,
} from './archive-reader.js';
import type { UserCluster } from './kube.js';

/** The labels of the controller's Services (the chart's and config/manager's). */
export const CONTROLLER_SERVICE_SELECTOR =
  'app.kubernetes.io/name=lorenz,app.kubernetes.io/component=controller';
/** The Service port the read API is served on. */
export const ARCHIVE_PORT_NAME = 'archive';
/** Where to look when the user may not list Services cluster-wide. */
const CONTROLLER_NAMESPACE = process.env.LORENZ_NAMESPACE || 'lorenz-system';

export interface FindArchiveOptions {
  dsn?: string | undefined;
  url?: string | undefined;
  cluster: UserCluster | undefined;
  err: (text: string) => void;
  /** Seams for tests: how a DSN is opened, and the laptop controller's file. */
  openStore?: (dsn: string) => Promise<ArchiveStore>;
  defaultPath?: string;
}

interface ServiceList {
  items?: {
    metadata?: { name?: string; namespace?: string };
    spec?: { ports?: { name?: string }[] };
  }[];
}

/** The controller's Service that has the archive port, if the user may see one. */
async function findService(
  cluster: UserCluster,
): Promise<{ namespace: string; name: string } | undefined> {
  const paths = ['/api/v1/services', `/api/v1/namespaces/${CONTROLLER_NAMESPACE}/services`];
  for (const path of paths) {
    let list: ServiceList;
    try {
      list = await cluster.client.request<ServiceList>({
        path,
        query: { labelSelector: CONTROLLER_SERVICE_SELECTOR },
      });
    } catch {
      // Not allowed to list here (a namespaced user): try the controller's namespace.
      continue;
    }
    for (const item of list.items ?? []) {
      const name = item.metadata?.name;
      const namespace = item.metadata?.namespace;
      if (name && namespace && item.spec?.ports?.some((port) => port.name === ARCHIVE_PORT_NAME))
        return { namespace, name };
    }
    return undefined;
  }
  return undefined;
}

/**
 * Where the run commands read the archive, in this order: `--archive-dsn` (the store
 * itself), `--archive-url` (the read API with the kubeconfig's token), the read API through
 * the apiserver's service proxy (the kubeconfig alone), the laptop controller's SQLite file;
 * else none, and one line on stderr saying how to point at one.
 */
export async function findArchive(options: FindArchiveOptions): Promise<ArchiveReader | undefined> {
  const open = options.openStore ?? openArchive;
  if (options.dsn) return storeReader(await open(options.dsn));
  const token = await options.cluster?.token();
  if (options.url) return apiReader(urlTransport(options.url, token));
  let why: string | undefined;
  if (options.cluster && token) {
    const service = await findService(options.cluster);
    if (service) {
      const transport = proxyTransport(options.cluster.client, service, token);
      try {
        await transport.json('/healthz', {});
        return apiReader(transport);
      } catch (error) {
        why = `the archive API behind ${transport.where} does not answer (${(error as Error).message.split('\n')[0]})`;
      }
    }
  } else if (options.cluster) {
    why =
      'the kubeconfig user has no bearer token (client certificates only), which the service proxy cannot pass to the archive API';
  }
  const path = options.defaultPath ?? defaultArchivePath();
  if (existsSync(path)) {
    if (why) options.err(`lorenz: ${why}; reading the local archive ${path}\n`);
    return storeReader(await open(`sqlite:${path}`), path);
  }
  options.err(
    `lorenz: no run archive found${why ? ` (${why})` : ''}: showing live runs only; point at one with --archive-dsn DSN or --archive-url URL\n`,
  );
  return undefined;
}

/** The flags and test seams of a run command that findArchive reads. */
export interface RunArchiveSource {
  values: { 'archive-dsn'?: string | undefined; 'archive-url'?: string | undefined };
  cluster: UserCluster;
  err: (text: string) => void;
  deps: { openStore?: FindArchiveOptions['openStore']; defaultArchivePath?: string };
}

/** findArchive as `get runs`, `describe run` and `logs` call it: from their flags. */
export function findRunArchive(source: RunArchiveSource): Promise<ArchiveReader | undefined> {
  const { values, cluster, err, deps } = source;
  return findArchive({
    dsn: values['archive-dsn'],
    url: values['archive-url'],
    cluster,
    err,
    ...(deps.openStore ? { openStore: deps.openStore } : {}),
    ...(deps.defaultArchivePath ? { defaultPath: deps.defaultArchivePath } : {}),
  });
}
