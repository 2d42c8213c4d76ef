// Fakes for unit tests of the reconcilers: an informer cache, an API client that records
// what is asked of it, log followers, a clock and a WORKFLOW.md snapshot loader. None of
// them talks to a cluster; each is as small as the reconcilers' use of it.
import type {
  LogFollowers,
  FollowTarget,
  PodLogState,
} from '../../../src/controller/issuerun/log-follower.js';
import {
  workflowDigest,
  type RunnableWorkflow,
} from '../../../src/controller/shared/config-snapshot.js';
import {
  KubeApiError,
  type KubeClient,
  type RequestOptions,
  type ResourceRef,
} from '../../../src/controller/runtime/client.js';
import {
  objectKey,
  type Informer,
  type KubeObject,
} from '../../../src/controller/runtime/informer.js';
import { controllerOf } from '../../../src/controller/runtime/owner-index.js';
import { loadWorkflowText } from '../../../src/template/load-workflow.js';

/** An informer whose cache is a Map the test fills; handlers are kept but never called. */
export class FakeInformer<T extends KubeObject> implements Informer<T> {
  private readonly cache = new Map<string, T>();

  constructor(
    readonly resource: ResourceRef,
    objects: readonly T[] = [],
  ) {
    for (const object of objects) this.put(object);
  }

  /** Adds or replaces an object in the cache. */
  put(object: T): void {
    this.cache.set(objectKey(object), object);
  }

  /** Makes the cache hold exactly these objects. */
  replaceAll(objects: readonly T[]): void {
    this.cache.clear();
    for (const object of objects) this.put(object);
  }

  get(namespace: string | undefined, name: string): T | undefined {
    return this.cache.get(namespace ? `${namespace}/${name}` : name);
  }

  list(namespace?: string): T[] {
    const all = [...this.cache.values()];
    return namespace === undefined
      ? all
      : all.filter((object) => object.metadata?.namespace === namespace);
  }

  ownedBy(uid: string): T[] {
    return this.list().filter((object) => controllerOf(object)?.uid === uid);
  }

  ownedByName(namespace: string, kind: string, name: string): T[] {
    return this.list(namespace).filter((object) => {
      const owner = controllerOf(object);
      return owner?.kind === kind && owner.name === name;
    });
  }

  onAdd(): void {}
  onUpdate(): void {}
  onDelete(): void {}
  hasSynced(): boolean {
    return true;
  }
  waitForSync(): Promise<void> {
    return Promise.resolve();
  }
  start(): void {}
  stop(): Promise<void> {
    return Promise.resolve();
  }
}

/** One request as the fake client saw it. */
export interface Action {
  method: string;
  path: string;
  /** `configmaps`, `issueruns`, …: the resource plural in the path. */
  resource: string;
  /** From the path, or for a POST from the body's metadata.name. */
  name: string | undefined;
  subresource: string | undefined;
  body: unknown;
  /** `METHOD resource[/name][/subresource]`, e.g. `POST pods/eng-1-0-1`, `PATCH issueruns/eng-1/status`. */
  summary: string;
}

/** What the fake apiserver answers: an error status, or a body. */
/** An error status (with the Status's `details`, as the apiserver names a missing object), or a body. */
export type Answer = { status: number; reason?: string; details?: object } | { body: unknown };

export interface AnswerRule {
  /** Matched against Action.summary; `*` matches any run of characters. */
  match: string;
  answer: Answer;
}

/** A rule answering requests that match with an error status. */
export const failWith = (match: string, status: number, reason?: string): AnswerRule => ({
  match,
  answer: { status, ...(reason ? { reason } : {}) },
});
export const conflict = (match: string): AnswerRule => failWith(match, 409, 'AlreadyExists');

const bodyName = (body: unknown): string | undefined => {
  if (typeof body !== 'object' || body === null) return undefined;
  const metadata = (body as { metadata?: { name?: unknown } }).metadata;
  return typeof metadata?.name === 'string' ? metadata.name : undefined;
};

function describeRequest(options: RequestOptions): Action {
  const method = options.method ?? 'GET';
  // …/namespaces/<ns>/<plural>[/<name>[/<subresource>]] or, cluster-scoped, …/<plural>[…]
  const parts = options.path.split('/').filter(Boolean);
  const at = parts.indexOf('namespaces');
  const rest = at >= 0 ? parts.slice(at + 2) : parts.slice(parts[0] === 'api' ? 2 : 3);
  const [resource = '', pathName, subresource] = rest.map(decodeURIComponent);
  const name = pathName ?? (method === 'POST' ? bodyName(options.body) : undefined);
  const summary = [
    method,
    ' ',
    resource,
    name ? `/${name}` : '',
    subresource ? `/${subresource}` : '',
  ].join('');
  return { method, path: options.path, resource, name, subresource, body: options.body, summary };
}

const globToRegExp = (glob: string): RegExp =>
  new RegExp(
    `^${glob
      .split('*')
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  );

/**
 * A KubeClient that records every request as an Action and answers from rules (the latest
 * matching rule wins). Without a rule: writes succeed (a status PATCH returns a fresh
 * resourceVersion, as the apiserver does), and GETs answer 404 (nothing is stored).
 */
export class FakeKubeClient implements KubeClient {
  readonly actions: Action[] = [];
  private readonly rules: AnswerRule[] = [];
  private resourceVersion = 1000;

  answer(...rules: AnswerRule[]): void {
    this.rules.push(...rules);
  }

  /** The summaries of the actions recorded since `from` (an index into `actions`). */
  summaries(from = 0): string[] {
    return this.actions.slice(from).map((action) => action.summary);
  }

  async request<T = unknown>(options: RequestOptions): Promise<T> {
    const action = describeRequest(options);
    this.actions.push(action);
    const answer = [...this.rules]
      .reverse()
      .find((entry) => globToRegExp(entry.match).test(action.summary))?.answer;
    if (answer && 'status' in answer) {
      const body = {
        kind: 'Status',
        reason: answer.reason,
        message: `fake ${answer.status}`,
        ...(answer.details ? { details: answer.details } : {}),
      };
      throw new KubeApiError(answer.status, body, action.method, action.path);
    }
    if (answer) return answer.body as T;
    if (action.method === 'GET') {
      throw new KubeApiError(
        404,
        { kind: 'Status', reason: 'NotFound', message: 'fake: not stored' },
        'GET',
        action.path,
      );
    }
    this.resourceVersion += 1;
    const metadata = { name: action.name, resourceVersion: String(this.resourceVersion) };
    return (action.method === 'DELETE' ? { kind: 'Status', status: 'Success' } : { metadata }) as T;
  }

  async stream(options: RequestOptions & { onLine: (line: string) => void }): Promise<void> {
    this.actions.push(describeRequest(options));
    throw new Error('the fake client streams nothing');
  }

  close(): void {}
}

/** The fields of a Pod log state a test may set (`flushed`: its Event writes so far). */
export type LogFields = Partial<Omit<PodLogState, keyof FollowTarget>>;

/**
 * Log followers that never read a log. A state the test seeds is "what was read before";
 * `ensure` of an unknown Pod starts a read, as the real followers do, and that read never
 * ends (the state stays `streaming`).
 */
export class FakeLogFollowers implements LogFollowers {
  private readonly states = new Map<string, PodLogState>();
  readonly ensured: Array<{ podName: string; follow: boolean }> = [];

  seed(target: FollowTarget, fields: LogFields = {}): void {
    this.states.set(target.podUid, this.fresh(target, fields));
  }

  ensure(target: FollowTarget, follow: boolean): PodLogState {
    this.ensured.push({ podName: target.podName, follow });
    const key = target.podUid;
    const state = this.states.get(key) ?? this.fresh(target, {});
    this.states.set(key, state);
    if (!state.streaming && !state.completed && !(state.drained && !follow)) state.streaming = true;
    return state;
  }

  get(podUid: string): PodLogState | undefined {
    return this.states.get(podUid);
  }

  /** The log state of a Pod by name, for assertions. */
  byName(podName: string): PodLogState | undefined {
    return [...this.states.values()].find((state) => state.podName === podName);
  }

  ofRun(runUid: string): PodLogState[] {
    return [...this.states.values()].filter((state) => state.runUid === runUid);
  }

  forgetRun(runUid: string): void {
    for (const state of this.ofRun(runUid)) this.states.delete(state.podUid);
  }

  abandon(podUid: string): PodLogState | undefined {
    const state = this.states.get(podUid);
    if (state) Object.assign(state, { streaming: false, drained: true });
    return state;
  }

  stopAll(): void {
    this.states.clear();
  }

  private fresh(target: FollowTarget, fields: LogFields): PodLogState {
    return {
      ...target,
      hooks: [],
      gitRecords: 0,
      turns: 0,
      completed: false,
      streaming: false,
      drained: false,
      failures: 0,
      retryAt: 0,
      flushed: Promise.resolve(),
      ...fields,
    };
  }
}

/** A clock that moves only when told. */
export class FakeClock {
  private at: number;

  constructor(start: Date) {
    this.at = start.getTime();
  }

  readonly now = (): Date => new Date(this.at);

  advance(ms: number): void {
    this.at += ms;
  }
}

/**
 * loadWorkflowConfig over snapshot texts by ConfigMap name, parsed by the real loader; an
 * unknown name is a 404, as reading a missing ConfigMap would be.
 */
export function fakeWorkflowConfigLoader(snapshots: Record<string, string>) {
  const calls: string[] = [];
  const load = async (namespace: string, configMap: string): Promise<RunnableWorkflow> => {
    calls.push(`${namespace}/${configMap}`);
    const text = snapshots[configMap];
    if (text === undefined) {
      throw new KubeApiError(404, { kind: 'Status', reason: 'NotFound' }, 'GET', configMap);
    }
    return {
      text,
      digest: workflowDigest(text),
      loaded: loadWorkflowText(text, `ConfigMap ${configMap}`),
    };
  };
  return { load, calls };
}
