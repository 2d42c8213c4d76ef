import { escapeText } from './escape.js';
import { shortMs } from './duration.js';

/**
 * `lorenz logs`' text output: the runner's JSON lines (hook records and streamed output, git
 * steps, the agent's session updates, the run summary) as a person reads them. Lines that are
 * not Lorenz records are shown as they are. Every piece of text from the run passes
 * escapeText: nothing in a log can drive the terminal.
 */
export interface LogRenderer {
  /** The text for one log line, newline included; empty when the line shows nothing. */
  line(raw: string): string;
  /** The marker where the archive dropped part of a log over its cap. */
  elided(bytes: number): string;
  /** What is still owed at the end (a newline after hook output that had none). */
  end(): string;
}

type Json = Record<string, unknown>;

const isRecord = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const num = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) ? value : undefined;

function usageText(usage: unknown): string | undefined {
  if (!isRecord(usage)) return undefined;
  const input = num(usage.inputTokens) ?? 0;
  const output = num(usage.outputTokens) ?? 0;
  const total = num(usage.totalTokens) ?? input + output;
  return `tokens: ${input} in, ${output} out, ${total} total`;
}

/** The text of an ACP content block, or of a tool call's content list. */
function contentText(content: unknown): string | undefined {
  if (Array.isArray(content)) {
    const parts = content.map(contentText).filter((part): part is string => part !== undefined);
    return parts.length > 0 ? parts.join('\n') : undefined;
  }
  if (!isRecord(content)) return undefined;
  if (content.type === 'text') return str(content.text);
  if (content.type === 'content') return contentText(content.content);
  if (content.type === 'diff') return `diff ${str(content.path) ?? ''}`.trimEnd();
  if (content.type === 'terminal') return `terminal ${str(content.terminalId) ?? ''}`.trimEnd();
  if (content.type === 'resource_link') return `resource ${str(content.uri) ?? ''}`.trimEnd();
  return undefined;
}

function sessionUpdate(update: Json, titles: Map<string, string>): string {
  const kind = str(update.sessionUpdate) ?? '';
  switch (kind) {
    case 'agent_message_chunk':
      return contentText(update.content) ?? '';
    case 'agent_thought_chunk':
      return `thinking: ${contentText(update.content) ?? ''}`;
    case 'user_message_chunk':
      return `user: ${contentText(update.content) ?? ''}`;
    case 'tool_call': {
      const id = str(update.toolCallId) ?? '';
      const title = str(update.title) ?? id;
      titles.set(id, title);
      const kindText = str(update.kind);
      const body = contentText(update.content);
      return `→ ${title}${kindText ? ` (${kindText})` : ''}${body ? `\n${body}` : ''}`;
    }
    case 'tool_call_update': {
      const id = str(update.toolCallId) ?? '';
      const title = str(update.title) ?? titles.get(id) ?? id;
      const status = str(update.status);
      const body = contentText(update.content);
      if (!status && !body) return '';
      return `← ${title}${status ? ` ${status}` : ''}${body ? `\n${body}` : ''}`;
    }
    case 'plan': {
      const entries = Array.isArray(update.entries) ? update.entries.filter(isRecord) : [];
      const marks: Record<string, string> = { completed: 'x', in_progress: '~', pending: ' ' };
      return ['plan:']
        .concat(
          entries.map(
            (entry) => `  [${marks[str(entry.status) ?? ''] ?? ' '}] ${str(entry.content) ?? ''}`,
          ),
        )
        .join('\n');
    }
    case 'usage_update':
      return `usage: ${num(update.used) ?? '?'} of ${num(update.size) ?? '?'} context tokens`;
    case 'available_commands_update':
    case 'current_mode_update':
    case 'session_info_update':
      return '';
    default:
      return `(${kind || 'session update'})`;
  }
}

function hookLine(message: Json, streamed: boolean): string {
  const name = str(message.hookName) ?? 'hook';
  const status = str(message.status) ?? '';
  if (status === 'started') return `▶ hook ${name}: ${str(message.command) ?? ''}`.trimEnd();
  const exit = message.exitCode === null ? 'killed' : `exit ${num(message.exitCode) ?? '?'}`;
  const took = num(message.durationMs);
  const head = `■ hook ${name} ${status}: ${exit}${took === undefined ? '' : ` in ${shortMs(took)}`}`;
  // The record repeats the first 4096 characters of the output: shown only when the output
  // was not streamed as it was printed (a runner before hook_output).
  const output = streamed ? undefined : str(message.output);
  const error = str(message.error);
  return [output ? output.replace(/\n$/, '') : undefined, head, error ? `  ${error}` : undefined]
    .filter((part): part is string => part !== undefined && part !== '')
    .join('\n');
}

function recordText(record: Json, state: RenderState): string | undefined {
  const message = record.message;
  const type = str(record.type) ?? '';
  const body = isRecord(message) ? message : {};
  switch (type) {
    case 'hook_execution': {
      const key = `${num(body.slot) ?? 0}/${str(body.hookName) ?? ''}`;
      if (body.status === 'started') state.streamed.delete(key);
      return hookLine(body, state.streamed.has(key));
    }
    case 'git_workspace': {
      const took = num(body.durationMs);
      return `■ git ${str(body.step) ?? ''} ${str(body.status) ?? ''}: ${str(body.detail) ?? ''}${took === undefined ? '' : ` (${shortMs(took)})`}`;
    }
    case 'workspace_prepared':
      return `workspace ${str(body.path) ?? ''}${body.created === true ? ' (created)' : ''}`;
    case 'workspace_restored':
      return `workspace ${str(body.path) ?? ''} restored from a snapshot, digest ${str(body.digest) ?? ''} checked${typeof body.durationMs === 'number' ? ` (${shortMs(body.durationMs)})` : ''}`;
    case 'warm_up_completed':
      return warmUpLine(body);
    case 'workspace_removed':
      return `workspace ${str(body.path) ?? ''} removed`;
    case 'skills_synced':
      return `skills: ${Array.isArray(body.skills) ? body.skills.join(', ') : ''}`;
    case 'session_started': {
      const agent = isRecord(body.agent) ? str(body.agent.name) : undefined;
      return `agent session started${agent ? ` (${agent})` : ''}`;
    }
    case 'turn_started':
      return `── turn ${num(body.turn) ?? '?'} ──`;
    case 'turn_completed': {
      const usage = usageText(body.usage);
      return `turn ${num(body.turn) ?? '?'} completed (${str(body.stopReason) ?? 'done'})${usage ? `; ${usage}` : ''}`;
    }
    case 'turn_failed':
    case 'turn_cancelled':
    case 'turn_input_required': {
      const usage = usageText(body.usage);
      const what = type.replace('turn_', '').replace('_', ' ');
      return `turn ${num(body.turn) ?? '?'} ${what}: ${str(body.code) ?? ''}${body.code ? ': ' : ''}${str(body.message) ?? ''}${usage ? `; ${usage}` : ''}`;
    }
    case 'approval_required':
    case 'approval_auto_approved': {
      const call = isRecord(body.toolCall) ? body.toolCall : {};
      const title = str(call.title) ?? str(call.toolCallId) ?? 'a tool call';
      return `${type === 'approval_required' ? 'approval required' : 'auto-approved'}: ${title}`;
    }
    case 'session_notification':
      return isRecord(body.update) ? sessionUpdate(body.update, state.titles) : undefined;
    case 'stderr':
      return `stderr: ${typeof message === 'string' ? message : JSON.stringify(message)}`;
    case 'process_exit':
      return `agent exited (code ${body.exitCode === null ? 'none' : (num(body.exitCode) ?? '?')}${str(body.signal) ? `, ${str(body.signal)}` : ''})`;
    case 'malformed':
      return `malformed agent output: ${str(body.line) ?? ''}`;
    case 'run_completed': {
      const slots = Array.isArray(body.slots) ? body.slots.filter(isRecord) : [];
      const lines = [`run ${body.succeeded === true ? 'succeeded' : 'failed'}`];
      for (const slot of slots) {
        const usage = usageText(slot.usage);
        lines.push(
          `  slot ${num(slot.slot) ?? 0}: ${slot.succeeded === true ? 'succeeded' : `failed${slot.errorCode ? ` (${str(slot.errorCode)})` : ''}`}, ${num(slot.turns) ?? 0} turns${usage ? `, ${usage}` : ''}${str(slot.error) ? `\n    ${str(slot.error)}` : ''}`,
        );
      }
      return lines.join('\n');
    }
    default:
      return undefined;
  }
}

interface RenderState {
  /** `slot/hook` keys whose output arrived as hook_output records. */
  streamed: Set<string>;
  titles: Map<string, string>;
  /** The last hook output did not end its line. */
  openLine: boolean;
}

export function createLogRenderer(): LogRenderer {
  const state: RenderState = { streamed: new Set(), titles: new Map(), openLine: false };
  const close = (): string => {
    const owed = state.openLine ? '\n' : '';
    state.openLine = false;
    return owed;
  };
  return {
    line(raw) {
      let record: unknown;
      try {
        record = raw.startsWith('{') ? JSON.parse(raw) : undefined;
      } catch {
        record = undefined;
      }
      if (isRecord(record) && record.type === 'hook_output' && isRecord(record.message)) {
        const message = record.message;
        state.streamed.add(`${num(message.slot) ?? 0}/${str(message.hookName) ?? ''}`);
        const text = escapeText(str(message.text) ?? '');
        if (text === '') return '';
        // Printed as the hook printed it: a chunk may end mid-line, the next continues it.
        state.openLine = !text.endsWith('\n');
        return text;
      }
      const text = isRecord(record) ? recordText(record, state) : undefined;
      const shown = text === undefined ? raw : text;
      if (shown === '') return '';
      return `${close()}${escapeText(shown)}\n`;
    },
    elided(bytes) {
      return `${close()}… elided ${bytes} bytes …\n`;
    },
    end: close,
  };
}

/** A warm-up's last record (`lorenz runner --prepare`): what it prepared, or why not. */
function warmUpLine(body: Record<string, unknown>): string {
  const commit = str(body.commit);
  const outcome = str(body.outcome);
  if (outcome === 'prepared') {
    const took = num(body.prepareMs);
    return `warm-up prepared ${str(body.digest) ?? ''}${commit ? ` at ${commit}` : ''}: ${num(body.files) ?? 0} files${took === undefined ? '' : ` (${shortMs(took)})`}`;
  }
  if (outcome === 'unchanged') {
    return `warm-up: the default branch is still at ${commit ?? '?'}, nothing to prepare`;
  }
  if (outcome === 'moved') {
    return `warm-up: the default branch moved on to ${commit ?? '?'}, a full warm-up follows`;
  }
  return `warm-up failed (${str(body.errorCode) ?? 'runner_failed'}): ${str(body.error) ?? ''}`;
}
