// GitHub's GraphQL endpoint as far as the code host uses it: the one mutation that takes a
// pull request out of draft (REST has no way to). The schema below is the part of GitHub's
// public schema that mutation touches, with GitHub's names and types, so a query that
// misspells a field or a type fails validation here as it would there; graphql-js runs it.
import { type GraphQLSchema, buildSchema, graphql } from 'graphql';
import { nodeId } from './github-code-data.js';
import type { PullState } from './github-pulls.js';

const SCHEMA = `
  type Query {
    viewer: User!
  }
  type User {
    login: String!
  }
  enum PullRequestState {
    OPEN
    CLOSED
    MERGED
  }
  type PullRequest {
    id: ID!
    number: Int!
    isDraft: Boolean!
    state: PullRequestState!
    url: String!
  }
  input MarkPullRequestReadyForReviewInput {
    clientMutationId: String
    pullRequestId: ID!
  }
  type MarkPullRequestReadyForReviewPayload {
    clientMutationId: String
    pullRequest: PullRequest
  }
  type Mutation {
    markPullRequestReadyForReview(
      input: MarkPullRequestReadyForReviewInput!
    ): MarkPullRequestReadyForReviewPayload
  }
`;

let schema: GraphQLSchema | undefined;

export interface GraphqlAnswer {
  status: number;
  body: unknown;
  /** What was wrong with the request itself (a query GitHub would refuse). */
  violations: string[];
}

/** Runs one GraphQL request against the stand-in's pull requests. */
export async function graphqlAnswer(state: PullState, body: unknown): Promise<GraphqlAnswer> {
  schema ??= buildSchema(SCHEMA);
  const request =
    typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  if (typeof request.query !== 'string') {
    return {
      status: 400,
      body: {
        message: 'Problems parsing JSON',
        documentation_url: 'https://docs.github.com/graphql',
      },
      violations: ['POST /graphql: no query'],
    };
  }
  const variables =
    typeof request.variables === 'object' && request.variables !== null
      ? (request.variables as Record<string, unknown>)
      : undefined;
  const rootValue = {
    viewer: () => ({ login: state.login ?? 'lorenz-app[bot]' }),
    markPullRequestReadyForReview: (args: { input: { pullRequestId: string } }) => {
      const id = args.input.pullRequestId;
      const pull = state.pullList.find((candidate) => nodeId('PR', candidate.number) === id);
      if (pull === undefined) {
        throw new Error(`Could not resolve to a node with the global id of '${id}'`);
      }
      if (pull.state === 'open') pull.draft = false;
      return {
        pullRequest: {
          id,
          number: pull.number,
          isDraft: pull.draft,
          state: pull.merged ? 'MERGED' : pull.state.toUpperCase(),
          url: `https://github.com/${state.repository}/pull/${pull.number}`,
        },
      };
    },
  };
  const result = await graphql({
    schema,
    source: request.query,
    rootValue,
    variableValues: variables,
  });
  const ran = 'data' in result && result.data !== undefined && result.data !== null;
  const errors = (result.errors ?? []).map((error) => ({ message: error.message }));
  // GitHub answers a query that does not validate with 200 and errors, and no data.
  return {
    status: 200,
    body: errors.length > 0 ? { data: ran ? result.data : null, errors } : { data: result.data },
    violations: ran ? [] : errors.map((error) => `POST /graphql: ${error.message}`),
  };
}
