import type { McpServer, ToolCallback } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { TrackerWriter } from '../tracker/types.js';
import { ERROR_CODE_MEANINGS, isLorenzError } from '../workflow/errors.js';
import type { RateVerdict } from './limiter.js';
import type { ResolvedRun, VerifiedRun } from './types.js';

export const TOOL_NAMES = [
  'tracker_read_issue',
  'tracker_list_comments',
  'tracker_comment',
  'tracker_update_comment',
  'tracker_update_state',
  'tracker_create_issue',
  'linear_graphql',
] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

/** The state added to the Workflow's own when it names no allowed states. */
export const REVIEW_STATE = 'In Review';

/** The tools a run is offered: create_issue only when its Workflow allows it. */
export function toolNamesFor(resolved: ResolvedRun): ToolName[] {
  return TOOL_NAMES.filter((name) => {
    if (name === 'tracker_create_issue') return resolved.createIssue;
    if (name === 'linear_graphql')
      return resolved.linearGraphql && resolved.trackerKind === 'linear';
    return true;
  });
}

/** The states tracker_update_state accepts for a run (see ResolvedRun.allowedStates). */
export function allowedStatesOf(resolved: ResolvedRun): string[] {
  const given = resolved.allowedStates;
  const states = given ?? [
    ...resolved.workflow.tracker.activeStates,
    ...resolved.workflow.tracker.terminalStates,
    REVIEW_STATE,
  ];
  const seen = new Set<string>();
  return states.filter((state) => {
    const key = stateKey(state);
    if (key === '' || seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

const stateKey = (state: string): string => state.trim().toLowerCase();

/** What one request's tool calls share; the gateway makes one per HTTP request. */
export interface ToolCallContext {
  run: VerifiedRun;
  /** The run's writer, asked for once per request and only when a tool needs it. */
  writer(): Promise<TrackerWriter | null>;
  /** The rate-limit verdict taken when the call arrived. */
  admission(requestId: string | number): RateVerdict;
  /** Tells the recorder which issue a call aimed at. */
  aimedAt(requestId: string | number, target: string): void;
}

// Long enough for any tracker's ids and for a real comment; the bounds keep a confused
// agent from pushing megabytes through to the tracker.
const issueId = z
  .string()
  .min(1)
  .max(256)
  .optional()
  .describe("The issue to act on; only the run's own issue is allowed. Default: the run's issue.");
const body = z.string().trim().min(1).max(65_536);

const SCHEMAS = {
  tracker_read_issue: { issue_id: issueId },
  tracker_list_comments: { issue_id: issueId },
  tracker_comment: { issue_id: issueId, body: body.describe('The comment text (Markdown).') },
  tracker_update_comment: {
    issue_id: issueId,
    comment_id: z.string().min(1).max(256).describe('A comment id from tracker_list_comments.'),
    body: body.describe('The new comment text (Markdown).'),
  },
  tracker_update_state: {
    issue_id: issueId,
    state: z.string().trim().min(1).max(256).describe('The name of the state to move to.'),
  },
  tracker_create_issue: {
    issue_id: issueId,
    title: z.string().trim().min(1).max(1024).describe('The new issue title.'),
    description: z.string().max(65_536).optional().describe('The new issue body (Markdown).'),
    state: z
      .string()
      .trim()
      .min(1)
      .max(256)
      .optional()
      .describe('Its state; default the tracker’s.'),
  },
  linear_graphql: {
    query: z.string().trim().min(1).max(65_536).describe('One GraphQL query or mutation.'),
    variables: z.record(z.string(), z.unknown()).optional().describe('Its variables, by name.'),
  },
} satisfies Record<ToolName, z.ZodRawShape>;

const DESCRIPTIONS: Record<ToolName, string> = {
  tracker_read_issue: 'Read the issue this run works on, as the tracker has it now.',
  tracker_list_comments: "List the comments on this run's issue.",
  tracker_comment: "Add a comment to this run's issue.",
  tracker_update_comment: "Replace the text of a comment on this run's issue.",
  tracker_update_state: "Move this run's issue to another state (only the states allowed).",
  tracker_create_issue: 'Create a new issue on the tracker (a follow-up).',
  linear_graphql:
    "Run one GraphQL operation against Linear's API with the workspace's key (the Workflow opted in; it is not limited to this run's issue).",
};

export function toolError(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

export function toolResult(value: unknown): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value) }] };
}

/**
 * The text of a failed tracker call: its code, HTTP status and the code's fixed meaning. The
 * adapter's message is left out on purpose: it comes from the tracker, and a fixed text
 * cannot carry a key or a token whatever an adapter or a proxy put in it.
 */
export function describeTrackerFailure(error: unknown): string {
  if (!isLorenzError(error)) return 'tracker call failed (unexpected error)';
  const status = error.detail?.status;
  const http = typeof status === 'number' ? `, HTTP ${status}` : '';
  return `tracker error ${error.code}${http}: ${ERROR_CODE_MEANINGS[error.code]}`;
}

type Scope = { ok: true; issueId: string; target: string } | { ok: false; target: string };

/** The run's own issue, or a refusal when `issue_id` names another one. */
function scope(resolved: ResolvedRun, requested: string | undefined): Scope {
  const own = resolved.issueIdentifier ?? resolved.issueId;
  if (requested === undefined) return { ok: true, issueId: resolved.issueId, target: own };
  const asked = requested.trim();
  const identifier = resolved.issueIdentifier?.trim().toLowerCase();
  if (asked === resolved.issueId || (identifier && asked.toLowerCase() === identifier)) {
    return { ok: true, issueId: resolved.issueId, target: own };
  }
  return { ok: false, target: asked.slice(0, 128) };
}

type Handler<S extends z.ZodRawShape> = (
  writer: TrackerWriter,
  issueId: string,
  args: z.infer<z.ZodObject<S>>,
  aimedAt: (target: string) => void,
) => Promise<CallToolResult>;

/** Registers the run's tools on a fresh McpServer. */
// eslint-disable-next-line max-lines-per-function -- one registration per tool, read as the tool list
export function registerTrackerTools(server: McpServer, context: ToolCallContext): void {
  const resolved = context.run.resolved;
  const allowed = allowedStatesOf(resolved);
  const allowedState = (state: string): string | null =>
    allowed.find((candidate) => stateKey(candidate) === stateKey(state)) ?? null;
  const refuseState = (state: string): CallToolResult =>
    toolError(`state "${state}" is not allowed; allowed: ${allowed.join(', ') || '(none)'}`);

  const register = <S extends z.ZodRawShape>(name: ToolName, handler: Handler<S>): void => {
    if (!toolNamesFor(resolved).includes(name)) return;
    // The SDK validates arguments against the shape before the callback runs and answers a
    // failure itself, as a tool error naming the field; so the cast below is safe.
    const callback: ToolCallback<z.ZodRawShape> = async (raw, extra) => {
      const args = raw as z.infer<z.ZodObject<S>>;
      const verdict = context.admission(extra.requestId);
      if (!verdict.ok) {
        return toolError(`rate limited: retry after ${verdict.retryAfterSeconds} s`);
      }
      const scoped = scope(resolved, (raw as { issue_id?: string }).issue_id);
      context.aimedAt(extra.requestId, scoped.target);
      if (!scoped.ok) {
        return toolError(`this run may only touch its own issue, not "${scoped.target}"`);
      }
      try {
        const writer = await context.writer();
        if (!writer) return toolError(`the ${resolved.trackerKind} tracker cannot be changed`);
        return await handler(writer, scoped.issueId, args, (target) =>
          context.aimedAt(extra.requestId, target),
        );
      } catch (error) {
        return toolError(describeTrackerFailure(error));
      }
    };
    server.registerTool(
      name,
      { description: DESCRIPTIONS[name], inputSchema: SCHEMAS[name] },
      callback,
    );
  };

  register<typeof SCHEMAS.tracker_read_issue>('tracker_read_issue', async (writer, id) => {
    const issue = await writer.readIssue(id);
    return issue ? toolResult(issue) : toolError('the issue is no longer on the tracker');
  });
  register<typeof SCHEMAS.tracker_list_comments>('tracker_list_comments', async (writer, id) =>
    toolResult(await writer.listComments(id)),
  );
  register<typeof SCHEMAS.tracker_comment>('tracker_comment', async (writer, id, args) =>
    toolResult(await writer.comment(id, args.body)),
  );
  register<typeof SCHEMAS.tracker_update_comment>(
    'tracker_update_comment',
    async (writer, id, args) =>
      toolResult(await writer.updateComment(id, args.comment_id, args.body)),
  );
  register<typeof SCHEMAS.tracker_update_state>(
    'tracker_update_state',
    async (writer, id, args) => {
      const state = allowedState(args.state);
      if (state === null) return refuseState(args.state);
      return toolResult(await writer.updateState(id, state));
    },
  );
  register<typeof SCHEMAS.linear_graphql>('linear_graphql', async (writer, _id, args, aimedAt) => {
    if (!writer.graphql) return toolError('this tracker takes no GraphQL');
    aimedAt('(graphql)');
    return toolResult(await writer.graphql(args.query, args.variables ?? {}));
  });
  register<typeof SCHEMAS.tracker_create_issue>(
    'tracker_create_issue',
    async (writer, _id, args, aimedAt) => {
      if (!writer.createIssue) {
        return toolError(`the ${resolved.trackerKind} tracker cannot create issues`);
      }
      const state = args.state === undefined ? null : allowedState(args.state);
      if (args.state !== undefined && state === null) return refuseState(args.state);
      aimedAt('(new issue)');
      const issue = await writer.createIssue({
        title: args.title,
        description: args.description ?? null,
        state,
      });
      aimedAt(issue.identifier);
      return toolResult(issue);
    },
  );
}
