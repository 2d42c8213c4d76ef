import type { AgentInbox, AskInput, InboxAnswer } from '../../../src/agent/inbox.js';
import type {
  ApprovalAction,
  ApprovalPattern,
  ApprovalRule,
  ApprovalsConfig,
} from '../../../src/workflow/approvals-config.js';
import { APPROVALS_DEFAULTS } from '../../../src/workflow/approvals-config.js';
import { decideApproval } from '../../../src/workflow/approvals-policy.js';

/** Shared set-up of the inbox tests: hand-built agent.approvals and a scripted inbox. */

/** A glob (`*` any run of characters), anchored; enough for tests. */
export function glob(source: string): ApprovalPattern {
  const escaped = source.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*');
  const regex = new RegExp(`^${escaped}$`, 's');
  return { source, test: (text) => regex.test(text) };
}

export function rule(
  index: number,
  action: ApprovalAction,
  matchers: { kinds?: string[]; title?: string; command?: string; path?: string; reason?: string },
): ApprovalRule {
  return {
    index,
    action,
    kinds: matchers.kinds ?? null,
    title: matchers.title === undefined ? null : glob(matchers.title),
    command: matchers.command === undefined ? null : glob(matchers.command),
    path: matchers.path === undefined ? null : glob(matchers.path),
    reason: matchers.reason ?? null,
  };
}

export function approvals(overrides: Partial<ApprovalsConfig> = {}): ApprovalsConfig {
  return { ...APPROVALS_DEFAULTS, rules: [], approvers: [], ...overrides };
}

export interface ScriptedInbox extends AgentInbox {
  asks: AskInput[];
  reports: { title: string; turn: number; rule: number | null; via: string; action: string }[];
  steerCalls: number;
}

/**
 * An inbox whose asks are answered by `answer` (it may wait, and sees the signal), and
 * whose steers are handed out once each from `steers`.
 */
export function scriptedInbox(
  config: ApprovalsConfig,
  answer: (
    input: AskInput,
    signal: AbortSignal,
    n: number,
  ) => Promise<Omit<InboxAnswer, 'requestId'>>,
  steers: { text: string; by?: string }[] = [],
): ScriptedInbox {
  let pendingSteers = [...steers];
  const inbox: ScriptedInbox = {
    asks: [],
    reports: [],
    steerCalls: 0,
    decide: (facts) => decideApproval(config, facts),
    async ask(input, signal, onRequested) {
      inbox.asks.push(input);
      const requestId = `a1-s0-${inbox.asks.length}`;
      onRequested?.(requestId);
      return { requestId, ...(await answer(input, signal, inbox.asks.length)) };
    },
    report(facts, turn, verdict, via) {
      inbox.reports.push({
        title: facts.title,
        turn,
        rule: verdict.rule,
        via,
        action: verdict.action,
      });
    },
    async takeSteers() {
      inbox.steerCalls += 1;
      const taken = pendingSteers;
      pendingSteers = [];
      return taken;
    },
  };
  return inbox;
}

/** A scripted inbox whose every ask gets this answer at once. */
export const answering = (
  config: ApprovalsConfig,
  answer: Omit<InboxAnswer, 'requestId'>,
): ScriptedInbox => scriptedInbox(config, async () => answer);

/** Resolves after `ms`, or rejects when the signal aborts first. */
export function waitOrAbort<T>(ms: number, signal: AbortSignal, value: T): Promise<T> {
  return new Promise((done, fail) => {
    const timer = setTimeout(() => done(value), ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        fail(new Error('aborted'));
      },
      { once: true },
    );
  });
}
