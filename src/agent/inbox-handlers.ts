import type { acp } from './client.js';
import type { AgentInbox, InboxAnswer, PermissionFacts, PolicyVerdict } from './inbox.js';
import { allowOption, rejection, selected } from './permission-answer.js';
import { ASK_LIMITS, cut, permissionFacts } from './permission-facts.js';
import type { ActiveTurn, AgentEmit } from './session.js';
import { approvalRequired } from './unattended.js';

/**
 * The ACP handlers of a session with an inbox (agent.approvals, docs/approvals.md): the
 * rules decide a permission request, or a person does while the request is held open and the
 * turn's clocks are stopped; a question goes to a person the same way. A denial reaches the
 * agent twice: in the response's `_meta`, and in the next turn's prompt (`takeDenials`).
 */
export interface InboxHandlers {
  requestPermission(request: acp.RequestPermissionRequest): Promise<acp.RequestPermissionResponse>;
  requestInput(request: acp.CreateElicitationRequest): Promise<acp.CreateElicitationResponse>;
  /** The denials since the last call, as sentences for the next turn's prompt. */
  takeDenials(): string[];
}

export interface InboxHandlerContext {
  inbox: AgentInbox;
  emit: AgentEmit;
  turn(): ActiveTurn | undefined;
  /** Aborts when the run is cancelled or the session closes: a wait ends with it. */
  signal: AbortSignal;
}

type Via = InboxAnswer['via'] | 'policy' | 'always';

/** What a denial says when nobody gave a reason. */
function defaultReason(via: Via, rule: number | null, by: string | undefined): string {
  switch (via) {
    case 'policy':
    case 'always':
      return rule === null
        ? 'the approval policy denies this by default'
        : `agent.approvals rule ${rule} denies this`;
    case 'timeout':
      return 'nobody answered the request for approval in time';
    case 'rate_limit':
      return 'too many requests for approval in a minute';
    case 'unavailable':
      return 'nobody can be asked for approval in this run';
    case 'comment':
    case 'kubernetes':
      return by ? `denied by ${by}` : 'denied';
  }
}

const byPerson = (via: Via): boolean => via === 'comment' || via === 'kubernetes';

/** The key a rule's `/approve always` is remembered under (the default counts as one rule). */
const ruleKey = (rule: number | null): string => (rule === null ? 'default' : String(rule));

// eslint-disable-next-line max-lines-per-function -- the handlers share the session's memory of denials and `/approve always`
export function createInboxHandlers(context: InboxHandlerContext): InboxHandlers {
  const { inbox, emit } = context;
  const always = new Set<string>();
  let denials: string[] = [];

  const allow = (
    request: acp.RequestPermissionRequest,
    turn: ActiveTurn | undefined,
    detail: { rule: number | null; via: Via; always?: boolean; extra?: Record<string, unknown> },
  ): acp.RequestPermissionResponse => {
    const option = allowOption(request.options, detail.always === true);
    if (!option) return approvalRequired(emit, turn, request);
    const toolCall = request.toolCall.title ?? request.toolCall.toolCallId;
    const event = {
      turn: turn?.number ?? 0,
      toolCall,
      optionId: option.optionId,
      kind: option.kind,
    };
    if (detail.via === 'policy' && detail.rule === null) emit('approval_auto_approved', event);
    else
      emit('approval_allowed', { ...event, rule: detail.rule, via: detail.via, ...detail.extra });
    return selected(option);
  };

  const deny = (
    request: acp.RequestPermissionRequest,
    turn: ActiveTurn | undefined,
    facts: PermissionFacts,
    detail: {
      rule: number | null;
      via: Via;
      reason: string | null;
      by?: string | undefined;
      extra?: Record<string, unknown>;
    },
  ): acp.RequestPermissionResponse => {
    const reason = cut(
      detail.reason ?? defaultReason(detail.via, detail.rule, detail.by),
      ASK_LIMITS.reasonLength,
    );
    const toolCall = request.toolCall.title ?? request.toolCall.toolCallId;
    emit('approval_denied', {
      turn: turn?.number ?? 0,
      toolCall,
      rule: detail.rule,
      reason,
      via: detail.via,
      ...(detail.by ? { by: detail.by } : {}),
      ...detail.extra,
    });
    const who = byPerson(detail.via) ? 'A person' : 'The approval policy';
    denials.push(`${who} denied ${facts.title}: ${reason}`);
    return rejection(request.options, reason);
  };

  const decided = (
    request: acp.RequestPermissionRequest,
    turn: ActiveTurn | undefined,
    facts: PermissionFacts,
    verdict: PolicyVerdict,
  ): acp.RequestPermissionResponse => {
    const via = 'policy' as const;
    if (verdict.action === 'allow') {
      const response = allow(request, turn, { rule: verdict.rule, via });
      // The default allowing is what a run without agent.approvals does: not worth an
      // Event per tool call. A rule that allows is.
      if (response.outcome.outcome === 'selected' && verdict.rule !== null) {
        inbox.report(facts, turn?.number ?? 0, verdict, via);
      }
      return response;
    }
    inbox.report(facts, turn?.number ?? 0, verdict, via);
    return deny(request, turn, facts, { rule: verdict.rule, via, reason: verdict.reason });
  };

  const answered = (
    request: acp.RequestPermissionRequest,
    turn: ActiveTurn | undefined,
    facts: PermissionFacts,
    verdict: PolicyVerdict,
    answer: InboxAnswer,
  ): acp.RequestPermissionResponse => {
    const extra = { requestId: answer.requestId };
    const by = answer.by;
    if (answer.via === 'timeout') {
      emit('approval_timed_out', {
        turn: turn?.number ?? 0,
        requestId: answer.requestId,
        toolCall: facts.title,
        outcome: answer.verdict === 'approve' ? 'allow' : 'deny',
      });
    }
    if (answer.verdict === 'approve' || answer.verdict === 'approve_always') {
      const remember = answer.verdict === 'approve_always';
      if (remember) always.add(ruleKey(verdict.rule));
      return allow(request, turn, {
        rule: verdict.rule,
        via: answer.via,
        always: remember,
        extra: { ...extra, ...(by ? { by } : {}) },
      });
    }
    return deny(request, turn, facts, {
      rule: verdict.rule,
      via: answer.via,
      reason: answer.reason ?? null,
      by,
      extra,
    });
  };

  /** Stop the turn's clocks while `wait` runs; undefined when the run was cancelled. */
  const held = async <T>(
    turn: ActiveTurn | undefined,
    wait: () => Promise<T>,
  ): Promise<T | undefined> => {
    const resume = turn?.pause();
    try {
      return await wait();
    } catch (error) {
      if (context.signal.aborted) return undefined;
      throw error;
    } finally {
      resume?.();
      turn?.activity();
    }
  };

  return {
    async requestPermission(request) {
      const turn = context.turn();
      turn?.activity();
      const facts = permissionFacts(request.toolCall);
      const verdict = inbox.decide(facts);
      if (verdict.action !== 'ask') return decided(request, turn, facts, verdict);
      const number = turn?.number ?? 0;
      if (always.has(ruleKey(verdict.rule))) {
        const response = allow(request, turn, { rule: verdict.rule, via: 'always' });
        if (response.outcome.outcome === 'selected') inbox.report(facts, number, verdict, 'always');
        return response;
      }
      const options = request.options.map(({ optionId, name, kind }) => ({ optionId, name, kind }));
      const answer = await held(turn, () =>
        inbox.ask(
          { kind: 'permission', turn: number, facts, options, verdict },
          context.signal,
          (requestId) =>
            emit('approval_requested', { turn: number, requestId, toolCall: facts.title, options }),
        ),
      );
      if (!answer) return { outcome: { outcome: 'cancelled' } };
      return answered(request, turn, facts, verdict, answer);
    },

    async requestInput(request) {
      const turn = context.turn();
      turn?.activity();
      const number = turn?.number ?? 0;
      const message = cut(request.message, ASK_LIMITS.messageLength);
      const answer = await held(turn, () =>
        inbox.ask({ kind: 'question', turn: number, message }, context.signal, (requestId) =>
          emit('input_requested', { turn: number, requestId, message }),
        ),
      );
      if (!answer) return { action: 'cancel' };
      const accepted = answer.verdict === 'answer' && answer.answer !== undefined;
      emit('input_answered', {
        turn: number,
        requestId: answer.requestId,
        action: accepted ? 'accept' : 'decline',
        via: answer.via,
        ...(answer.by ? { by: answer.by } : {}),
      });
      if (!accepted) return { action: 'decline' };
      return { action: 'accept', content: { [answerField(request)]: answer.answer ?? '' } };
    },

    takeDenials() {
      const taken = denials;
      denials = [];
      return taken;
    },
  };
}

/** The form field an answer fills: the schema's first string property, else `answer`. */
function answerField(request: acp.CreateElicitationRequest): string {
  const schema = (request as { requestedSchema?: acp.ElicitationSchema }).requestedSchema;
  const properties = Object.entries(schema?.properties ?? {});
  return properties.find(([, property]) => property.type === 'string')?.[0] ?? 'answer';
}
