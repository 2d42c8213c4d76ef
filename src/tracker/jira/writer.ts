import type { Issue } from '../../workflow/issue.js';
import type { FetchOptions, NewIssue, TrackerComment, TrackerWriter } from '../types.js';
import { textToAdf } from './adf.js';
import { JIRA_FIELDS, adfToText, normalizeJiraIssue } from './normalize.js';
import type { JiraSettings } from './settings.js';
import { type JiraTransport, isJsonMap, jiraFailure, jiraSend } from './transport.js';

/** Comments per page; Jira serves at most 100 whatever is asked. */
export const JIRA_COMMENT_PAGE_SIZE = 100;
/** Issue type of the issues createIssue makes: every Jira Cloud template has Task. */
export const JIRA_NEW_ISSUE_TYPE = 'Task';

const key = (value: string): string => value.trim().toLowerCase();

function text(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

/** Jira's Comment bean as a TrackerComment; null without an id. */
export function jiraComment(bean: unknown): TrackerComment | null {
  if (!isJsonMap(bean)) return null;
  const id = text(bean.id);
  if (id === null || id === '') return null;
  const author = isJsonMap(bean.author) ? bean.author : null;
  return {
    id,
    body: adfToText(bean.body) ?? '',
    author: author === null ? null : (text(author.displayName) ?? text(author.accountId)),
    author_id: author === null ? null : text(author.accountId),
    // Jira Cloud leaves emailAddress out when the user's profile visibility hides it.
    author_email: author === null ? null : text(author.emailAddress),
    created_at: text(bean.created),
    updated_at: text(bean.updated),
  };
}

/** Writes through Jira Cloud REST v3. A state is a status, reached through a transition. */
// eslint-disable-next-line max-lines-per-function -- a factory: the closures it returns share the state it keeps
export function createJiraWriter(
  transport: JiraTransport,
  settings: JiraSettings,
  maxPages: number,
): TrackerWriter {
  const issuePath = (issueId: string) => {
    const id = issueId.trim();
    if (id === '') {
      throw jiraFailure(transport, 'tracker_status', 'no issue id given', { status: 404 });
    }
    return `/rest/api/3/issue/${encodeURIComponent(id)}`;
  };

  function commentOrFail(body: unknown, what: string): TrackerComment {
    const comment = jiraComment(body);
    if (comment === null) {
      throw jiraFailure(transport, 'tracker_response', `Jira answered ${what} with no comment`);
    }
    return comment;
  }

  async function readIssue(issueId: string, options: FetchOptions = {}): Promise<Issue | null> {
    const query = new URLSearchParams({ fields: JIRA_FIELDS.join(',') });
    const answer = await jiraSend(
      transport,
      'GET',
      `${issuePath(issueId)}?${query.toString()}`,
      null,
      options.signal,
      [404],
    );
    return answer.status === 404 ? null : normalizeJiraIssue(answer.body, settings.site);
  }

  async function mustRead(issueId: string, signal?: AbortSignal): Promise<Issue> {
    const issue = await readIssue(issueId, { signal });
    if (issue === null) {
      throw jiraFailure(
        transport,
        'tracker_response',
        `Jira did not return ${issueId} after a write`,
      );
    }
    return issue;
  }

  /**
   * Jira moves issues only along the workflow's transitions, so the target is the transition
   * into a status of that name from where the issue stands now.
   */
  async function updateState(issueId: string, state: string, options: FetchOptions = {}) {
    const path = `${issuePath(issueId)}/transitions`;
    const { body } = await jiraSend(transport, 'GET', path, null, options.signal);
    if (!isJsonMap(body) || !Array.isArray(body.transitions)) {
      throw jiraFailure(transport, 'tracker_response', 'Jira answered transitions with no list');
    }
    const reachable = body.transitions
      .filter(isJsonMap)
      .map((transition) => ({
        id: text(transition.id),
        to: isJsonMap(transition.to) ? text(transition.to.name) : null,
      }))
      .filter((t): t is { id: string; to: string } => t.id !== null && t.to !== null);
    const chosen = key(state) === '' ? undefined : reachable.find((t) => key(t.to) === key(state));
    if (chosen === undefined) {
      const names = [...new Set(reachable.map((t) => t.to))];
      throw jiraFailure(
        transport,
        'invalid_tracker_config',
        `jira tracker: ${issueId} cannot move to ${JSON.stringify(state.trim())}; reachable: ${names.join(', ') || 'none'}`,
        { state: state.trim(), reachable: names },
      );
    }
    await jiraSend(transport, 'POST', path, { transition: { id: chosen.id } }, options.signal);
    return mustRead(issueId, options.signal);
  }

  return {
    readIssue,
    updateState,

    async listComments(issueId: string, options: FetchOptions = {}) {
      const comments: TrackerComment[] = [];
      let startAt = 0;
      for (let page = 1; ; page += 1) {
        if (page > maxPages) {
          throw jiraFailure(
            transport,
            'tracker_pagination',
            `Jira kept offering comment pages past ${maxPages}`,
            { maxPages },
          );
        }
        const query = new URLSearchParams({
          startAt: String(startAt),
          maxResults: String(JIRA_COMMENT_PAGE_SIZE),
          orderBy: 'created',
        });
        const path = `${issuePath(issueId)}/comment?${query.toString()}`;
        const { body } = await jiraSend(transport, 'GET', path, null, options.signal);
        if (!isJsonMap(body) || !Array.isArray(body.comments) || typeof body.total !== 'number') {
          throw jiraFailure(transport, 'tracker_response', 'Jira answered comments with no list');
        }
        const beans = body.comments as unknown[];
        comments.push(...beans.map(jiraComment).filter((c): c is TrackerComment => c !== null));
        startAt += beans.length;
        // An empty page ends the walk even if total says more: it would never advance.
        if (beans.length === 0 || startAt >= body.total) return comments;
      }
    },

    async comment(issueId: string, body: string, options: FetchOptions = {}) {
      const answer = await jiraSend(
        transport,
        'POST',
        `${issuePath(issueId)}/comment`,
        { body: textToAdf(body) },
        options.signal,
      );
      return commentOrFail(answer.body, `the comment on ${issueId}`);
    },

    async updateComment(issueId, commentId, body, options: FetchOptions = {}) {
      // The path names the issue as well as the comment: Jira answers 404 for a comment of
      // another issue, so an edit cannot reach past the issue it is scoped to.
      const id = commentId.trim();
      if (!/^\d+$/.test(id)) {
        throw jiraFailure(transport, 'tracker_status', `no comment ${JSON.stringify(id)}`, {
          status: 404,
        });
      }
      const answer = await jiraSend(
        transport,
        'PUT',
        `${issuePath(issueId)}/comment/${id}`,
        { body: textToAdf(body) },
        options.signal,
      );
      return commentOrFail(answer.body, `the edit of comment ${id}`);
    },

    async createIssue(input: NewIssue, options: FetchOptions = {}) {
      const fields: Record<string, unknown> = {
        project: { key: settings.projectKey },
        summary: input.title,
        issuetype: { name: JIRA_NEW_ISSUE_TYPE },
      };
      if (input.description != null && input.description.trim() !== '') {
        fields.description = textToAdf(input.description);
      }
      const { body } = await jiraSend(
        transport,
        'POST',
        '/rest/api/3/issue',
        { fields },
        options.signal,
      );
      const created = isJsonMap(body) ? text(body.id) : null;
      if (created === null) {
        throw jiraFailure(transport, 'tracker_response', 'Jira answered the new issue with no id');
      }
      // Jira creates issues in the workflow's initial status; any other is a transition away.
      const state = input.state?.trim() ?? '';
      const issue = await mustRead(created, options.signal);
      if (state === '' || key(issue.state ?? '') === key(state)) return issue;
      return updateState(created, state, options);
    },
  };
}
