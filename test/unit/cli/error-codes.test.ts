import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { exitCodeForError } from '../../../src/cli/exit-codes.js';
import { main } from '../../../src/cli/main.js';
import {
  ERROR_CODE_MEANINGS,
  isLorenzErrorCode,
  LorenzError,
  type LorenzErrorCode,
  type SlotErrorCode,
} from '../../../src/workflow/errors.js';
import { CLI_BINS, runCli, type CliBin } from '../../support/cli-bins.js';

// What `lorenz` prints for a failure is `lorenz: <code>: <what>`, the code once, and its exit
// status is the one docs/cli.md's error table gives (generated from exit-codes.ts).
const dir = mkdtempSync(join(tmpdir(), 'lorenz-cli-codes-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const occurrences = (text: string, word: string) => text.split(word).length - 1;

const LORENZ_CODES = (Object.keys(ERROR_CODE_MEANINGS) as SlotErrorCode[]).filter(
  (code): code is LorenzErrorCode => isLorenzErrorCode(code),
);

describe('every error code, as the CLI prints it', () => {
  let written = '';
  beforeAll(() => {
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written += String(chunk);
      return true;
    });
  });
  afterEach(() => {
    written = '';
  });
  afterAll(() => {
    vi.restoreAllMocks();
  });

  // Many messages start with their own code (they read alone in hook records and statuses);
  // others do not. Either way the line says the code once.
  it.each(
    LORENZ_CODES.flatMap((code) => [
      [code, `${code}: what went wrong`],
      [code, 'what went wrong'],
    ]),
  )('%s (message %j)', async (code, message) => {
    const status = await main(['fails'], {
      fails: () => Promise.resolve(() => Promise.reject(new LorenzError(code, message, {}))),
    });
    expect(written).toBe(`lorenz: ${code}: what went wrong\n`);
    expect(occurrences(written, code)).toBe(1);
    expect(status).toBe(exitCodeForError(code));
  });
});

describe.each(CLI_BINS)('through $name', (bin: CliBin) => {
  const issue = join(dir, 'issue.yaml');
  writeFileSync(issue, 'identifier: ENG-1\ntitle: One\nstate: Todo\n');
  const workflow = (name: string, worker: string) => {
    const path = join(dir, `${name}.md`);
    writeFileSync(
      path,
      `---\nworkspace:\n  root: ${join(dir, 'ws')}\nworker:\n${worker}---\nDo it.\n`,
    );
    return path;
  };

  // Refused when the workflow loads, before any host is tried: an invalid workflow, exit 2.
  it.each([['0'], ['-1'], ['"abc"'], ['1.5'], ['2147483648']])(
    'worker.ssh_timeout_ms: %s is invalid_ssh_timeout, exit 2',
    (value) => {
      const path = workflow(
        'timeout',
        `  ssh_hosts: [worker@127.0.0.1:1]\n  ssh_timeout_ms: ${value}\n`,
      );
      const result = runCli(bin, ['run', '--no-agent', '--workflow', path, '--issue', issue], dir);
      expect(result.code).toBe(2);
      expect(result.stderr).toBe(
        'lorenz: invalid_ssh_timeout: worker.ssh_timeout_ms: ' +
          'must be a positive integer no greater than 2147483647\n',
      );
    },
  );

  it("a slot's failure line names its code once (a missing agent.skills source)", () => {
    const path = join(dir, 'skills.md');
    writeFileSync(
      path,
      `---\nworkspace:\n  root: ${join(dir, 'ws')}\nagent:\n  skills: [./no-such-skill]\n---\nHi\n`,
    );
    const result = runCli(bin, ['run', '--no-agent', '--workflow', path, '--issue', issue], dir);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `slot 0 failed: workspace_skill_source_missing: ${join(dir, 'no-such-skill')}\n`,
    );
  });

  it('a host with nothing listening: ssh_connect once, exit 1', () => {
    const key = join(dir, `key-${bin.name.replace(/\W/g, '-')}`);
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', key]);
    const knownHosts = join(dir, 'known_hosts');
    writeFileSync(knownHosts, '');
    const path = workflow('closed', '  ssh_hosts: [worker@127.0.0.1:1]\n');
    const result = runCli(
      bin,
      [
        'run',
        '--no-agent',
        '--workflow',
        path,
        '--issue',
        issue,
        '--ssh-key',
        key,
        '--known-hosts',
        knownHosts,
      ],
      dir,
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'lorenz: ssh_connect: no SSH worker could be reached: ' +
        'worker@[127.0.0.1]:1: connection refused (no sshd listening)\n',
    );
  });
});
