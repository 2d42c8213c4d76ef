// The log cap's rule (src/archive/log-cap.ts), shared by both archive stores: driven here
// through a tiny in-memory store of pieces, case by case.
import { describe, expect, it } from 'vitest';
import {
  acceptsPiece,
  isHead,
  planDrops,
  withElisions,
  type LogCapState,
  type StoredPiece,
} from '../../../src/archive/log-cap.js';
import type { LogEntry } from '../../../src/archive/types.js';

/** Appends pieces of `bytes` characters at `offset` as a store does; returns what a reader sees. */
async function run(capBytes: number, appends: [offset: number, bytes: number][], page = 2) {
  const kept = new Map<number, StoredPiece>();
  let state: LogCapState = { keptBytes: 0, droppedEnd: 0 };
  for (const [offset, bytes] of appends) {
    if (kept.has(offset) || !acceptsPiece(offset, capBytes, state)) continue;
    kept.set(offset, { podUid: 'p', slot: 0, attempt: 1, offset, bytes, data: 'x'.repeat(bytes) });
    state = { ...state, keptBytes: state.keptBytes + bytes };
    // Candidates a page at a time, as the stores query them.
    while (state.keptBytes > capBytes) {
      const candidates = [...kept.values()]
        .filter((p) => !isHead(p.offset, capBytes))
        .sort((a, b) => a.offset - b.offset)
        .slice(0, page);
      const plan = planDrops(state, capBytes, candidates);
      for (const o of plan.drop) kept.delete(o);
      state = plan.state;
      if (plan.done || candidates.length < page) break;
    }
  }
  const pieces = [...kept.values()].sort((a, b) => a.offset - b.offset);
  const entries: string[] = [];
  for await (const e of withElisions(pieces, () => state.droppedEnd)) entries.push(show(e));
  return { entries, state };
}

function show(e: LogEntry): string {
  return e.kind === 'data'
    ? `${e.piece.offset}+${e.piece.data.length}`
    : `gap@${e.offset}:${e.bytes}`;
}

describe('log cap', () => {
  it.each([
    {
      name: 'under the cap: all kept',
      cap: 100,
      appends: [
        [0, 30],
        [30, 30],
        [60, 30],
      ],
      want: ['0+30', '30+30', '60+30'],
      kept: 90,
    },
    {
      name: 'exactly the cap: all kept',
      cap: 100,
      appends: [
        [0, 50],
        [50, 50],
      ],
      want: ['0+50', '50+50'],
      kept: 100,
    },
    {
      name: 'past the cap: head kept, oldest tail piece dropped, one marker with its bytes',
      cap: 100,
      appends: [
        [0, 20],
        [20, 20],
        [40, 20],
        [60, 20],
        [80, 20],
        [100, 20],
      ],
      want: ['0+20', '20+20', '40+20', 'gap@60:20', '80+20', '100+20'],
      kept: 100,
    },
    {
      name: 'long log: the head (offsets < cap/2) and the newest tail',
      cap: 100,
      appends: Array.from({ length: 20 }, (_, i) => [i * 10, 10] as [number, number]),
      want: [
        '0+10',
        '10+10',
        '20+10',
        '30+10',
        '40+10',
        'gap@50:100',
        '150+10',
        '160+10',
        '170+10',
        '180+10',
        '190+10',
      ],
      kept: 100,
    },
    {
      name: 'a piece that starts in the head is head even when it runs past cap/2; a marker ends a log whose newest pieces were dropped',
      cap: 100,
      appends: [
        [0, 45],
        [45, 40],
        [85, 30],
        [115, 30],
      ],
      want: ['0+45', '45+40', 'gap@85:60'],
      kept: 85,
    },
    {
      name: 're-appending a stored offset is a no-op',
      cap: 100,
      appends: [
        [0, 30],
        [30, 30],
        [0, 30],
        [30, 30],
      ],
      want: ['0+30', '30+30'],
      kept: 60,
    },
    {
      name: 're-appending a dropped piece (a restart re-reading the log) leaves it dropped',
      cap: 100,
      appends: [
        [0, 25],
        [25, 25],
        [50, 25],
        [75, 25],
        [100, 25],
        [50, 25],
      ],
      want: ['0+25', '25+25', 'gap@50:25', '75+25', '100+25'],
      kept: 100,
    },
    {
      name: 'a new piece larger than the room the head leaves is itself dropped',
      cap: 100,
      appends: [
        [0, 40],
        [40, 40],
        [80, 40],
      ],
      want: ['0+40', '40+40', 'gap@80:40'],
      kept: 80,
    },
    {
      name: 'a log first read part way starts with a marker',
      cap: 100,
      appends: [
        [500, 10],
        [510, 10],
      ],
      want: ['gap@0:500', '500+10', '510+10'],
      kept: 20,
    },
  ] as { name: string; cap: number; appends: [number, number][]; want: string[]; kept: number }[])(
    '$name',
    async ({ cap, appends, want, kept }) => {
      const { entries, state } = await run(cap, appends);
      expect(entries).toEqual(want);
      expect(state.keptBytes).toBe(kept);
    },
  );

  it('asks for more candidates when a page of them was not enough', () => {
    const plan = planDrops({ keptBytes: 300, droppedEnd: 0 }, 100, [
      { offset: 100, bytes: 50 },
      { offset: 150, bytes: 50 },
    ]);
    expect(plan).toEqual({
      drop: [100, 150],
      state: { keptBytes: 200, droppedEnd: 200 },
      done: false,
    });
  });

  it('keeps separate Pods apart: no marker between the end of one and the start of the next', async () => {
    const piece = (podUid: string, offset: number): StoredPiece => ({
      podUid,
      slot: 0,
      attempt: podUid === 'a' ? 1 : 2,
      offset,
      bytes: 10,
      data: 'x'.repeat(10),
    });
    const entries: string[] = [];
    for await (const e of withElisions([
      piece('a', 0),
      piece('a', 10),
      piece('b', 0),
      piece('b', 30),
    ])) {
      entries.push(`${e.kind === 'data' ? e.piece.podUid : e.podUid}:${show(e)}`);
    }
    expect(entries).toEqual(['a:0+10', 'a:10+10', 'b:0+10', 'b:gap@10:20', 'b:30+10']);
  });
});
