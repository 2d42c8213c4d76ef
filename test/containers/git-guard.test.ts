// The git guard in a run Pod on a Debian image: the runtime images are Debian bookworm
// (hack/images.sh, debootstrap), whose /etc/profile sets PATH for every login shell, and the
// runner starts the agent's bridge and the hooks under `bash -lc`. The agent's `git` must
// still be Lorenz's wrapper, and the ways around the repository's hooks refused, with the
// real scripted agent in the agent image and a bare repository mounted into the container.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { DEFAULT_RUN_AS_USER } from '../../src/controller/issuerun/pod-builder.js';
import { kubeletVolumes, renderRunPod, runContainer } from './pod-on-docker.js';

const images = inject('containerImages');
const unavailable = images.available ? '' : images.reason;
const operator = images.available ? images.operator : '';
const agent = images.available ? images.agent : '';

const scratch = mkdtempSync(join(tmpdir(), 'lorenz-containers-guard-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const REPO_MOUNT = '/srv/web.git';
const BRANCH = 'lorenz/rt-2-guarded';
const WORKFLOW = `---
workspace:
  git:
    repo: file://${REPO_MOUNT}
agent:
  kind: scripted
  max_turns: 1
agents:
  scripted:
    bridge_command: node /lorenz-bin/scripted-agent.mjs
hooks:
  after_run: command -v git
---
@shell command -v git
@shell git commit -q --allow-empty -m work
@shell git -c core.hooksPath=/dev/null push origin HEAD:main
@shell git push --no-verify
`;

const git = (...args: string[]): string =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@localhost', ...args], {
    encoding: 'utf8',
    env: { ...process.env, HOME: scratch, GIT_CONFIG_NOSYSTEM: '1' },
  }).trim();

interface Line {
  type?: string;
  message?: {
    hookName?: string;
    status?: string;
    output?: string;
    update?: {
      sessionUpdate?: string;
      status?: string;
      content?: { content?: { text?: string } }[];
    };
  };
}

describe.skipIf(unavailable !== '')('the git guard in a run Pod on a Debian image', () => {
  it("the agent's git is Lorenz's wrapper after /etc/profile, and it refuses the ways around the hooks", async () => {
    // A bare repository with one commit on main, owned by the Pod's user (git refuses a
    // repository of another owner).
    const bare = join(scratch, 'web.git');
    git('init', '-q', '--bare', '-b', 'main', bare);
    git('clone', '-q', bare, join(scratch, 'seed'));
    git('-C', join(scratch, 'seed'), 'commit', '-q', '--allow-empty', '-m', 'Initial commit');
    git('-C', join(scratch, 'seed'), 'push', '-q', 'origin', 'main');
    const mainSha = git('--git-dir', bare, 'rev-parse', 'main');
    execFileSync('chown', ['-R', `${DEFAULT_RUN_AS_USER}:${DEFAULT_RUN_AS_USER}`, bare]);

    const { pod, inputs } = await renderRunPod({
      workflow: WORKFLOW,
      workflowName: 'runtime-guard',
      run: 'rt-2',
      identifier: 'RT-2',
      title: 'guarded',
      branch: BRANCH,
      agentImage: agent,
      operatorImage: operator,
    });
    const volumes = kubeletVolumes(scratch, inputs);

    const init = runContainer(pod, pod.spec!.initContainers![0]!, volumes);
    expect(init.status, init.stderr).toBe(0);
    const result = runContainer(
      pod,
      pod.spec!.containers[0]!,
      volumes,
      [],
      ['--volume', `${bare}:${REPO_MOUNT}`],
    );
    expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);

    const lines = result.stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Line);
    const shells = lines
      .map((line) => line.message?.update)
      .filter((update) => update?.sessionUpdate === 'tool_call_update')
      .map((update) => ({
        status: update?.status,
        output: (update?.content?.[0]?.content?.text ?? '').trim(),
      }));
    const [which, commit, ...pushes] = shells;
    expect(which?.output).toMatch(/^\/workspace\/@lorenz-git\/[^/]+\/bin\/git$/);
    expect(commit?.status).toBe('completed');
    expect(pushes.map((push) => push.status)).toEqual(['failed', 'failed']);
    for (const push of pushes) expect(push.output).toMatch(/lorenz: git_hooks_skip_refused/);
    const afterRun = lines.find(
      (line) =>
        line.type === 'hook_execution' &&
        line.message?.hookName === 'after_run' &&
        line.message.status !== 'started',
    );
    expect(afterRun?.message?.output).toBe(which?.output);
    expect(git('--git-dir', bare, 'rev-parse', 'main')).toBe(mainSha);
    expect(() => git('--git-dir', bare, 'rev-parse', '--verify', '-q', BRANCH)).toThrow();
  });
});
