// Issue and label objects for the GitHub stand-in, built from the real answers that
// @octokit/fixtures recorded against api.github.com (paginate-issues, labels, errors), so
// the stand-in serves what GitHub serves, with only number, title, state, labels and dates
// changed.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

type Json = Record<string, unknown>;

/** One recorded request and its answer, as @octokit/fixtures stores it. */
export interface RecordedInteraction {
  method: string;
  path: string;
  status: number;
  response: unknown;
  headers: Record<string, string | number>;
}

const require = createRequire(import.meta.url);

/** A scenario of @octokit/fixtures (`api.github.com/<name>`), its normalized recording. */
export function recordedScenario(name: string): RecordedInteraction[] {
  const path = require.resolve(
    `@octokit/fixtures/scenarios/api.github.com/${name}/normalized-fixture.json`,
  );
  return JSON.parse(readFileSync(path, 'utf8')) as RecordedInteraction[];
}

const clone = <T>(value: T): T => structuredClone(value);

/** The first issue GitHub answered in the paginate-issues recording. */
function recordedIssue(): Json {
  const first = recordedScenario('paginate-issues')[0]?.response;
  if (!Array.isArray(first) || first.length === 0) throw new Error('fixture: no recorded issue');
  return first[0] as Json;
}

/** The labels GitHub answered in the labels recording (`bug`, `documentation`, …). */
function recordedLabel(): Json {
  const first = recordedScenario('labels')[0]?.response;
  if (!Array.isArray(first) || first.length === 0) throw new Error('fixture: no recorded label');
  return first[0] as Json;
}

export interface FakeIssue {
  number: number;
  title: string;
  state?: 'open' | 'closed';
  labels?: string[];
  body?: string | null;
  assignees?: string[];
  createdAt?: string;
  /** Listed by the issues API as GitHub lists pull requests there. */
  pullRequest?: boolean;
}

const userLike = (template: Json, login: string, id: number): Json => ({
  ...clone(template),
  login,
  id,
  url: `https://api.github.com/users/${login}`,
  html_url: `https://github.com/${login}`,
});

/** A GitHub issue object (as the REST API answers it) for a fake issue in `owner/repo`. */
export function githubIssue(repository: string, fake: FakeIssue): Json {
  const base = clone(recordedIssue());
  const labelTemplate = recordedLabel();
  const api = `https://api.github.com/repos/${repository}`;
  const created =
    fake.createdAt ?? `2026-01-${String(fake.number % 28 || 28).padStart(2, '0')}T10:00:00Z`;
  const user = base.user as Json;
  const assignees = (fake.assignees ?? []).map((login, index) =>
    userLike(user, login, 2000 + index),
  );
  const issue: Json = {
    ...base,
    url: `${api}/issues/${fake.number}`,
    repository_url: api,
    labels_url: `${api}/issues/${fake.number}/labels{/name}`,
    comments_url: `${api}/issues/${fake.number}/comments`,
    events_url: `${api}/issues/${fake.number}/events`,
    html_url: `https://github.com/${repository}/${fake.pullRequest === true ? 'pull' : 'issues'}/${fake.number}`,
    timeline_url: `${api}/issues/${fake.number}/timeline`,
    id: 100_000 + fake.number,
    number: fake.number,
    title: fake.title,
    state: fake.state ?? 'open',
    state_reason: fake.state === 'closed' ? 'completed' : null,
    closed_at: fake.state === 'closed' ? created : null,
    body: fake.body === undefined ? `Body of ${fake.title}` : fake.body,
    labels: (fake.labels ?? []).map((name, index) => ({
      ...clone(labelTemplate),
      id: 5000 + index,
      name,
      url: `${api}/labels/${encodeURIComponent(name)}`,
      default: false,
    })),
    assignee: assignees[0] ?? null,
    assignees,
    created_at: created,
    updated_at: created,
  };
  if (fake.pullRequest === true) {
    issue.pull_request = {
      url: `${api}/pulls/${fake.number}`,
      html_url: `https://github.com/${repository}/pull/${fake.number}`,
      diff_url: `https://github.com/${repository}/pull/${fake.number}.diff`,
      patch_url: `https://github.com/${repository}/pull/${fake.number}.patch`,
      merged_at: null,
    };
  }
  return issue;
}

/** A label object as GitHub answers it, for `owner/repo`. */
export function githubLabel(repository: string, name: string, id: number): Json {
  return {
    ...clone(recordedLabel()),
    id,
    name,
    url: `https://api.github.com/repos/${repository}/labels/${encodeURIComponent(name)}`,
    default: false,
  };
}

export interface FakeComment {
  id: number;
  issue: number;
  body: string;
  createdAt: string;
  updatedAt: string;
  /** The commenter's login; absent: the recorded issue's author (the token's user). */
  author?: string;
  /** The commenter's user id; absent: one derived from the login. */
  authorId?: number;
}

/** A user id for a login, the same on every call (GitHub's ids are numbers). */
export function userIdOf(login: string): number {
  let hash = 0;
  for (const char of login) hash = (hash * 31 + char.charCodeAt(0)) % 1_000_000;
  return 5_000_000 + hash;
}

/**
 * An issue comment as GitHub answers it; its author is the comment's own (a test's named
 * person) or else the recorded issue's author. GitHub's simple-user has no email unless the
 * user made it public, so none is given.
 */
export function githubIssueComment(repository: string, comment: FakeComment): Json {
  const api = `https://api.github.com/repos/${repository}`;
  const recorded = recordedIssue().user as Json;
  const user =
    comment.author === undefined
      ? clone(recorded)
      : userLike(recorded, comment.author, comment.authorId ?? userIdOf(comment.author));
  return {
    id: comment.id,
    node_id: `IC_kwDO${comment.id}`,
    url: `${api}/issues/comments/${comment.id}`,
    html_url: `https://github.com/${repository}/issues/${comment.issue}#issuecomment-${comment.id}`,
    issue_url: `${api}/issues/${comment.issue}`,
    body: comment.body,
    user,
    created_at: comment.createdAt,
    updated_at: comment.updatedAt,
    author_association: 'OWNER',
  };
}
