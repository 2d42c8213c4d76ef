// Branch heads for the GitLab stand-in from a real git server (git-server.ts): the head's
// commit and how many commits it has that the base lacks (`git rev-list --count base..head`,
// run on the bare repository), so a review-loop test sees exactly what the agent pushed.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { GitServer } from './git-server.js';
import type { BranchHeads } from './gitlab-state.js';

const run = promisify(execFile);

/** `repo` maps the GitLab project path to the git server's `owner/name` (default the same). */
export function gitBranchHeads(
  server: GitServer,
  repo: (project: string) => string = (project) => project,
): BranchHeads {
  return async (project, branch, base) => {
    const name = repo(project);
    const sha = await server.branchSha(name, branch);
    if (sha === null) return null;
    if (base === null) return { sha, aheadBy: 0 };
    const baseSha = await server.branchSha(name, base);
    if (baseSha === null) return null;
    const { stdout } = await run('git', ['rev-list', '--count', `${baseSha}..${sha}`], {
      cwd: join(server.root, `${name}.git`),
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        GIT_CONFIG_NOSYSTEM: '1',
        HOME: server.root,
      },
    });
    return { sha, aheadBy: Number(stdout.trim()) };
  };
}
