import { describe, expect, it } from 'vitest';
import { TRACE_TAIL_CHARS, checkState, traceTail } from '../../../src/codehost/gitlab-checks.js';
import { gitlabHarnessPerTest } from '../../support/fakes/gitlab-host.js';

const start = gitlabHarnessPerTest();

const SHA = 'c'.repeat(40);

describe('the GitLab code host: checks', () => {
  it('reads the jobs of the newest pipeline, failed ones with the end of their trace', async () => {
    const { host, standIn } = await start();
    standIn.state.setPipeline(SHA, [{ name: 'test', status: 'failed', trace: 'old failure' }]);
    const long = `${'x'.repeat(5000)}\n\u001b[31;1mERROR: 2 tests failed\u001b[0;m\nsection_end:1733000000:step_script\r\u001b[0K`;
    standIn.state.setPipeline(SHA, [
      { name: 'build', status: 'success', trace: 'built' },
      { name: 'test', status: 'failed', trace: long },
      { name: 'lint', status: 'running' },
      { name: 'deploy', status: 'manual' },
      { name: 'docs', status: 'skipped' },
      { name: 'e2e', status: 'canceled' },
      { name: 'publish', status: 'created' },
    ]);
    const checks = await host.checks(SHA);
    expect(checks.map((check) => [check.name, check.status, check.conclusion])).toEqual([
      ['build', 'completed', 'success'],
      ['test', 'completed', 'failure'],
      ['lint', 'in_progress', null],
      ['deploy', 'completed', 'manual'],
      ['docs', 'completed', 'skipped'],
      ['e2e', 'completed', 'cancelled'],
      ['publish', 'queued', null],
    ]);
    const test = checks.find((check) => check.name === 'test');
    expect(test?.outputTail?.length).toBeLessThanOrEqual(TRACE_TAIL_CHARS);
    expect(test?.outputTail).toMatch(/ERROR: 2 tests failed\n$/);
    expect(test?.outputTail).not.toContain('\u001b');
    expect(test?.outputTail).not.toContain('section_end');
    expect(test?.url).toMatch(/\/-\/jobs\/\d+$/);
    // Only the failed job's trace is read.
    expect(standIn.requests.filter((request) => request.rawPath.endsWith('/trace'))).toHaveLength(
      1,
    );
    expect(checks.find((check) => check.name === 'build')?.outputTail).toBeNull();
  });

  it('counts the newest try of a retried job', async () => {
    const { host, standIn } = await start();
    standIn.state.setPipeline(SHA, [
      { name: 'test', status: 'failed', trace: 'flaky' },
      { name: 'test', status: 'success' },
    ]);
    expect(await host.checks(SHA)).toEqual([
      expect.objectContaining({ name: 'test', status: 'completed', conclusion: 'success' }),
    ]);
  });

  it('adds the commit statuses posted from outside CI, not the jobs again', async () => {
    const { host, standIn } = await start();
    standIn.state.setPipeline(SHA, [{ name: 'test', status: 'success' }]);
    standIn.state.addCommitStatus(SHA, {
      name: 'security/scan',
      status: 'failed',
      description: '2 findings',
      targetUrl: 'https://scanner.example/r/1',
    });
    expect(await host.checks(SHA)).toEqual([
      expect.objectContaining({ name: 'test', conclusion: 'success' }),
      {
        name: 'security/scan',
        status: 'completed',
        conclusion: 'failure',
        outputTail: '2 findings',
        url: 'https://scanner.example/r/1',
      },
    ]);
  });

  it('answers no checks for a commit with no pipeline and no status', async () => {
    const { host } = await start();
    expect(await host.checks(SHA)).toEqual([]);
  });

  it('gives no trace for a failed job whose trace is gone', async () => {
    const { host, standIn } = await start();
    standIn.state.setPipeline(SHA, [{ name: 'test', status: 'failed' }]);
    const [check] = await host.checks(SHA);
    expect(check).toMatchObject({ conclusion: 'failure', outputTail: null });
  });

  it.each([
    ['success', false, null, 'completed', 'success'],
    ['failed', false, 'script_failure', 'completed', 'failure'],
    ['failed', true, 'script_failure', 'completed', 'neutral'],
    ['failed', false, 'job_execution_timeout', 'completed', 'timed_out'],
    ['canceled', false, null, 'completed', 'cancelled'],
    ['skipped', false, null, 'completed', 'skipped'],
    ['manual', false, null, 'completed', 'manual'],
    ['running', false, null, 'in_progress', null],
    ['canceling', false, null, 'in_progress', null],
    ['pending', false, null, 'queued', null],
    ['waiting_for_resource', false, null, 'queued', null],
    ['scheduled', false, null, 'queued', null],
  ] as const)(
    'maps %s (allow_failure %s, %s) to %s/%s',
    (status, allow, reason, state, conclusion) => {
      expect(checkState(status, allow, reason)).toEqual({ status: state, conclusion });
    },
  );

  it('keeps a short trace whole, line endings made plain', () => {
    expect(traceTail('\u001b[32;1m$ npm test\u001b[0;m\r\nok\r\n')).toBe('$ npm test\nok\n');
  });
});
