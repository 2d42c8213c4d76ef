// What `kubectl get` shows of a real run and a rejected edit, through the CRDs' printer
// columns on a real kube-apiserver: `lwf` and `ir` as short names, `lorenz` as the category,
// a Workflow whose edit was rejected READY True beside CONFIGVALID False (and, wide, which
// generation's config runs), an IssueRun's Started, Duration and message.
import type { Workflow } from '../../src/api/index.js';
import { describe, expect, it } from 'vitest';
import { ISSUE_RUN_COLUMNS, NAMESPACE, path, until, useOperatorEnv } from './operator-harness.js';

/**
 * kubectl's table as one record per row, keyed by header: each column spans from its header's
 * offset to the next header's (values may hold single spaces, e.g. a message).
 */
function table(stdout: string): Record<string, string>[] {
  const [header = '', ...rows] = stdout.trimEnd().split('\n');
  const columns = [...header.matchAll(/\S+/g)].map((match) => ({
    name: match[0],
    start: match.index,
  }));
  return rows.map((row) =>
    Object.fromEntries(
      columns.map((column, index) => [
        column.name,
        row.slice(column.start, columns[index + 1]?.start ?? row.length).trim(),
      ]),
    ),
  );
}

describe('kubectl get', () => {
  const env = useOperatorEnv();
  const get = async (...args: string[]) =>
    table(await env.kubectl('-n', NAMESPACE, 'get', ...args));
  const readWorkflow = () => env.admin.request<Workflow>({ path: path.workflows('shown') });
  const configValid = (workflow: Workflow) =>
    workflow.status?.conditions?.find((c) => c.type === 'ConfigValid')?.status;

  it('lwf, ir and the lorenz category show a run and a rejected edit at a glance', async () => {
    await env.createWorkflow('shown', {});
    await until('the Workflow to load', async () =>
      configValid(await readWorkflow()) === 'True' ? true : undefined,
    );
    await env.createIssueRun('shown-1', 'shown', { identifier: 'ENG-7', title: 'Show it' });
    await env.finished('shown-1');

    expect(await get('lwf')).toEqual([
      expect.objectContaining({ NAME: 'shown', READY: 'True', CONFIGVALID: 'True' }),
    ]);
    expect(
      (await env.kubectl('-n', NAMESPACE, 'get', 'lorenz', '-o', 'name'))
        .split('\n')
        .filter(Boolean)
        .sort(),
    ).toEqual(['issuerun.lorenz.dev/shown-1', 'workflow.lorenz.dev/shown']);

    const [run] = await get('ir', 'shown-1', '-o', 'wide');
    expect(run).toMatchObject({
      NAME: 'shown-1',
      ISSUE: 'ENG-7',
      PHASE: 'Succeeded',
      // kubectl prints a date column as an age (e.g. 12s).
      STARTED: expect.stringMatching(/^\d+[smh]/),
      DURATION: expect.stringMatching(/^(\d+m)?\d+s$/),
      COMPLETED: expect.stringMatching(/^\d+[smh]/),
    });
    expect(run?.MESSAGE).not.toBe('');
    // Without -o wide: Started and Duration, not the message.
    expect(Object.keys((await get('ir', 'shown-1'))[0] ?? {})).toEqual(ISSUE_RUN_COLUMNS);

    // A bad GitOps commit: the spec (generation 2) does not load; runs go on from generation 1's.
    await env.admin.request({
      method: 'PATCH',
      path: path.workflows('shown'),
      body: { spec: { workflow: '---\ntracker: [unclosed\n---\nWork.' } },
    });
    await until('the bad edit to be reported', async () =>
      configValid(await readWorkflow()) === 'False' ? true : undefined,
    );
    const [workflow] = await get('lwf', 'shown', '-o', 'wide');
    expect(workflow).toMatchObject({
      NAME: 'shown',
      READY: 'True',
      CONFIGVALID: 'False',
      GENERATION: '2',
      'CONFIG-GENERATION': '1',
      CONFIG: expect.stringMatching(/^shown-config-[0-9a-f]{8}$/),
      MESSAGE: expect.stringContaining('invalid YAML'),
    });
  });
});
