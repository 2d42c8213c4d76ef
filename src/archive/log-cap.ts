/**
 * The rule that bounds one Pod's archived log, shared by both stores so they keep the same
 * bytes. The head (the pieces that start in the first half of the cap) is always kept: it
 * holds how the run began (the hooks, the prompt). After each append, while the Pod's kept
 * bytes exceed the cap, the oldest piece after the head is dropped: the tail is the newest
 * output, where a failure usually is. Readers see an `elided` entry where bytes are missing.
 *
 * Pure functions over plain data: the stores keep the numbers (kept bytes and where dropping
 * has reached) in a row per Pod, and feed the candidates to drop from their own queries.
 */
import type { LogEntry, LogPiece } from './types.js';

/** A Pod's log bookkeeping. */
export interface LogCapState {
  /** The bytes of its kept pieces. */
  keptBytes: number;
  /** The end (offset + bytes) of the furthest piece dropped; 0 when none was. */
  droppedEnd: number;
}

export interface PieceSpan {
  offset: number;
  bytes: number;
}

/** Whether a piece at this offset is part of the head, which is never dropped. */
export function isHead(offset: number, capBytes: number): boolean {
  return offset < capBytes / 2;
}

/**
 * Whether a new piece (not already stored) is to be stored. A piece after the head that
 * starts before where dropping has reached was dropped once already (a restart re-reads the
 * log from its start): storing it again would put old bytes back into the elided span.
 */
export function acceptsPiece(offset: number, capBytes: number, state: LogCapState): boolean {
  return isHead(offset, capBytes) || offset >= state.droppedEnd;
}

export interface DropPlan {
  /** Offsets of the pieces to delete. */
  drop: number[];
  state: LogCapState;
  /** False when the candidates ran out before the kept bytes fit: ask with more. */
  done: boolean;
}

/**
 * Which pieces to drop so that the kept bytes fit the cap. `candidates` are the Pod's kept
 * pieces after the head, oldest (lowest offset) first; a store may pass them a page at a
 * time, calling again with the returned state while `done` is false and pieces remain.
 */
export function planDrops(
  state: LogCapState,
  capBytes: number,
  candidates: readonly PieceSpan[],
): DropPlan {
  const drop: number[] = [];
  let { keptBytes, droppedEnd } = state;
  for (const piece of candidates) {
    if (keptBytes <= capBytes) break;
    if (isHead(piece.offset, capBytes)) continue;
    drop.push(piece.offset);
    keptBytes -= piece.bytes;
    droppedEnd = Math.max(droppedEnd, piece.offset + piece.bytes);
  }
  return { drop, state: { keptBytes, droppedEnd }, done: keptBytes <= capBytes };
}

/** A piece as a reader gets it, with its length in bytes. */
export interface StoredPiece extends LogPiece {
  bytes: number;
}

/**
 * Turns a Pod-ordered stream of pieces (by slot, attempt, Pod, offset) into log entries,
 * with an `elided` entry wherever bytes are missing: between two pieces of a Pod, before a
 * Pod's first piece when it does not start at 0 (its log was first read part way), and after
 * its last kept piece when newer pieces were dropped (`droppedEnd`: the Pod's
 * LogCapState.droppedEnd, asked once per Pod).
 */
export async function* withElisions(
  pieces: AsyncIterable<StoredPiece> | Iterable<StoredPiece>,
  droppedEnd: (podUid: string) => number | Promise<number> = () => 0,
): AsyncGenerator<LogEntry> {
  let prev: StoredPiece | undefined;
  const trailer = async (last: StoredPiece): Promise<LogEntry | undefined> => {
    const end = last.offset + last.bytes;
    const dropped = await droppedEnd(last.podUid);
    if (dropped <= end) return undefined;
    const { podUid, slot, attempt } = last;
    return { kind: 'elided', podUid, slot, attempt, offset: end, bytes: dropped - end };
  };
  for await (const piece of pieces) {
    const samePod = prev !== undefined && prev.podUid === piece.podUid;
    if (prev !== undefined && !samePod) {
      const tail = await trailer(prev);
      if (tail !== undefined) yield tail;
    }
    const from = samePod && prev !== undefined ? prev.offset + prev.bytes : 0;
    if (piece.offset > from) {
      yield {
        kind: 'elided',
        podUid: piece.podUid,
        slot: piece.slot,
        attempt: piece.attempt,
        offset: from,
        bytes: piece.offset - from,
      };
    }
    const { bytes: _bytes, ...data } = piece;
    void _bytes;
    yield { kind: 'data', piece: data };
    prev = piece;
  }
  if (prev !== undefined) {
    const tail = await trailer(prev);
    if (tail !== undefined) yield tail;
  }
}
