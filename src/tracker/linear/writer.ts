import type { Issue } from '../../workflow/issue.js';
import type { FetchOptions, NewIssue, TrackerComment, TrackerWriter } from '../types.js';
import { normalizeLinearIssue } from './normalize.js';
import { allNodes, dig } from './pages.js';
import { projectFilter } from './queries.js';
import type { ProjectScope } from './settings.js';
import { type LinearTransport, linearRequest, trackerFailure } from './transport.js';
import {
  COMMENTS_QUERY,
  COMMENT_CREATE,
  COMMENT_ISSUE_QUERY,
  COMMENT_UPDATE,
  ISSUE_CREATE,
  ISSUE_TEAM_QUERY,
  ISSUE_UPDATE,
  LINEAR_WRITE_PAGE_SIZE,
  PROJECT_TEAM_QUERY,
  TEAM_STATES_QUERY,
} from './write-queries.js';

export interface LinearWriterOptions {
  transport: LinearTransport;
  project: ProjectScope;
  maxPages: number;
  /** The adapter's own fetch by id: readIssue sees an issue exactly as a poll does. */
  fetchByIds(ids: readonly string[], options?: FetchOptions): Promise<Issue[]>;
  /** The scope's assignee (null: everyone), so a changed issue normalizes as a fetched one. */
  assigneeId(signal: AbortSignal | undefined): Promise<string | null>;
}

interface WorkflowState {
  id: string;
  name: string;
}

const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);
const stateKey = (name: string): string => name.trim().toLowerCase();
const first = (nodes: unknown): unknown =>
  Array.isArray(nodes) ? (nodes[0] as unknown) : undefined;

// eslint-disable-next-line max-lines-per-function -- a factory: the closures it returns share the state it keeps
export function createLinearWriter(options: LinearWriterOptions): TrackerWriter {
  const { transport } = options;
  const fail = trackerFailure.bind(null, transport);

  function commentOf(node: unknown, what: string): TrackerComment {
    const id = text(dig(node, 'id'));
    const body = text(dig(node, 'body'));
    if (id === null || body === null) {
      throw fail('tracker_response', `Linear answered ${what} without a comment id and body`);
    }
    return {
      id,
      body,
      // A comment by an integration or a removed user has no user.
      author: text(dig(node, 'user', 'name')),
      author_id: text(dig(node, 'user', 'id')),
      author_email: text(dig(node, 'user', 'email')),
      created_at: text(dig(node, 'createdAt')),
      updated_at: text(dig(node, 'updatedAt')),
    };
  }

  async function issueOf(node: unknown, what: string, signal?: AbortSignal): Promise<Issue> {
    const issue = normalizeLinearIssue(node, await options.assigneeId(signal));
    if (issue === null) throw fail('tracker_response', `Linear answered ${what} without an issue`);
    return issue;
  }

  /** Linear reports a refused mutation as `success: false`, without an error. */
  function succeeded(payload: unknown, what: string): void {
    if (dig(payload, 'success') !== true) {
      throw fail('tracker_response', `Linear did not apply ${what} (success is not true)`);
    }
  }

  async function teamStates(teamId: string, signal?: AbortSignal): Promise<WorkflowState[]> {
    const nodes = await allNodes(
      transport,
      {
        query: TEAM_STATES_QUERY,
        variables: { id: teamId },
        path: ['team', 'states'],
        what: `the workflow states of team ${teamId}`,
        pageSize: LINEAR_WRITE_PAGE_SIZE,
        maxPages: options.maxPages,
      },
      { ...(signal ? { signal } : {}) },
    );
    return nodes.flatMap((node) => {
      const id = text(dig(node, 'id'));
      const name = text(dig(node, 'name'));
      return id !== null && name !== null ? [{ id, name }] : [];
    });
  }

  /** The id of the team's state of that name (trimmed, any case), or invalid_tracker_config. */
  async function stateId(teamId: string, name: string, signal?: AbortSignal): Promise<string> {
    const states = await teamStates(teamId, signal);
    const match = states.find((state) => stateKey(state.name) === stateKey(name));
    if (match === undefined) {
      const known = states.map((state) => state.name);
      throw fail(
        'invalid_tracker_config',
        `Linear has no workflow state ${JSON.stringify(name.trim())} in this team (known: ${known.join(', ')})`,
        { state: name.trim(), known },
      );
    }
    return match.id;
  }

  async function teamOfIssue(issueId: string, signal?: AbortSignal): Promise<string> {
    const data = await linearRequest(transport, ISSUE_TEAM_QUERY, { id: issueId }, signal);
    const teamId = text(dig(data, 'issue', 'team', 'id'));
    if (teamId === null)
      throw fail('tracker_response', `Linear answered issue ${issueId} without a team`);
    return teamId;
  }

  /** A new issue goes into the first project in scope, with that project's first team. */
  async function projectAndTeam(signal?: AbortSignal) {
    const filter = projectFilter(options.project);
    const data = await linearRequest(transport, PROJECT_TEAM_QUERY, { filter }, signal);
    const project = first(dig(data, 'projects', 'nodes'));
    const projectId = text(dig(project, 'id'));
    const teamId = text(dig(first(dig(project, 'teams', 'nodes')), 'id'));
    if (projectId === null || teamId === null) {
      throw fail(
        'invalid_tracker_config',
        'Linear has no project with a team in the tracker scope to create the issue in',
      );
    }
    return { projectId, teamId };
  }

  return {
    async graphql(query, variables, fetchOptions) {
      return linearRequest(transport, query, variables, fetchOptions?.signal);
    },

    async readIssue(issueId, fetchOptions) {
      return (await options.fetchByIds([issueId], fetchOptions))[0] ?? null;
    },

    async listComments(issueId, fetchOptions) {
      const nodes = await allNodes(
        transport,
        {
          query: COMMENTS_QUERY,
          variables: { id: issueId },
          path: ['issue', 'comments'],
          what: `the comments of issue ${issueId}`,
          pageSize: LINEAR_WRITE_PAGE_SIZE,
          maxPages: options.maxPages,
        },
        fetchOptions,
      );
      return nodes.map((node) => commentOf(node, `a comment of issue ${issueId}`));
    },

    async comment(issueId, body, fetchOptions) {
      const input = { issueId, body };
      const data = await linearRequest(transport, COMMENT_CREATE, { input }, fetchOptions?.signal);
      succeeded(data.commentCreate, 'commentCreate');
      return commentOf(dig(data, 'commentCreate', 'comment'), 'commentCreate');
    },

    async updateComment(issueId, commentId, body, fetchOptions) {
      const signal = fetchOptions?.signal;
      const found = await linearRequest(transport, COMMENT_ISSUE_QUERY, { id: commentId }, signal);
      const onIssue = text(dig(found, 'comment', 'issue', 'id'));
      if (onIssue !== issueId) {
        throw fail('tracker_status', `Linear comment ${commentId} is not on issue ${issueId}`, {
          status: 404,
        });
      }
      const variables = { id: commentId, input: { body } };
      const data = await linearRequest(transport, COMMENT_UPDATE, variables, signal);
      succeeded(data.commentUpdate, 'commentUpdate');
      return commentOf(dig(data, 'commentUpdate', 'comment'), 'commentUpdate');
    },

    async updateState(issueId, state, fetchOptions) {
      const signal = fetchOptions?.signal;
      const id = await stateId(await teamOfIssue(issueId, signal), state, signal);
      const variables = { id: issueId, input: { stateId: id } };
      const data = await linearRequest(transport, ISSUE_UPDATE, variables, signal);
      succeeded(data.issueUpdate, 'issueUpdate');
      return issueOf(dig(data, 'issueUpdate', 'issue'), 'issueUpdate', signal);
    },

    async createIssue(input: NewIssue, fetchOptions) {
      const signal = fetchOptions?.signal;
      const { projectId, teamId } = await projectAndTeam(signal);
      const state = input.state?.trim() ? await stateId(teamId, input.state, signal) : null;
      const create = {
        teamId,
        projectId,
        title: input.title,
        ...(input.description == null ? {} : { description: input.description }),
        ...(state === null ? {} : { stateId: state }),
      };
      const data = await linearRequest(transport, ISSUE_CREATE, { input: create }, signal);
      succeeded(data.issueCreate, 'issueCreate');
      return issueOf(dig(data, 'issueCreate', 'issue'), 'issueCreate', signal);
    },
  };
}
