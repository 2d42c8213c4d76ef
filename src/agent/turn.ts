import type { Bridge, BridgeExit } from './bridge.js';
import type { acp } from './client.js';
import { AgentFailure, bridgeEnded, cancelledByCaller, quoteError } from './failures.js';
import { EXIT_SETTLE_MS, type ActiveTurn } from './session.js';
import { within } from './timing.js';

export interface TurnLimits {
  turnTimeoutMs: number;
  /** ≤ 0 disables the stall check. */
  stallTimeoutMs: number;
  /** How long a cancelled turn may take to answer before the bridge is killed. */
  cancelGraceMs: number;
}

export interface TurnInput {
  connection: acp.ClientConnection;
  bridge: Bridge;
  sessionId: string;
  number: number;
  text: string;
  limits: TurnLimits;
  signal: AbortSignal;
  /** Called with the turn's handle before the prompt is sent. */
  onStart(turn: ActiveTurn): void;
}

export type TurnResult =
  | { ok: true; stopReason: string; usage: acp.Usage | null | undefined }
  | { ok: false; failure: AgentFailure; usage: acp.Usage | null | undefined };

/** Stop reasons after which the loop goes on; `cancelled` cancels, anything else fails. */
const COMPLETED_STOP_REASONS = new Set(['end_turn', 'max_tokens', 'max_turn_requests']);

type Outcome =
  | { kind: 'answer'; response: acp.PromptResponse }
  | { kind: 'error'; error: unknown }
  | { kind: 'exit'; exit: BridgeExit }
  | { kind: 'interrupted'; failure: AgentFailure };

/**
 * One prompt turn, bounded by the turn timeout, the stall timeout (silence: no update, no
 * stderr), the caller's cancellation and whatever the client handlers interrupt it for. An
 * interrupted turn is cancelled politely (session/cancel) and given a short grace to answer;
 * the caller kills the bridge afterwards either way.
 */
export async function runTurn(input: TurnInput): Promise<TurnResult> {
  const { bridge, limits, number } = input;
  let interrupt: (failure: AgentFailure) => void = () => undefined;
  const interrupted = new Promise<AgentFailure>((done) => {
    interrupt = (failure) => {
      interrupt = () => undefined; // the first reason wins
      done(failure);
    };
  });

  const clocks = startClocks(limits, (failure) => interrupt(failure), number, bridge.command);
  const onAbort = (): void => interrupt(cancelledByCaller());
  input.signal.addEventListener('abort', onAbort, { once: true });
  if (input.signal.aborted) onAbort();
  clocks.activity();
  input.onStart({
    number,
    interrupt: (failure) => interrupt(failure),
    activity: clocks.activity,
    pause: clocks.pause,
  });

  const settled = input.connection.agent
    .request('session/prompt', {
      sessionId: input.sessionId,
      prompt: [{ type: 'text', text: input.text }],
    })
    .then(
      (response): Outcome => ({ kind: 'answer', response }),
      (error: unknown): Outcome => ({ kind: 'error', error }),
    );
  let outcome: Outcome;
  try {
    outcome = await Promise.race<Outcome>([
      settled,
      bridge.exited.then((exit) => ({ kind: 'exit', exit })),
      interrupted.then((failure) => ({ kind: 'interrupted', failure })),
    ]);
  } finally {
    clocks.settle();
    input.signal.removeEventListener('abort', onAbort);
  }
  return judge(input, outcome, settled);
}

/**
 * The stall timer (silence: no update, no stderr) and the turn timer. While a handler waits
 * for a person (an ask), neither runs: the agent is not stalled and the wait has its own
 * deadline (agent.approvals.timeout_ms).
 */
function startClocks(
  limits: TurnLimits,
  interrupt: (failure: AgentFailure) => void,
  number: number,
  command: string,
): { activity: () => void; pause: () => () => void; settle: () => void } {
  let stallTimer: NodeJS.Timeout | undefined;
  // Updates already in the pipe are still delivered after the turn has settled (a cancelled
  // turn's last chunks): they must not arm a new stall timer, which nothing would clear and
  // which would keep the process alive for stall_timeout_ms (a runner that never exits).
  let settledTurn = false;
  let pauses = 0;
  const activity = (): void => {
    if (settledTurn || pauses > 0 || limits.stallTimeoutMs <= 0) return;
    clearTimeout(stallTimer);
    stallTimer = setTimeout(
      () =>
        interrupt(
          new AgentFailure(
            'turn_stalled',
            `turn ${number} stalled: nothing from agent bridge ${command} for ${limits.stallTimeoutMs} ms`,
          ),
        ),
      limits.stallTimeoutMs,
    );
  };
  const turnClock = startTurnClock(limits.turnTimeoutMs, () =>
    interrupt(
      new AgentFailure('turn_timeout', `turn ${number} timed out after ${limits.turnTimeoutMs} ms`),
    ),
  );
  const pause = (): (() => void) => {
    pauses += 1;
    if (pauses === 1) {
      turnClock.stop();
      clearTimeout(stallTimer);
    }
    let resumed = false;
    return () => {
      if (resumed) return;
      resumed = true;
      pauses -= 1;
      if (pauses > 0 || settledTurn) return;
      turnClock.start();
      activity();
    };
  };
  const settle = (): void => {
    settledTurn = true;
    turnClock.stop();
    clearTimeout(stallTimer);
  };
  return { activity, pause, settle };
}

/** The turn timeout as a clock that can stop and go on: stopped time does not count. */
function startTurnClock(timeoutMs: number, onTimeout: () => void): { start(): void; stop(): void } {
  let remaining = timeoutMs;
  let startedAt = 0;
  let timer: NodeJS.Timeout | undefined;
  const clock = {
    start() {
      if (timer !== undefined) return;
      startedAt = performance.now();
      timer = setTimeout(onTimeout, Math.max(0, remaining));
    },
    stop() {
      if (timer === undefined) return;
      clearTimeout(timer);
      timer = undefined;
      remaining -= performance.now() - startedAt;
    },
  };
  clock.start();
  return clock;
}

async function judge(
  input: TurnInput,
  outcome: Outcome,
  settled: Promise<Outcome>,
): Promise<TurnResult> {
  const { bridge, number } = input;
  const when = `during turn ${number}`;
  switch (outcome.kind) {
    case 'answer': {
      const { stopReason, usage } = outcome.response;
      if (COMPLETED_STOP_REASONS.has(stopReason)) return { ok: true, stopReason, usage };
      const failure =
        stopReason === 'cancelled'
          ? new AgentFailure('turn_cancelled', `the agent cancelled turn ${number}`)
          : new AgentFailure('acp_turn_failed', `acp_turn_failed: ${stopReason}`);
      return { ok: false, failure, usage };
    }
    case 'exit':
      return {
        ok: false,
        failure: bridgeEnded(bridge.command, outcome.exit, bridge.stderrTail(), when),
        usage: undefined,
      };
    case 'error': {
      const exit = input.connection.signal.aborted
        ? await within(bridge.exited, EXIT_SETTLE_MS)
        : undefined;
      if (exit) {
        return {
          ok: false,
          failure: bridgeEnded(bridge.command, exit, bridge.stderrTail(), when),
          usage: undefined,
        };
      }
      const failure = new AgentFailure(
        'acp_turn_failed',
        `acp_turn_failed: agent bridge ${bridge.command} answered session/prompt with an error: ${quoteError(outcome.error)}`,
      );
      return { ok: false, failure, usage: undefined };
    }
    case 'interrupted': {
      await input.connection.agent
        .notify('session/cancel', { sessionId: input.sessionId })
        .catch(() => undefined);
      const late = await within(
        Promise.race([settled, bridge.exited.then(() => undefined)]),
        input.limits.cancelGraceMs,
      );
      const usage = late?.kind === 'answer' ? late.response.usage : undefined;
      return { ok: false, failure: outcome.failure, usage };
    }
  }
}
