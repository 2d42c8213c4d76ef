import type { Logger } from 'pino';
import { ArchiveError, type ArchiveStore, type LogAppend } from '../../archive/types.js';
import { errorMessage } from '../../workflow/errors.js';
import { createRecordParser } from '../events/records.js';
import { exponentialDelay } from '../runtime/backoff.js';
import type { PodLogSource } from '../shared/log-sink.js';
import { pushedCommitLines, type PodLogFacts } from './mapping.js';
import { PUSHED_COMMITS_LIMIT } from '../../workspace/git/index.js';

/**
 * The Pod logs on their way into the archive. Every line the IssueRun controller's log
 * follower reads comes here with its byte offset; lines are gathered into pieces (at most
 * PIECE_BYTES, or what came in PIECE_MS) and appended at the piece's offset. The offsets are
 * those of the log as read from its start, so a re-read (a cut stream, a restarted
 * controller) hands the same lines at the same offsets: lines below what was already queued
 * are skipped, and after a restart what the store already holds of a Pod is looked up once.
 * The lines are also parsed here for what an attempt's record needs (its hook records,
 * turns, usage, branch), so that the archiver needs nothing of the follower's state.
 */

export const PIECE_BYTES = 256 * 1024;
export const PIECE_MS = 1000;
/**
 * Most bytes of pieces one Pod may have waiting for a store that cannot take them: past it
 * the oldest pieces after the head are dropped (as the cap would drop them), with a warning.
 */
export const MAX_PENDING_BYTES = 8 * 1024 * 1024;
const RETRY = { baseMs: 500, maxMs: 30_000 };

interface PodLog {
  source: PodLogSource;
  parser: ReturnType<typeof createRecordParser>;
  facts: PodLogFacts;
  gitSeen: number;
  /** Lines below this offset are queued already (in this process). */
  nextOffset: number;
  /** What the store held of this log when this process first wrote it; undefined: not asked. */
  storedUpTo: number | undefined;
  buffer: string[];
  bufferStart: number;
  bufferBytes: number;
  timer: NodeJS.Timeout | undefined;
  pending: LogAppend[];
  pendingBytes: number;
  writing: Promise<void> | undefined;
  retryTimer: NodeJS.Timeout | undefined;
  failures: number;
  lastError: unknown;
}

export interface LogArchiveOptions {
  /** The store, once it is open; undefined while it cannot be reached. */
  store: () => ArchiveStore | undefined;
  capBytes: number;
  /** Masks the run's secret values (the runner masked the log already; this is the backstop). */
  redact: (runUid: string, text: string) => string;
  onWrite?: () => void;
  onFailure?: (error: unknown) => void;
  onDropped?: (bytes: number) => void;
  logger?: Logger;
  pieceBytes?: number;
  pieceMs?: number;
  maxPendingBytes?: number;
}

export interface LogArchive {
  /** The log follower's line sink. */
  line(source: PodLogSource, line: string, offset: number): void;
  /** What the Pod's log said so far; undefined when none of it was read in this process. */
  facts(podUid: string): PodLogFacts | undefined;
  /** The run's Pods whose logs were read in this process. */
  podsOf(runUid: string): PodLogSource[];
  /** Writes every line read so far of the run's Pods; throws what the store threw. */
  flushRun(runUid: string): Promise<void>;
  forgetRun(runUid: string): void;
  /** Writes what every Pod has buffered (at shutdown); failures are left to the next process. */
  flushAll(): Promise<void>;
  stop(): void;
}

const numberOr = (value: unknown, fallback: number): number =>
  typeof value === 'number' && Number.isFinite(value) ? value : fallback;

function usageOf(message: unknown): PodLogFacts['usage'] {
  const usage = (message as { usage?: unknown } | null)?.usage;
  if (typeof usage !== 'object' || usage === null) return undefined;
  const record = usage as Record<string, unknown>;
  return {
    inputTokens: numberOr(record.inputTokens, 0),
    outputTokens: numberOr(record.outputTokens, 0),
    totalTokens: numberOr(record.totalTokens, 0),
  };
}

const unavailable = () =>
  new ArchiveError('archive_unavailable', 'the archive is not open (still trying to reach it)');

// eslint-disable-next-line max-lines-per-function -- a factory: the closures it returns share the state it keeps
export function createLogArchive(options: LogArchiveOptions): LogArchive {
  const pieceBytes = options.pieceBytes ?? PIECE_BYTES;
  const pieceMs = options.pieceMs ?? PIECE_MS;
  const maxPending = options.maxPendingBytes ?? MAX_PENDING_BYTES;
  const pods = new Map<string, PodLog>();

  function parserFor(state: PodLog) {
    return createRecordParser({
      onRecord(record) {
        if (record.type !== 'turn_completed') return;
        const turn = numberOr((record.message as { turn?: unknown } | null)?.turn, 0);
        state.facts.turns = Math.max(state.facts.turns, turn || state.facts.turns + 1);
        const usage = usageOf(record.message);
        if (usage) state.facts.usage = usage;
      },
      onHook(record) {
        // A re-read from the start meets the records read before: skipped by position.
        if (record.seq < state.facts.hooks.length) return;
        state.facts.hooks.push({ ...record.message });
      },
      onGit(record) {
        if (record.seq < state.gitSeen) return;
        state.gitSeen = record.seq + 1;
        if (record.message.branch) state.facts.gitBranch = record.message.branch;
        if (record.message.step === 'push') {
          const pushed = [
            ...(state.facts.pushedCommits ?? []),
            ...pushedCommitLines(record.message.commits),
          ];
          state.facts.pushedCommits = pushed.slice(0, PUSHED_COMMITS_LIMIT);
        }
      },
    });
  }

  function podLog(source: PodLogSource): PodLog {
    let state = pods.get(source.podUid);
    if (state) return state;
    state = {
      source: { ...source },
      // Replaced at once below: the parser writes into this state.
      parser: createRecordParser({}),
      facts: { hooks: [], turns: 0 },
      gitSeen: 0,
      nextOffset: 0,
      storedUpTo: undefined,
      buffer: [],
      bufferStart: 0,
      bufferBytes: 0,
      timer: undefined,
      pending: [],
      pendingBytes: 0,
      writing: undefined,
      retryTimer: undefined,
      failures: 0,
      lastError: undefined,
    };
    state.parser = parserFor(state);
    pods.set(source.podUid, state);
    return state;
  }

  /** The buffered lines become one piece, queued for the store. */
  function cut(state: PodLog): void {
    if (state.timer) clearTimeout(state.timer);
    state.timer = undefined;
    if (state.buffer.length === 0) return;
    const { source } = state;
    const piece: LogAppend = {
      runUid: source.runUid,
      podUid: source.podUid,
      slot: source.slot,
      attempt: source.attempt,
      offset: state.bufferStart,
      data: options.redact(source.runUid, state.buffer.join('')),
      capBytes: options.capBytes,
    };
    state.pending.push(piece);
    state.pendingBytes += Buffer.byteLength(piece.data);
    state.buffer = [];
    state.bufferBytes = 0;
    bound(state);
    void drain(state);
  }

  /** A store away for long holds at most maxPending bytes of a Pod: the head and the newest. */
  function bound(state: PodLog): void {
    while (state.pendingBytes > maxPending && state.pending.length > 1) {
      const head = options.capBytes / 2;
      let index = state.pending.findIndex((piece) => piece.offset >= head);
      if (index < 0 || index === state.pending.length - 1) index = 0;
      const [dropped] = state.pending.splice(index, 1);
      const bytes = Buffer.byteLength(dropped?.data ?? '');
      state.pendingBytes -= bytes;
      options.onDropped?.(bytes);
      options.logger?.warn(
        { pod: state.source.podName, offset: dropped?.offset, bytes },
        'archive: a piece of a Pod log was dropped while the archive could not take it',
      );
    }
  }

  async function storedUpTo(store: ArchiveStore, source: PodLogSource): Promise<number> {
    let end = 0;
    const filter = { slot: source.slot, attempt: source.attempt };
    for await (const entry of store.readLog(source.runUid, filter)) {
      if (entry.kind === 'data') {
        if (entry.piece.podUid !== source.podUid) continue;
        end = Math.max(end, entry.piece.offset + Buffer.byteLength(entry.piece.data));
      } else if (entry.podUid === source.podUid) {
        end = Math.max(end, entry.offset + entry.bytes);
      }
    }
    return end;
  }

  /** The part of a piece the store lacks (pieces and the stored extent end on line ends). */
  function unstored(piece: LogAppend, upTo: number): LogAppend | undefined {
    const bytes = Buffer.from(piece.data);
    if (piece.offset + bytes.length <= upTo) return undefined;
    if (piece.offset >= upTo) return piece;
    return {
      ...piece,
      offset: upTo,
      data: bytes.subarray(upTo - piece.offset).toString('utf8'),
    };
  }

  async function writeAll(state: PodLog): Promise<void> {
    const store = options.store();
    if (!store) throw unavailable();
    state.storedUpTo ??= await storedUpTo(store, state.source);
    while (state.pending.length > 0) {
      const piece = state.pending[0] as LogAppend;
      const rest = unstored(piece, state.storedUpTo);
      if (rest) {
        await store.appendLog(rest);
        options.onWrite?.();
      }
      state.pending.shift();
      state.pendingBytes -= Buffer.byteLength(piece.data);
    }
  }

  function drain(state: PodLog): Promise<void> {
    if (state.writing) return state.writing;
    if (state.retryTimer || state.pending.length === 0) return Promise.resolve();
    const writing = writeAll(state).then(
      () => {
        state.failures = 0;
        state.lastError = undefined;
      },
      (error: unknown) => {
        state.lastError = error;
        options.onFailure?.(error);
        const delay = exponentialDelay(state.failures, RETRY.baseMs, RETRY.maxMs);
        state.failures += 1;
        options.logger?.warn(
          { pod: state.source.podName, err: errorMessage(error), retryInMs: delay },
          'archive: cannot write a Pod log piece; retrying',
        );
        state.retryTimer = setTimeout(() => {
          state.retryTimer = undefined;
          void drain(state);
        }, delay);
        state.retryTimer.unref();
      },
    );
    state.writing = writing.finally(() => {
      if (state.writing === guarded) state.writing = undefined;
    });
    const guarded = state.writing;
    return guarded;
  }

  async function flushPod(state: PodLog): Promise<void> {
    cut(state);
    await state.writing;
    if (state.pending.length === 0) return;
    // Waiting out a retry timer: a reconcile that asks now tries now.
    if (state.retryTimer) clearTimeout(state.retryTimer);
    state.retryTimer = undefined;
    await drain(state);
    if (state.pending.length > 0) {
      throw state.lastError instanceof Error ? state.lastError : unavailable();
    }
  }

  return {
    line(source, line, offset) {
      const state = podLog(source);
      if (offset === 0) {
        // A new read from the start: parse it afresh (records seen are skipped by position).
        state.parser = parserFor(state);
      }
      state.parser.push(`${line}\n`);
      if (offset < state.nextOffset) return;
      const bytes = Buffer.byteLength(line) + 1;
      if (state.buffer.length > 0 && offset !== state.bufferStart + state.bufferBytes) cut(state);
      if (state.buffer.length === 0) state.bufferStart = offset;
      state.buffer.push(`${line}\n`);
      state.bufferBytes += bytes;
      state.nextOffset = offset + bytes;
      if (state.bufferBytes >= pieceBytes) cut(state);
      else if (!state.timer) {
        state.timer = setTimeout(() => cut(state), pieceMs);
        state.timer.unref();
      }
    },
    facts: (podUid) => pods.get(podUid)?.facts,
    podsOf: (runUid) =>
      [...pods.values()].filter((state) => state.source.runUid === runUid).map((s) => s.source),
    async flushRun(runUid) {
      for (const state of [...pods.values()]) {
        if (state.source.runUid === runUid) await flushPod(state);
      }
    },
    async flushAll() {
      await Promise.all([...pods.values()].map((state) => flushPod(state).catch(() => {})));
    },
    forgetRun(runUid) {
      for (const [uid, state] of [...pods]) {
        if (state.source.runUid !== runUid) continue;
        if (state.timer) clearTimeout(state.timer);
        if (state.retryTimer) clearTimeout(state.retryTimer);
        pods.delete(uid);
      }
    },
    stop() {
      for (const state of pods.values()) {
        if (state.timer) clearTimeout(state.timer);
        if (state.retryTimer) clearTimeout(state.retryTimer);
      }
      pods.clear();
    },
  };
}
