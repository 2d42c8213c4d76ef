import { INBOX_LIMITS, type InboxDecision, type InboxRequest } from '../api/inbox.js';
import type { AgentInbox, AskInput, InboxAnswer, PermissionFacts } from '../agent/inbox.js';
import type { ApprovalsConfig } from '../workflow/approvals-config.js';
import { decideApproval } from '../workflow/approvals-policy.js';
import type { AgentEventType } from '../workflow/events.js';
import type { InboxClient } from './inbox-client.js';

/**
 * The runner's inbox (docs/approvals.md): agent.approvals decides, and an ask goes to the
 * controller over the agent-tools gateway, where it becomes a comment on the issue and waits
 * for a reply. What cannot be asked (too many asks, too many waiting, no gateway) is decided
 * at once by `on_timeout`, saying so.
 */
export interface RunnerInboxOptions {
  config: ApprovalsConfig;
  slot: number;
  /** The attempt (≥ 1): request ids are `a<attempt>-s<slot>-<n>`. */
  attempt: number;
  /** The gateway; absent (a run without tools, `lorenz run` on a laptop): nobody to ask. */
  client: InboxClient | undefined;
  emit: (type: AgentEventType, message: Record<string, unknown>) => void;
  /** A line for the runner's stderr. */
  log: (line: string) => void;
}

const MINUTE_MS = 60_000;

/** The first `max` UTF-16 units, never ending inside a surrogate pair. */
function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  const unit = text.charCodeAt(max - 1);
  return text.slice(0, unit >= 0xd800 && unit <= 0xdbff ? max - 1 : max);
}

const firstLine = (text: string): string => text.split('\n', 1)[0]?.trim() || 'a question';

/** The request as the contract bounds it (src/api/inbox.ts). */
function inboxRequest(
  base: { id: string; slot: number; attempt: number; askedAt: number; deadline: number },
  input: AskInput,
): InboxRequest {
  const times = {
    askedAt: new Date(base.askedAt).toISOString(),
    deadline: new Date(base.deadline).toISOString(),
  };
  const head = { id: base.id, slot: base.slot, attempt: base.attempt, turn: input.turn, ...times };
  if (input.kind === 'question') {
    return {
      ...head,
      kind: 'question',
      title: cut(firstLine(input.message), INBOX_LIMITS.titleLength),
      message: cut(input.message, INBOX_LIMITS.messageLength),
      options: [],
    };
  }
  const options = input.options.slice(0, INBOX_LIMITS.options).map((option) => ({
    optionId: cut(option.optionId, INBOX_LIMITS.optionTextLength),
    name: cut(option.name, INBOX_LIMITS.optionTextLength),
    kind: cut(option.kind, 64),
  }));
  const omitted = input.options.length - options.length;
  return {
    ...head,
    kind: 'permission',
    ...permissionFields(input.facts),
    options,
    ...(omitted > 0 ? { optionsOmitted: omitted } : {}),
    ...(input.verdict.rule === null ? {} : { rule: input.verdict.rule }),
    ...(input.verdict.reason === null
      ? {}
      : { ruleReason: cut(input.verdict.reason, INBOX_LIMITS.reasonLength) }),
  };
}

function permissionFields(
  facts: PermissionFacts,
): Pick<InboxRequest, 'title' | 'toolKind' | 'command' | 'paths'> {
  return {
    title: cut(facts.title, INBOX_LIMITS.titleLength),
    ...(facts.toolKind === null ? {} : { toolKind: cut(facts.toolKind, 64) }),
    ...(facts.command === null ? {} : { command: cut(facts.command, INBOX_LIMITS.commandLength) }),
    ...(facts.paths.length > 0
      ? {
          paths: facts.paths
            .slice(0, INBOX_LIMITS.paths)
            .map((path) => cut(path, INBOX_LIMITS.pathLength)),
        }
      : {}),
  };
}

/** A decision from the issue or Kubernetes, as the session takes it. */
export function answerOf(
  decision: InboxDecision,
  kind: AskInput['kind'],
  onTimeout: InboxAnswer,
): InboxAnswer {
  if (decision.verdict === 'timeout') return onTimeout;
  const common = {
    requestId: decision.requestId,
    via: decision.via,
    ...(decision.by === undefined ? {} : { by: decision.by }),
  };
  if (kind === 'question') {
    return decision.verdict === 'answer' && decision.answer !== undefined
      ? { ...common, verdict: 'answer', answer: decision.answer }
      : { ...common, verdict: 'decline', ...(decision.reason ? { reason: decision.reason } : {}) };
  }
  if (decision.verdict === 'approve' || decision.verdict === 'approve_always') {
    return { ...common, verdict: decision.verdict };
  }
  return { ...common, verdict: 'deny', ...(decision.reason ? { reason: decision.reason } : {}) };
}

/** What `on_timeout` decides for a request that got no reply (or could not be asked). */
function timeoutAnswer(
  config: ApprovalsConfig,
  requestId: string,
  kind: AskInput['kind'],
  via: InboxAnswer['via'],
  reason: string,
): InboxAnswer {
  if (kind === 'question') return { requestId, verdict: 'decline', via, reason };
  return config.onTimeout === 'allow'
    ? { requestId, verdict: 'approve', via }
    : { requestId, verdict: 'deny', via, reason };
}

// eslint-disable-next-line max-lines-per-function -- one inbox: the asks share the counter, the rate window and the pending count
export function createRunnerInbox(options: RunnerInboxOptions): AgentInbox {
  const { config, client } = options;
  const now = Date.now;
  const asked: number[] = [];
  let sequence = 0;
  let pending = 0;
  let toldUnavailable = false;
  const nextId = (): string => {
    sequence += 1;
    return `a${options.attempt}-s${options.slot}-${sequence}`;
  };

  const report: AgentInbox['report'] = (facts, turn, verdict, via) => {
    if (!client) return;
    const { deadline: _deadline, ...request } = inboxRequest(
      {
        id: nextId(),
        slot: options.slot,
        attempt: options.attempt,
        askedAt: now(),
        deadline: now(),
      },
      { kind: 'permission', turn, facts, options: [], verdict },
    );
    client.postReport({ request, outcome: verdict.action === 'deny' ? 'deny' : 'allow', via });
  };

  /** Over asks_per_minute, or INBOX_LIMITS.pending waiting: the reason, else null. */
  const overLimit = (at: number): string | null => {
    while (asked.length > 0 && (asked[0] ?? 0) <= at - MINUTE_MS) asked.shift();
    if (asked.length >= config.asksPerMinute) {
      return `more than ${config.asksPerMinute} requests for a person in a minute`;
    }
    if (pending >= INBOX_LIMITS.pending) {
      return `${INBOX_LIMITS.pending} requests are already waiting for a person`;
    }
    return null;
  };

  async function wait(
    request: InboxRequest,
    input: AskInput,
    signal: AbortSignal,
  ): Promise<InboxAnswer> {
    const deadline = Date.parse(request.deadline);
    const onTimeout = timeoutAnswer(
      config,
      request.id,
      input.kind,
      'timeout',
      `nobody answered within ${Math.round(config.timeoutMs / 1000)} s`,
    );
    if (!client) return onTimeout;
    const posted = await client.postRequest(request, deadline, signal);
    if (posted === 'refused') {
      return timeoutAnswer(
        config,
        request.id,
        input.kind,
        'unavailable',
        'the agent-tools gateway refused the request',
      );
    }
    if (posted === 'deadline') return onTimeout;
    const decision = await client.waitDecision(request, deadline, signal);
    return decision ? answerOf(decision, input.kind, onTimeout) : onTimeout;
  }

  return {
    decide: (facts) => decideApproval(config, facts),
    report,
    async ask(input, signal, onRequested) {
      signal.throwIfAborted();
      const at = now();
      const id = nextId();
      if (!client) {
        if (!toldUnavailable) {
          toldUnavailable = true;
          options.log(
            `lorenz: agent.approvals asks a person, but this run has no agent-tools gateway to ask through; on_timeout (${config.onTimeout}) decides every ask`,
          );
        }
        return timeoutAnswer(
          config,
          id,
          input.kind,
          'unavailable',
          'nobody can be asked in this run (no agent-tools gateway)',
        );
      }
      const limited = overLimit(at);
      if (limited !== null) {
        options.emit('approval_rate_limited', {
          turn: input.turn,
          requestId: id,
          kind: input.kind,
          reason: limited,
          outcome: input.kind === 'question' ? 'decline' : config.onTimeout,
        });
        if (input.kind === 'permission') {
          const verdict = {
            action: config.onTimeout,
            rule: input.verdict.rule,
            reason: input.verdict.reason,
          };
          const { deadline: _deadline, ...request } = inboxRequest(
            { id, slot: options.slot, attempt: options.attempt, askedAt: at, deadline: at },
            input,
          );
          client.postReport({ request, outcome: verdict.action, via: 'rate_limit' });
        }
        return timeoutAnswer(config, id, input.kind, 'rate_limit', limited);
      }
      asked.push(at);
      pending += 1;
      try {
        const request = inboxRequest(
          {
            id,
            slot: options.slot,
            attempt: options.attempt,
            askedAt: at,
            deadline: at + config.timeoutMs,
          },
          input,
        );
        onRequested?.(id);
        return await wait(request, input, signal);
      } finally {
        pending -= 1;
      }
    },
    takeSteers: async () => (client ? client.takeSteers(options.slot) : []),
  };
}
