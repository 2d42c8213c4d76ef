import type { acp } from './client.js';
import type { PermissionFacts } from './inbox.js';

/**
 * What a permission request is about, for the approval rules (docs/approvals.md), bounded so
 * an agent cannot make a request (or the comment it becomes) arbitrarily long.
 *
 * Where the bridges put the command and the paths, as read from their sources:
 * - claude-agent-acp (dist/acp-agent.js, dist/tools.js): `rawInput` is Claude Code's tool
 *   input as is. Bash: `{command, description?, timeout?}` (the title is the command too);
 *   Edit/Write/Read: `{file_path, …}` (also in `locations`); NotebookEdit: `{notebook_path}`;
 *   Glob/Grep/LS: `{path?, pattern}`.
 * - codex-acp ships a native binary (no readable source in node_modules); upstream, its exec
 *   approvals put codex's ExecApprovalRequestEvent in `rawInput`, whose `command` is argv (a
 *   string list), and its patch approvals name the files in `locations`. So a string list is
 *   joined with spaces, and for kind `execute` without a command the title stands in.
 */

/**
 * The bounds of what the session hands the inbox: INBOX_LIMITS of src/api/inbox.ts (a layer
 * above the agent's, so not imported; a test keeps the two equal). The runner bounds again.
 */
export const ASK_LIMITS = {
  titleLength: 1024,
  commandLength: 4096,
  pathLength: 1024,
  paths: 16,
  messageLength: 4096,
  reasonLength: 2048,
} as const;

/** The first `max` UTF-16 units of a text, never ending inside a surrogate pair. */
export function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  const unit = text.charCodeAt(max - 1);
  return text.slice(0, unit >= 0xd800 && unit <= 0xdbff ? max - 1 : max);
}

const PATH_KEYS = ['file_path', 'path', 'notebook_path'] as const;

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

function commandOf(raw: Record<string, unknown>): string | null {
  const command = raw.command;
  if (typeof command === 'string') return command;
  if (Array.isArray(command) && command.every((word) => typeof word === 'string')) {
    return command.length > 0 ? command.join(' ') : null;
  }
  return null;
}

/** The facts of a tool call; `title` falls back to the tool call id. */
export function permissionFacts(toolCall: acp.ToolCallUpdate): PermissionFacts {
  const raw = record(toolCall.rawInput);
  const toolKind = toolCall.kind ?? null;
  const title = cut(toolCall.title ?? toolCall.toolCallId, ASK_LIMITS.titleLength);
  const command = commandOf(raw) ?? (toolKind === 'execute' ? title : null);
  const found = [
    ...(toolCall.locations ?? []).map((location) => location.path),
    ...PATH_KEYS.map((key) => raw[key]),
  ].filter((path): path is string => typeof path === 'string' && path !== '');
  const paths = [...new Set(found)]
    .slice(0, ASK_LIMITS.paths)
    .map((path) => cut(path, ASK_LIMITS.pathLength));
  return {
    toolKind,
    title,
    command: command === null ? null : cut(command, ASK_LIMITS.commandLength),
    paths,
  };
}
