// Shared set-up for the github tracker tests: a stand-in and an adapter pointed at it.
import { EtagCache, createGithubTracker } from '../../../src/tracker/github/index.js';
import type { TrackerAdapter } from '../../../src/tracker/types.js';
import { parseConfig } from '../../../src/workflow/config.js';
import type { FakeIssue } from './github-data.js';
import { type GithubStandIn, startGithubStandIn } from './github-server.js';
import { standInPerTest } from './stand-in-per-test.js';

export const NOW = Date.parse('2026-03-01T12:00:00Z');

export function trackerConfig(standIn: GithubStandIn, tracker: Record<string, unknown> = {}) {
  const { config, warnings } = parseConfig({
    tracker: {
      kind: 'github',
      repository: standIn.repository,
      endpoint: standIn.url,
      // Through a `$VAR`, as a Workflow's Secret would hand it in.
      api_key: '$GH_TOKEN',
      ...tracker,
    },
  });
  if (warnings.length > 0) throw new Error(warnings.join('; '));
  return config.tracker;
}

export interface Harness {
  standIn: GithubStandIn;
  cache: EtagCache;
  tracker: (
    tracker?: Record<string, unknown>,
    options?: { maxPages?: number; timeoutMs?: number },
  ) => TrackerAdapter;
}

export async function harness(
  issues: FakeIssue[] = [],
  options: { repository?: string } = {},
): Promise<Harness> {
  const standIn = await startGithubStandIn({ issues, ...options });
  const cache = new EtagCache();
  return {
    standIn,
    cache,
    tracker: (tracker = {}, extra = {}) =>
      createGithubTracker({
        config: trackerConfig(standIn, tracker),
        env: { GH_TOKEN: standIn.token },
        cache,
        now: () => NOW,
        ...extra,
      }),
  };
}

/** `start` makes a harness for the test that calls it, checked after each test. */
export const harnessPerTest = () => standInPerTest(harness, (standIn) => standIn.close());
