// The run Pod's log as the runner writes it: hook output streamed as hook_output records,
// redacted record by record, in bounded memory (the real bundle in a child process), and
// through the SSH executor against a real sshd.
import { spawn } from 'node:child_process';
import { mkdir, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRecordParser } from '../../../src/controller/events/records.js';
import { runHook } from '../../../src/workspace/hooks.js';
import type { HookExecutionMessage, LorenzEvent } from '../../../src/workflow/events.js';
import { normalizeIssue } from '../../../src/workflow/issue.js';
import { startSshd } from '../../support/fakes/sshd.js';
import { sshExecutor } from '../executor/ssh/support.js';
import { runInPod, writeRunInputs } from './run-inputs.js';
import { tempDirPerTest } from '../../support/temp-dir.js';

const dir = tempDirPerTest('lorenz-runner-output-');

const workflow = (afterCreate: string) => `---
hooks:
  timeout_ms: 120000
  after_create: ${JSON.stringify(afterCreate)}
---
Work on {{ issue.identifier }}`;

async function writeInputs(text: string): Promise<string> {
  const inputsDir = await writeRunInputs(join(dir(), 'inputs'), text, { title: 'out' });
  await mkdir(join(dir(), 'ws'), { recursive: true });
  return inputsDir;
}

const SECRET = 's3cr3t-token-value';

describe.runIf(process.platform === 'linux')('the runner streams hook output', () => {
  it.each([
    ['in one write', `printf 'pw=${SECRET}\\n'`],
    [
      'in two writes 300 ms apart',
      `printf 'pw=${SECRET.slice(0, 6)}'; sleep 0.3; printf '%s\\n' '${SECRET.slice(6)}'`,
    ],
    [
      'cut by a quiet spell, no newline',
      `printf 'pw=${SECRET.slice(0, 6)}'; sleep 0.5; printf %s '${SECRET.slice(6)}'`,
    ],
  ])('redacts a secret a hook prints %s, in every record', async (_case, hook) => {
    const { code, lines, events } = await runInPod(dir(), {
      inputsDir: await writeInputs(workflow(hook)),
      noAgent: true,
      env: { ...process.env, LORENZ_REDACT_0: SECRET },
    });
    expect(code, lines.join('')).toBe(0);
    const texts = events.flatMap((event) =>
      event.type === 'hook_output' ? [event.message.text] : [],
    );
    expect(texts.join('')).toMatch(/^pw=\[redacted\]\n?$/);
    // Not even the first piece of it, in any record of the output (the command quotes it).
    const outputs = events.flatMap((event) =>
      event.type === 'hook_output' || event.type === 'hook_execution'
        ? [JSON.stringify({ ...event.message, command: '' })]
        : [],
    );
    for (const output of outputs) expect(output).not.toContain(SECRET.slice(0, 6));
  });

  it("streams 200 MB of hook output with the runner's memory bounded, the hook record still at 4096", async () => {
    const bundle = resolve('dist/lorenz.js');
    const runOnce = async (hook: string) => {
      const inputsDir = await writeInputs(workflow(hook));
      // A capped heap: a runner that held the output would run out of memory here, however
      // the machine's load delays its garbage collector; the peak RSS is measured as well.
      const child = spawn(
        process.execPath,
        [
          '--max-old-space-size=96',
          bundle,
          'runner',
          '--inputs',
          inputsDir,
          '--workspace',
          join(dir(), 'ws'),
          '--issue-state-file',
          join(dir(), 'state'),
          '--termination-log',
          join(dir(), 'termination-log'),
          '--no-agent',
        ],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      // The peak resident set of the runner itself (not its hook), read while it runs.
      let peakKb = 0;
      const sample = async () => {
        const status = await readFile(`/proc/${child.pid}/status`, 'utf8').catch(() => '');
        const hwm = /VmHWM:\s+(\d+) kB/.exec(status);
        if (hwm) peakKb = Math.max(peakKb, Number(hwm[1]));
      };
      const sampler = setInterval(() => void sample(), 25);
      let streamed = 0;
      let records = 0;
      const hooks: HookExecutionMessage[] = [];
      const parser = createRecordParser({
        onRecord(record) {
          if (record.type !== 'hook_output') return;
          records += 1;
          streamed += record.message.text.length;
        },
        onHook: (hook) => hooks.push(hook.message),
      });
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (chunk: string) => parser.push(chunk));
      const code = await new Promise<number | null>((done) => child.once('close', done));
      clearInterval(sampler);
      parser.end();
      return { code, peakKb, streamed, records, hooks };
    };
    const baseline = await runOnce('echo hi');
    expect(baseline).toMatchObject({ code: 0, streamed: 3 });
    const loud = await runOnce("head -c 200000000 /dev/zero | tr '\\0' x");
    expect(loud.code).toBe(0);
    expect(loud.streamed).toBe(200_000_000);
    expect(loud.records).toBeGreaterThanOrEqual(200_000_000 / (16 * 1024));
    expect(loud.hooks.at(-1)).toMatchObject({
      status: 'completed',
      output: `${'x'.repeat(4096)}\n[truncated ${200_000_000 - 4096} chars]`,
      outputTruncated: true,
    });
    expect(baseline.peakKb).toBeGreaterThan(0);
    // Holding the output would take 200 MB at least (400 MB as UTF-16).
    expect(loud.peakKb - baseline.peakKb).toBeLessThan(150 * 1024);
  }, 180_000);
});

describe('the SSH executor streams hook output', () => {
  it('tells every piece of output as it comes, then the record of the whole', async () => {
    const sshd = await startSshd();
    const executor = await sshExecutor(sshd);
    try {
      const workspace = join(sshd.home, 'ENG-1');
      await executor.ensureDirectory(workspace);
      const events: { at: number; event: LorenzEvent }[] = [];
      const message = await runHook({
        executor,
        emit: (event) => events.push({ at: performance.now(), event }),
        hookName: 'after_run',
        command: "echo one; sleep 0.5; echo two >&2; sleep 0.5; printf 'a\\377b\\0c'",
        workspace,
        root: sshd.home,
        issue: normalizeIssue({ identifier: 'ENG-1', title: 'out' }),
        timeoutMs: 10_000,
        slot: 0,
      });
      const outputs = events.filter((entry) => entry.event.type === 'hook_output');
      expect(
        outputs.map(({ event }) => event.message),
        JSON.stringify(events),
      ).toEqual([
        { hookName: 'after_run', slot: 0, seq: 0, text: 'one\n' },
        { hookName: 'after_run', slot: 0, seq: 0, text: 'two\n' },
        { hookName: 'after_run', slot: 0, seq: 0, text: 'a\ufffdb\u0000c' },
      ]);
      expect((outputs[1]?.at ?? 0) - (outputs[0]?.at ?? 0)).toBeGreaterThan(350);
      expect(events.at(-1)?.event.type).toBe('hook_execution');
      expect(message).toMatchObject({ status: 'completed', output: 'one\ntwo\na\ufffdb\u0000c' });
    } finally {
      await executor.shutdown();
      await sshd.stop();
    }
  }, 60_000);
});
