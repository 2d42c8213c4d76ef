import type { Logger } from 'pino';
import { exponentialDelay, sleep } from './backoff.js';
import { isGone, resourcePath, type KubeClient, type ResourceRef } from './client.js';
import { createOwnerIndex } from './owner-index.js';
import { createStringPool, shareStrings, type StringPool } from './string-pool.js';

/** The fields every Kubernetes object has that the cache relies on. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    namespace?: string;
    resourceVersion?: string;
    managedFields?: unknown;
    [key: string]: unknown;
  };
}

export interface InformerOptions {
  client: KubeClient;
  resource: ResourceRef;
  /** Watch one namespace; all namespaces when unset. */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  logger?: Logger;
  /** Restart a watch that has seen no event or bookmark for this long (a half-open connection). */
  watchdogMs?: number;
  /** Backoff between failed list/watch attempts. */
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  /** Page size of the initial list and relists. */
  pageSize?: number;
}

export interface Informer<T extends KubeObject> {
  readonly resource: ResourceRef;
  get(namespace: string | undefined, name: string): T | undefined;
  list(namespace?: string): T[];
  /** The cached objects whose controller owner reference has this uid. */
  ownedBy(uid: string): T[];
  /** The cached objects of a namespace whose controller is this kind and name, any uid. */
  ownedByName(namespace: string, kind: string, name: string): T[];
  /** The on* methods do not use `this`: they may be passed around unbound. */
  onAdd(this: void, handler: (object: T) => void): void;
  onUpdate(this: void, handler: (previous: T, object: T) => void): void;
  onDelete(this: void, handler: (object: T) => void): void;
  /** True once the first list has been loaded into the cache. */
  hasSynced(): boolean;
  /** Resolves when synced; rejects if the signal aborts first. */
  waitForSync(signal?: AbortSignal): Promise<void>;
  start(): void;
  stop(): Promise<void>;
}

interface WatchEvent<T> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: T & { code?: number; message?: string };
}

interface ObjectList<T> {
  metadata?: { resourceVersion?: string; continue?: string };
  items?: T[];
}

/** Cache key of an object: `namespace/name`, or `name` for cluster-scoped objects. */
export function objectKey(object: KubeObject): string {
  const name = object.metadata?.name ?? '';
  return object.metadata?.namespace ? `${object.metadata.namespace}/${name}` : name;
}

/** `namespace/name` → parts; a key without a slash is cluster-scoped. */
export function splitKey(key: string): { namespace: string | undefined; name: string } {
  const slash = key.indexOf('/');
  return slash < 0
    ? { namespace: undefined, name: key }
    : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

/**
 * The cached object a key names, or undefined when it is not there or its deletion has begun:
 * every reconciler treats an object being deleted as gone and only forgets it (what it owns
 * goes with it, by owner references).
 */
export function liveObject<T extends KubeObject>(
  informer: Pick<Informer<T>, 'get'>,
  key: string,
): T | undefined {
  const { namespace = '', name } = splitKey(key);
  const object = informer.get(namespace, name);
  return object?.metadata?.deletionTimestamp ? undefined : object;
}

/** kubectl's copy of the object as last applied: a second spec, read only by kubectl. */
export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

/**
 * Drops, in place, what the controllers never read of a cached object and what is often most
 * of it, as controller-runtime's cache transforms do: `metadata.managedFields`, and kubectl's
 * last-applied annotation (an object kept in Git and applied carries its whole spec twice).
 */
export function trimForCache(object: KubeObject): void {
  const metadata = object.metadata;
  if (!metadata) return;
  delete metadata.managedFields;
  const annotations = metadata.annotations as Record<string, string> | undefined;
  if (annotations && LAST_APPLIED_ANNOTATION in annotations) {
    const { [LAST_APPLIED_ANNOTATION]: _dropped, ...kept } = annotations;
    metadata.annotations = kept;
  }
}

/**
 * The parts of a cached object whose values repeat from object to object (string-pool.ts):
 * not the name, uid or resourceVersion, which never do.
 */
export function shareCachedStrings(object: KubeObject, pool: StringPool): void {
  const { metadata } = object;
  shareStrings((object as { spec?: unknown }).spec, pool);
  shareStrings((object as { status?: unknown }).status, pool);
  shareStrings(metadata?.labels, pool);
  shareStrings(metadata?.annotations, pool);
  shareStrings(metadata?.ownerReferences, pool);
}

/** Up to this much is added to each retry delay, so informers do not retry in step. */
const RETRY_JITTER_MS = 1000;

const DEFAULTS = {
  watchdogMs: 5 * 60_000,
  initialBackoffMs: 500,
  // Short: once an apiserver is back, watches must be too (a long cap made runs finish up to
  // 16 s late after an outage); the jitter below keeps replicas and informers apart.
  maxBackoffMs: 4000,
  pageSize: 500,
};
/** The server ends each watch after 5–10 minutes (jittered so watches do not renew in step). */
const WATCH_TIMEOUT_SECONDS = () => 300 + Math.floor(Math.random() * 300);

/**
 * A list-watch cache of one kind. Unlike client-node's informer it never stops on its own:
 * a failed list or watch is retried with capped exponential backoff, a 410 Gone (expired
 * resourceVersion) relists and reconciles the cache with the new list (emitting adds,
 * updates and deletes for what changed in between), and a watchdog restarts a watch that
 * has been silent longer than `watchdogMs` even though bookmarks were requested.
 * What the controller never reads is dropped from cached objects (trimForCache), and the
 * string values they repeat are kept once (shareCachedStrings).
 */
// eslint-disable-next-line max-lines-per-function -- a factory: the closures it returns share the state it keeps
export function createInformer<T extends KubeObject>(options: InformerOptions): Informer<T> {
  const settings = { ...DEFAULTS, ...definedOnly(options) };
  const { client, resource, logger } = options;
  const cache = new Map<string, T>();
  const owners = createOwnerIndex<T>();
  const strings = createStringPool();
  const addHandlers: Array<(object: T) => void> = [];
  const updateHandlers: Array<(previous: T, object: T) => void> = [];
  const deleteHandlers: Array<(object: T) => void> = [];
  const syncWaiters: Array<() => void> = [];
  let synced = false;
  let running: Promise<void> | undefined;
  let stopController: AbortController | undefined;
  const collection = resourcePath(resource, options.namespace);
  const log = logger?.child({
    informer: `${resource.plural}${resource.group ? `.${resource.group}` : ''}`,
  });

  function emit<A extends unknown[]>(handlers: Array<(...args: A) => void>, ...args: A): void {
    for (const handler of handlers) {
      try {
        handler(...args);
      } catch (error) {
        log?.error({ err: error }, 'informer event handler failed');
      }
    }
  }

  function store(object: T): void {
    trimForCache(object);
    shareCachedStrings(object, strings);
    const key = objectKey(object);
    const previous = cache.get(key);
    if (previous) owners.remove(key, previous);
    cache.set(key, object);
    owners.add(key, object);
    if (!previous) emit(addHandlers, object);
    else if (previous.metadata?.resourceVersion !== object.metadata?.resourceVersion) {
      emit(updateHandlers, previous, object);
    }
  }

  function remove(object: T): void {
    const key = objectKey(object);
    const previous = cache.get(key);
    if (previous) owners.remove(key, previous);
    cache.delete(key);
    trimForCache(object);
    emit(deleteHandlers, previous ?? object);
  }

  const selectors = () => ({
    labelSelector: options.labelSelector,
    fieldSelector: options.fieldSelector,
  });

  /** Lists everything and makes the cache match; returns the list's resourceVersion. */
  async function relist(signal: AbortSignal): Promise<string> {
    const items: T[] = [];
    let continueToken: string | undefined;
    let resourceVersion: string;
    do {
      const page = await client.request<ObjectList<T>>({
        path: collection,
        query: { ...selectors(), limit: settings.pageSize, continue: continueToken },
        signal,
      });
      items.push(...(page.items ?? []));
      continueToken = page.metadata?.continue || undefined;
      resourceVersion = page.metadata?.resourceVersion ?? '';
    } while (continueToken);
    const seen = new Set(items.map(objectKey));
    for (const [key, object] of cache) if (!seen.has(key)) remove(object);
    for (const item of items) store(item);
    if (!synced) {
      synced = true;
      for (const wake of syncWaiters.splice(0)) wake();
    }
    return resourceVersion;
  }

  /** Watches from resourceVersion until the stream ends; returns the last version seen. */
  async function watchFrom(resourceVersion: string, signal: AbortSignal): Promise<string> {
    const connection = new AbortController();
    const abortConnection = () => connection.abort();
    signal.addEventListener('abort', abortConnection, { once: true });
    let watchdog: NodeJS.Timeout | undefined;
    let silent = false;
    const arm = () => {
      clearTimeout(watchdog);
      watchdog = setTimeout(() => {
        silent = true;
        connection.abort();
      }, settings.watchdogMs);
    };
    let latest = resourceVersion;
    let gone = false;
    try {
      arm();
      await client.stream({
        path: collection,
        query: {
          ...selectors(),
          watch: true,
          resourceVersion,
          allowWatchBookmarks: true,
          timeoutSeconds: WATCH_TIMEOUT_SECONDS(),
        },
        signal: connection.signal,
        onLine: (line) => {
          arm();
          const event = JSON.parse(line) as WatchEvent<T>;
          if (event.type === 'ERROR') {
            if (event.object.code === 410) gone = true;
            else log?.warn({ status: event.object }, 'watch error event');
            connection.abort();
            return;
          }
          latest = event.object.metadata?.resourceVersion ?? latest;
          if (event.type === 'ADDED' || event.type === 'MODIFIED') store(event.object);
          else if (event.type === 'DELETED') remove(event.object);
        },
      });
    } catch (error) {
      if (!connection.signal.aborted) throw error;
    } finally {
      clearTimeout(watchdog);
      signal.removeEventListener('abort', abortConnection);
    }
    if (gone) throw new GoneError();
    if (silent)
      log?.warn({ watchdogMs: settings.watchdogMs }, 'watch silent for too long; restarting it');
    return latest;
  }

  async function run(signal: AbortSignal): Promise<void> {
    let failures = 0;
    let resourceVersion = '';
    while (!signal.aborted) {
      try {
        if (!resourceVersion) resourceVersion = await relist(signal);
        resourceVersion = await watchFrom(resourceVersion, signal);
        failures = 0;
      } catch (error) {
        if (signal.aborted) break;
        if (error instanceof GoneError || isGone(error)) {
          log?.info('resourceVersion expired (410 Gone); relisting');
          resourceVersion = '';
          continue;
        }
        const delay =
          exponentialDelay(failures++, settings.initialBackoffMs, settings.maxBackoffMs) +
          Math.random() * RETRY_JITTER_MS;
        log?.warn({ err: error, retryInMs: delay }, 'list/watch failed; retrying');
        await sleep(delay, signal);
      }
    }
  }

  return {
    resource,
    get: (namespace, name) => cache.get(namespace ? `${namespace}/${name}` : name),
    list: (namespace) => {
      const all = [...cache.values()];
      return namespace === undefined
        ? all
        : all.filter((object) => object.metadata?.namespace === namespace);
    },
    ownedBy: (uid) => owners.byUid(uid),
    ownedByName: (namespace, kind, name) => owners.byName(namespace, kind, name),
    onAdd: (handler) => void addHandlers.push(handler),
    onUpdate: (handler) => void updateHandlers.push(handler),
    onDelete: (handler) => void deleteHandlers.push(handler),
    hasSynced: () => synced,
    waitForSync(signal) {
      if (synced) return Promise.resolve();
      return new Promise((resolve, reject) => {
        if (signal?.aborted) return reject(new Error('aborted before the cache synced'));
        syncWaiters.push(resolve);
        signal?.addEventListener(
          'abort',
          () => reject(new Error('aborted before the cache synced')),
          {
            once: true,
          },
        );
      });
    },
    start() {
      if (running) return;
      stopController = new AbortController();
      running = run(stopController.signal);
    },
    async stop() {
      stopController?.abort();
      await running;
      running = undefined;
    },
  };
}

class GoneError extends Error {
  constructor() {
    super('resourceVersion too old (410 Gone)');
  }
}

function definedOnly(options: InformerOptions): Partial<typeof DEFAULTS> {
  const out: Partial<typeof DEFAULTS> = {};
  for (const key of Object.keys(DEFAULTS) as Array<keyof typeof DEFAULTS>) {
    if (options[key] !== undefined) out[key] = options[key];
  }
  return out;
}
