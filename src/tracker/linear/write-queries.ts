import { ISSUE_FIELDS } from './queries.js';

/**
 * The operations of the agent tools, as Linear's published schema has them. Comments and
 * workflow states are read a page at a time (Linear's own default page size).
 */
export const LINEAR_WRITE_PAGE_SIZE = 50;

const COMMENT_FIELDS = `
fragment LorenzComment on Comment {
  id
  body
  createdAt
  updatedAt
  user { id name email }
}`;

const PAGE_INFO = 'pageInfo { hasNextPage endCursor }';

export const COMMENTS_QUERY = `
query LorenzComments($id: String!, $first: Int!, $after: String) {
  issue(id: $id) {
    comments(first: $first, after: $after) {
      nodes { ...LorenzComment }
      ${PAGE_INFO}
    }
  }
}
${COMMENT_FIELDS}`;

/** Which issue a comment is on, so an update never lands on another issue's comment. */
export const COMMENT_ISSUE_QUERY = `
query LorenzCommentIssue($id: String!) {
  comment(id: $id) { id issue { id } }
}`;

export const COMMENT_CREATE = `
mutation LorenzCommentCreate($input: CommentCreateInput!) {
  commentCreate(input: $input) {
    success
    comment { ...LorenzComment }
  }
}
${COMMENT_FIELDS}`;

export const COMMENT_UPDATE = `
mutation LorenzCommentUpdate($id: String!, $input: CommentUpdateInput!) {
  commentUpdate(id: $id, input: $input) {
    success
    comment { ...LorenzComment }
  }
}
${COMMENT_FIELDS}`;

/** An issue's team: workflow states belong to a team, not to the workspace. */
export const ISSUE_TEAM_QUERY = `
query LorenzIssueTeam($id: String!) {
  issue(id: $id) { id team { id } }
}`;

export const TEAM_STATES_QUERY = `
query LorenzTeamStates($id: String!, $first: Int!, $after: String) {
  team(id: $id) {
    states(first: $first, after: $after) {
      nodes { id name }
      ${PAGE_INFO}
    }
  }
}`;

/** The first project in scope and its first team: where a new issue goes. */
export const PROJECT_TEAM_QUERY = `
query LorenzProjectTeam($filter: ProjectFilter!) {
  projects(filter: $filter, first: 1) {
    nodes { id teams(first: 1) { nodes { id } } }
  }
}`;

export const ISSUE_UPDATE = `
mutation LorenzIssueUpdate($id: String!, $input: IssueUpdateInput!) {
  issueUpdate(id: $id, input: $input) {
    success
    issue { ...LorenzIssue }
  }
}
${ISSUE_FIELDS}`;

export const ISSUE_CREATE = `
mutation LorenzIssueCreate($input: IssueCreateInput!) {
  issueCreate(input: $input) {
    success
    issue { ...LorenzIssue }
  }
}
${ISSUE_FIELDS}`;
