import { readFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { SHUTDOWN_BUDGET } from '../../../../src/controller/main.js';
import { handleShutdownSignals } from '../../../../src/controller/runtime/shutdown.js';

const root = join(import.meta.dirname, '../../../..');

/** A logger whose lines the test reads back. */
function recordingLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean))
        lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level: 'debug' }, sink), lines };
}

const until = async (ok: () => boolean, timeoutMs = 5_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

// Real signals to this test's own process, one it does not otherwise use: with a listener
// installed, Node does not take its default action.
const SIGNAL = 'SIGUSR2';

/** handleShutdownSignals on SIGNAL, logging to lines and exiting into exits; a stop that never ends. */
function handled(options: Partial<Parameters<typeof handleShutdownSignals>[0]>) {
  const { logger, lines } = recordingLogger();
  const exits: number[] = [];
  const handle = handleShutdownSignals({
    logger,
    stop: () => new Promise<void>(() => {}),
    waitsFor: 'a stop that never ends',
    deadlineMs: 60_000,
    exit: (code) => void exits.push(code),
    signals: [SIGNAL],
    ...options,
  });
  return { handle, lines, exits };
}

describe('handleShutdownSignals', () => {
  it('exits with 1 at the deadline when the stop hangs, naming what is still open', async () => {
    const { handle, lines, exits } = handled({ deadlineMs: 50 });
    try {
      process.kill(process.pid, SIGNAL);
      await until(() => exits.length > 0);
      expect(exits).toEqual([1]);
      expect(lines.find((line) => line.msg === 'shutting down')).toMatchObject({
        signal: SIGNAL,
        waitsFor: 'a stop that never ends',
      });
      const deadline = lines.find((line) => String(line.msg).startsWith('shutdown deadline'));
      expect(Array.isArray(deadline?.open)).toBe(true);
    } finally {
      handle.dispose();
    }
  });

  it('exits at once on a second signal, with 128 + its number', async () => {
    const { handle, lines, exits } = handled({});
    try {
      process.kill(process.pid, SIGNAL);
      await until(() => lines.some((line) => line.msg === 'shutting down'));
      expect(exits).toEqual([]);
      process.kill(process.pid, SIGNAL);
      await until(() => exits.length > 0);
      // SIGUSR2 is 12 on Linux: 140, as a shell reports a process it ended.
      expect(exits).toEqual([128 + os.constants.signals[SIGNAL]]);
      expect(lines.some((line) => String(line.msg).startsWith('second signal'))).toBe(true);
    } finally {
      handle.dispose();
    }
  });

  it('after a stop that left a handle open: logs it and exits 0 after the linger', async () => {
    const leaked = setInterval(() => {}, 1_000);
    const { handle, lines, exits } = handled({
      stop: async () => {},
      waitsFor: 'nothing',
      deadlineMs: 200,
      lingerMs: 50,
    });
    try {
      process.kill(process.pid, SIGNAL);
      expect(await handle.stopped).toBe(SIGNAL);
      await until(() => exits.length > 0);
      expect(exits).toEqual([0]);
      const linger = lines.find((line) => String(line.msg).startsWith('still open'));
      expect(linger?.open).toContain('Timeout');
      // The deadline was cleared by the stop's end: it never fires.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(exits).toEqual([0]);
    } finally {
      clearInterval(leaked);
      handle.dispose();
    }
  });
});

describe('the shutdown budget', () => {
  const graceOf = (file: string): number => {
    const match = /^\s*terminationGracePeriodSeconds: (\d+)$/m.exec(
      readFileSync(join(root, file), 'utf8'),
    );
    if (!match) throw new Error(`${file}: no terminationGracePeriodSeconds`);
    return Number(match[1]) * 1000;
  };

  it.each(['charts/lorenz/templates/deployment.yaml', 'config/manager/manager.yaml'])(
    'ends before the kubelet SIGKILLs the Pod of %s',
    (file) => {
      const grace = graceOf(file);
      const { toolCallsMs, reconcilesMs, leaseReleaseMs, deadlineMs } = SHUTDOWN_BUDGET;
      expect(toolCallsMs + reconcilesMs + leaseReleaseMs).toBeLessThanOrEqual(deadlineMs);
      // A second or more to spare: the exit, the log flushed, the kubelet's own clock.
      expect(deadlineMs).toBeLessThan(grace - 1_000);
    },
  );
});
