// One Jira stand-in for a whole test file, back to the fixture issues after each test, and
// the jira adapter pointed at a stand-in.
import { createJiraTracker, type JiraTrackerOptions } from '../../../src/tracker/jira/index.js';
import type { TrackerAdapter } from '../../../src/tracker/types.js';
import { parseConfig } from '../../../src/workflow/config.js';
import { fixtureIssues } from './jira-data.js';
import { type JiraStandIn, startJiraStandIn } from './jira-server.js';
import { standInPerFile } from './stand-in-per-file.js';

/**
 * Starts a stand-in (answering `email` and `token`) before the file's tests and hands it to
 * `use`; after each test its issues, comments, caps, requests, faults and pagination are back
 * to the start, and after the last it closes.
 */
export function jiraStandInPerFile(
  email: string,
  token: string,
  use: (standIn: JiraStandIn) => void,
): void {
  standInPerFile(
    () => startJiraStandIn(email, token),
    (standIn) => {
      standIn.issues = fixtureIssues();
      standIn.comments = [];
      standIn.commentPageCap = 100;
      standIn.requests = [];
      standIn.faults = [];
      standIn.pagination = 'normal';
      standIn.pageCap = 100;
    },
    use,
  );
}

/** The jira adapter on project ENG of the stand-in, signing in as `email` with `apiKey`. */
export function jiraTrackerOf(
  standIn: JiraStandIn,
  email: string,
  apiKey: string,
  options: Partial<Omit<JiraTrackerOptions, 'config'>> = {},
): TrackerAdapter {
  const { config } = parseConfig({
    tracker: { kind: 'jira', endpoint: standIn.url, email, project_key: 'ENG', api_key: apiKey },
  });
  return createJiraTracker({ config: config.tracker, env: {}, ...options });
}
