// A GitLab code host wired to a fresh GitLab stand-in, with its own ETag cache so tests do
// not share answers, and the warnings it gave.
import { createGitlabCodeHost } from '../../../src/codehost/gitlab.js';
import type { CodeHost } from '../../../src/codehost/types.js';
import { EtagCache } from '../../../src/tracker/github/cache.js';
import {
  type GitlabStandIn,
  type GitlabStandInOptions,
  startGitlabServer,
} from './gitlab-server.js';
import { standInPerTest } from './stand-in-per-test.js';

export const NOW = Date.parse('2026-12-01T12:00:00.000Z');

export interface GitlabHarness {
  standIn: GitlabStandIn;
  host: CodeHost;
  warnings: string[];
  cache: EtagCache;
  /** Another code host on the same stand-in and cache (the controller builds one per pass). */
  again: () => CodeHost;
}

export async function gitlabHarness(
  options: GitlabStandInOptions = {},
  hostOptions: { timeoutMs?: number; apiUrl?: string } = {},
): Promise<GitlabHarness> {
  const standIn = await startGitlabServer(options);
  const warnings: string[] = [];
  const cache = new EtagCache();
  const make = () =>
    createGitlabCodeHost(
      {
        kind: 'gitlab',
        apiUrl: hostOptions.apiUrl ?? standIn.apiUrl,
        repository: standIn.project,
        token: standIn.token,
        onWarning: (message) => warnings.push(message),
      },
      {
        cache,
        now: () => NOW,
        ...(hostOptions.timeoutMs === undefined ? {} : { timeoutMs: hostOptions.timeoutMs }),
      },
    );
  return { standIn, host: make(), warnings, cache, again: make };
}

/** `start` makes a harness for the test that calls it, checked after each test. */
export const gitlabHarnessPerTest = () =>
  standInPerTest(gitlabHarness, (standIn) => standIn.shutdown());
