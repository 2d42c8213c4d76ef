import { afterEach, describe, expect, it, vi } from 'vitest';
import { runTurn, type TurnInput } from '../../../src/agent/turn.js';
import type { ActiveTurn } from '../../../src/agent/session.js';
import { AgentFailure, type AgentFailureCode } from '../../../src/agent/failures.js';

/**
 * A cancelled run Pod must exit: nothing of a settled turn may keep the runner's event loop
 * alive. Updates the bridge sent before the cancel are still delivered after the turn has
 * settled; they used to arm a fresh stall timer (stall_timeout_ms, 5 min by default) that
 * nothing cleared, so the runner ran after_run and then never exited (the cancellation flake).
 */
describe('a settled turn leaves no timer behind', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  const fakeInput = (signal: AbortSignal, onStart: (turn: ActiveTurn) => void): TurnInput => ({
    connection: {
      agent: {
        // The prompt never answers by itself: only the cancel ends the turn.
        request: () => new Promise(() => undefined),
        notify: () => Promise.resolve(),
      },
      signal: new AbortController().signal,
    } as unknown as TurnInput['connection'],
    bridge: {
      command: 'fake-bridge',
      exited: new Promise(() => undefined),
      stderrTail: () => [],
    } as unknown as TurnInput['bridge'],
    sessionId: 's-1',
    number: 1,
    text: 'work',
    limits: { turnTimeoutMs: 3_600_000, stallTimeoutMs: 300_000, cancelGraceMs: 10 },
    signal,
    onStart,
  });

  it.each<[string, AgentFailureCode]>([
    ['cancelled by the caller', 'turn_cancelled'],
    ['interrupted by the turn itself', 'turn_input_required'],
  ])('%s: late activity arms no stall timer', async (_case, code) => {
    const controller = new AbortController();
    let turn: ActiveTurn | undefined;
    const result = runTurn(
      fakeInput(controller.signal, (started) => {
        turn = started;
      }),
    );
    if (code === 'turn_cancelled') controller.abort();
    else turn?.interrupt(new AgentFailure(code, 'asked for input'));
    const settled = await result;
    expect(settled.ok === false && settled.failure.code).toBe(code);

    const setTimeoutSpy = vi.spyOn(globalThis, 'setTimeout');
    turn?.activity(); // an update that was already in the pipe
    expect(setTimeoutSpy).not.toHaveBeenCalled();
  });

  it('still re-arms the stall timer on activity while the turn runs', async () => {
    const controller = new AbortController();
    let turn: ActiveTurn | undefined;
    const result = runTurn(
      fakeInput(controller.signal, (started) => {
        turn = started;
      }),
    );
    const setTimeoutSpy = vi.spyOn(globalThis, 'setTimeout');
    turn?.activity();
    expect(setTimeoutSpy).toHaveBeenCalledWith(expect.any(Function), 300_000);
    setTimeoutSpy.mockRestore();
    controller.abort();
    await result;
  });
});
