import type { Issue } from '../../workflow/issue.js';
import type { FetchOptions, NewIssue, TrackerComment, TrackerWriter } from '../types.js';
import { type StateContext, normalizeGithubIssue } from './normalize.js';
import { GITHUB_PAGE_SIZE, fetchAllPages } from './pages.js';
import type { GithubSettings } from './settings.js';
import {
  type GithubTransport,
  githubFailure,
  githubGet,
  githubSend,
  isJsonMap,
} from './transport.js';

export interface GithubWriterParts {
  settings: GithubSettings;
  transport: GithubTransport;
  context: StateContext;
  /** `<endpoint>/repos/<owner>/<repo>`. */
  repoPath: string;
  maxPages: number;
  issueNumberOf: (id: string) => number | null;
}

const key = (value: string): string => value.trim().toLowerCase();

function text(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

/** GitHub's issue comment as a TrackerComment; null when it lacks an id or a body. */
export function githubComment(item: unknown): TrackerComment | null {
  if (!isJsonMap(item) || typeof item.id !== 'number') return null;
  const body = text(item.body);
  if (body === null) return null;
  const user = isJsonMap(item.user) ? item.user : null;
  const userId = user !== null && typeof user.id === 'number' ? String(user.id) : null;
  return {
    id: String(item.id),
    body,
    author: user === null ? null : text(user.login),
    author_id: userId,
    // The REST API shows a commenter's email only when they made it public, and rarely then.
    author_email: user === null ? null : text(user.email),
    created_at: text(item.created_at),
    updated_at: text(item.updated_at),
  };
}

/** The raw label names of an issue object, as GitHub spells them. */
function rawLabels(item: unknown): string[] {
  if (!isJsonMap(item) || !Array.isArray(item.labels)) return [];
  return item.labels
    .map((label) =>
      typeof label === 'string' ? label : isJsonMap(label) ? text(label.name) : null,
    )
    .filter((name): name is string => name !== null && name.trim() !== '');
}

/**
 * Writes through GitHub's REST API. A state is a label `<prefix><state>`, so changing it is
 * one PATCH of the issue that replaces its state labels and, for a terminal state, closes it.
 */
// eslint-disable-next-line max-lines-per-function -- a factory: the closures it returns share the state it keeps
export function createGithubWriter(parts: GithubWriterParts): TrackerWriter {
  const { settings, transport, context, repoPath } = parts;
  const prefix = settings.labelPrefix;
  const terminal = new Set(settings.terminalStates.map(key));

  function numberOf(issueId: string): number {
    const number = parts.issueNumberOf(issueId);
    if (number === null) {
      throw githubFailure(
        transport,
        'tracker_status',
        `${JSON.stringify(issueId)} names no issue of ${context.repository}`,
        { status: 404 },
      );
    }
    return number;
  }

  function normalizedOrFail(body: unknown, what: string): Issue {
    const issue = normalizeGithubIssue(body, context);
    if (issue === null) {
      throw githubFailure(transport, 'tracker_response', `GitHub answered ${what} with no issue`);
    }
    return issue;
  }

  function commentOrFail(body: unknown, what: string): TrackerComment {
    const comment = githubComment(body);
    if (comment === null) {
      throw githubFailure(transport, 'tracker_response', `GitHub answered ${what} with no comment`);
    }
    return comment;
  }

  async function readRaw(number: number, signal?: AbortSignal): Promise<unknown> {
    const answer = await githubGet(transport, `${repoPath}/issues/${number}`, {
      signal,
      allow: [404, 410],
    });
    return answer.status === 404 || answer.status === 410 ? null : answer.body;
  }

  /**
   * The state names an issue may be moved to, spelled as configured or as the repository's
   * labels spell them: the configured states, and any state a `<prefix>…` label already
   * stands for (so `In Review` works once the repository has `lorenz:in review`). A name
   * neither knows is refused rather than minting a label from whatever an agent typed.
   */
  async function knownStates(signal?: AbortSignal): Promise<string[]> {
    const configured = [...settings.activeStates, ...settings.terminalStates];
    const query = new URLSearchParams({ per_page: String(GITHUB_PAGE_SIZE) });
    const { items } = await fetchAllPages(
      transport,
      `${repoPath}/labels?${query.toString()}`,
      parts.maxPages,
      signal,
    );
    const fromLabels = items
      .map((label) => (isJsonMap(label) ? text(label.name) : null))
      .filter((name): name is string => name !== null && key(name).startsWith(prefix))
      .map((name) => name.trim().slice(prefix.length).trim())
      .filter((name) => name !== '');
    const seen = new Set<string>();
    return [...configured, ...fromLabels].filter((name) => {
      if (seen.has(key(name))) return false;
      seen.add(key(name));
      return true;
    });
  }

  async function resolveState(state: string, signal?: AbortSignal): Promise<string> {
    const wanted = key(state);
    const known = await knownStates(signal);
    const found = known.find((name) => key(name) === wanted);
    if (wanted === '' || found === undefined) {
      throw githubFailure(
        transport,
        'invalid_tracker_config',
        `github tracker: no state ${JSON.stringify(state.trim())}; known: ${known.join(', ')}`,
        { state: state.trim(), known },
      );
    }
    return found;
  }

  /** The PATCH that puts an issue in `state`: other state labels off, its label on. */
  function statePatch(labels: readonly string[], state: string): Record<string, unknown> {
    const kept = labels.filter((label) => !key(label).startsWith(prefix));
    // Lower-cased like the labels normalize reads; GitHub matches label names case-insensitively.
    const patch: Record<string, unknown> = { labels: [...kept, `${prefix}${key(state)}`] };
    // A closed issue always reads as terminal, so any other state must reopen it to take.
    if (terminal.has(key(state)))
      Object.assign(patch, { state: 'closed', state_reason: 'completed' });
    else Object.assign(patch, { state: 'open', state_reason: 'reopened' });
    return patch;
  }

  async function moveTo(number: number, state: string, labels: string[], signal?: AbortSignal) {
    const { body } = await githubSend(
      transport,
      'PATCH',
      `${repoPath}/issues/${number}`,
      statePatch(labels, state),
      signal,
    );
    return normalizedOrFail(body, `the state change of #${number}`);
  }

  return {
    async readIssue(issueId: string, options: FetchOptions = {}) {
      const number = parts.issueNumberOf(issueId);
      if (number === null) return null;
      // Pull requests normalize to null: they are not issues here.
      return normalizeGithubIssue(await readRaw(number, options.signal), context);
    },

    async listComments(issueId: string, options: FetchOptions = {}) {
      const number = numberOf(issueId);
      const query = new URLSearchParams({ per_page: String(GITHUB_PAGE_SIZE) });
      const { items } = await fetchAllPages(
        transport,
        `${repoPath}/issues/${number}/comments?${query.toString()}`,
        parts.maxPages,
        options.signal,
      );
      return items
        .map(githubComment)
        .filter((comment): comment is TrackerComment => comment !== null);
    },

    async comment(issueId: string, body: string, options: FetchOptions = {}) {
      const number = numberOf(issueId);
      const answer = await githubSend(
        transport,
        'POST',
        `${repoPath}/issues/${number}/comments`,
        { body },
        options.signal,
      );
      return commentOrFail(answer.body, `the comment on #${number}`);
    },

    async updateComment(issueId, commentId, body, options: FetchOptions = {}) {
      const number = numberOf(issueId);
      const id = commentId.trim();
      const url = `${repoPath}/issues/comments/${id}`;
      const notHers = () =>
        githubFailure(
          transport,
          'tracker_status',
          `comment ${JSON.stringify(id)} is not a comment of ${context.repository}#${number}`,
          { status: 404 },
        );
      if (!/^\d+$/.test(id)) throw notHers();
      // The PATCH URL names only the comment: without this check an agent could edit any
      // comment of the repository through its own issue's scope.
      const existing = await githubGet(transport, url, { signal: options.signal, allow: [404] });
      const issueUrl = isJsonMap(existing.body) ? text(existing.body.issue_url) : null;
      if (existing.status === 404 || issueUrl === null || !belongsTo(issueUrl, settings, number)) {
        throw notHers();
      }
      const answer = await githubSend(transport, 'PATCH', url, { body }, options.signal);
      return commentOrFail(answer.body, `the edit of comment ${id}`);
    },

    async updateState(issueId: string, state: string, options: FetchOptions = {}) {
      const number = numberOf(issueId);
      const target = await resolveState(state, options.signal);
      const raw = await readRaw(number, options.signal);
      if (raw === null || normalizeGithubIssue(raw, context) === null) throw notFound(number);
      return moveTo(number, target, rawLabels(raw), options.signal);
    },

    async createIssue(input: NewIssue, options: FetchOptions = {}) {
      const requested = input.state?.trim() ?? '';
      const state =
        requested === ''
          ? (settings.activeStates[0] ?? null)
          : await resolveState(requested, options.signal);
      const payload: Record<string, unknown> = { title: input.title };
      if (input.description != null) payload.body = input.description;
      if (state !== null) payload.labels = [`${prefix}${key(state)}`];
      const { body } = await githubSend(
        transport,
        'POST',
        `${repoPath}/issues`,
        payload,
        options.signal,
      );
      const created = normalizedOrFail(body, 'the new issue');
      // GitHub creates issues open; a terminal state needs the close as a second step.
      if (state === null || !terminal.has(key(state))) return created;
      return moveTo(Number(created.id), state, rawLabels(body), options.signal);
    },
  };

  function notFound(number: number) {
    return githubFailure(
      transport,
      'tracker_status',
      `GitHub has no issue #${number} in ${context.repository}`,
      { status: 404 },
    );
  }
}

/** Whether a comment's issue_url is this repository's issue `number` (any API host). */
function belongsTo(issueUrl: string, settings: GithubSettings, number: number): boolean {
  let path: string;
  try {
    path = new URL(issueUrl).pathname;
  } catch {
    return false;
  }
  return key(path).endsWith(key(`/repos/${settings.owner}/${settings.repo}/issues/${number}`));
}
