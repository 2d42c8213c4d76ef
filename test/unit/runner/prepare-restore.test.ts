// The warm path end to end on one volume: a warm-up prepares .lorenz-source (`lorenz runner
// --prepare`), then a run restored from it (`--source-digest`) checks the digest, renames the
// tree to the workspace and adopts the clone: the default branch fast-forwarded to the
// remote's tip, the branch checked out from it, Lorenz's scripts and credentials put
// back (the warm-up took them out). Real git against the HTTPS git server fixture.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { INPUT_FILES, inputManifest, inputManifestText } from '../../../src/api/run-pod.js';
import { decodeWarmUpResult } from '../../../src/api/warm-up.js';
import { runPrepare } from '../../../src/runner/prepare.js';
import { gitEnvironment, gitServerPerFile } from '../../support/fakes/git-server-per-file.js';
import { gitWorkflowText, runInPod, writeRunInputs } from './run-inputs.js';

const TOKEN = 'lorenz-warm-path-token-9c2f41';
const BRANCH = 'lorenz/eng-7-warm';
let count = 0;
const fixture = gitServerPerFile('lorenz-prepare-restore-', 'alice', TOKEN);

const environment = (): NodeJS.ProcessEnv => gitEnvironment(fixture.server, fixture.base);

/** One WORKFLOW.md for the warm-up and the run, as the Workflow gives both. */
const workflow = (repo: string) =>
  gitWorkflowText(
    fixture.server.repoUrl(repo),
    [
      '  after_create: echo after_create ran > after-create-marker',
      '  before_run: git branch --show-current && git rev-parse HEAD && cat setup-marker after-create-marker && git push -q origin HEAD 2>&1',
    ].join('\n'),
  );

async function prepare(pod: string, text: string) {
  const inputsDir = join(pod, 'warm-inputs');
  await mkdir(inputsDir, { recursive: true });
  const files = { [INPUT_FILES.workflow]: text };
  await writeFile(join(inputsDir, INPUT_FILES.workflow), text);
  await writeFile(join(inputsDir, INPUT_FILES.manifest), inputManifestText(inputManifest(files)));
  await mkdir(join(pod, 'ws'), { recursive: true });
  const code = await runPrepare({
    inputsDir,
    workspaceRoot: join(pod, 'ws'),
    terminationLogPath: join(pod, 'warm-termination-log'),
    gitCredentials: fixture.credentials,
    env: environment(),
    write: () => {},
  });
  expect(code).toBe(0);
  const result = decodeWarmUpResult(await readFile(join(pod, 'warm-termination-log'), 'utf8'));
  if (result?.outcome !== 'prepared') throw new Error(`not prepared: ${JSON.stringify(result)}`);
  return result;
}

describe('prepare, then a run restored from the prepared tree', () => {
  it.each([
    ['the default branch has not moved', false],
    ['the default branch moved on after the warm-up', true],
  ])('%s: the issue branch starts at its head, set up', async (_what, moves) => {
    count += 1;
    const repo = `acme/warm-path-${count}`;
    const pod = join(fixture.base, `pod-${count}`);
    const setup = `setup:\n  - [node, -e, "require('fs').writeFileSync('setup-marker', 'set up\\\\n')"]\n`;
    await fixture.server.createRepo(repo, {
      private: true,
      files: { '.lorenz/workspace.yml': setup },
    });
    const text = workflow(repo);
    const prepared = await prepare(pod, text);
    const later = moves
      ? await fixture.server.commit(repo, 'main', { 'later.txt': 'later\n' })
      : null;
    const start = later ?? prepared.commit;

    const inputsDir = await writeRunInputs(join(pod, 'inputs'), text, {
      title: 'Warm',
      branch: BRANCH,
    });
    const run = await runInPod(pod, {
      inputsDir,
      noAgent: true,
      keepWorkspace: true,
      sourceDigest: prepared.digest,
      gitCredentials: fixture.credentials,
      env: environment(),
    });
    expect(run.code, run.lines.join('')).toBe(0);
    const workspace = join(pod, 'ws', 'ENG-7');
    expect(run.events.find((event) => event.type === 'workspace_restored')?.message).toMatchObject({
      path: workspace,
      digest: prepared.digest,
    });
    const beforeRun = run.events.find(
      (event) => event.type === 'hook_execution' && event.message.status === 'completed',
    );
    // after_create did not run again: its marker is the warm-up's; the push used the
    // credentials the adoption put back.
    expect(beforeRun?.type === 'hook_execution' && beforeRun.message).toMatchObject({
      hookName: 'before_run',
      output: `${BRANCH}\n${start}\nset up\nafter_create ran`,
    });
    expect(await fixture.server.branchSha(repo, BRANCH)).toBe(start);
    const steps = run.events.flatMap((event) =>
      event.type === 'git_workspace' ? [`${event.message.step}: ${event.message.detail}`] : [],
    );
    expect(steps).toEqual([
      "clone: restored from a snapshot, main at the remote's tip",
      `branch: created ${BRANCH} from main`,
    ]);
    // Lorenz's scripts are the run's own, beside the workspace.
    const config = await readFile(join(workspace, '.git', 'config'), 'utf8');
    expect(config).toContain(join(pod, 'ws', '@lorenz-git', 'ENG-7', 'git-credential-lorenz'));
    expect(config).toContain(`hooksPath = ${join(pod, 'ws', '@lorenz-git', 'ENG-7', 'hooks')}`);
    expect(config).not.toContain('.lorenz-source');
    expect(run.lines.join('')).not.toContain(TOKEN);
  });
});
